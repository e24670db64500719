"""Hidden tests for the format task: one JSON object, the schema, and the stated rules."""
import json
import re

import jsonschema

from _contract import SCHEMA, parse_strictly, record, reply_text


def test_reply_is_exactly_one_json_object():
    parse_strictly(reply_text())


def test_reply_matches_schema():
    record()


def test_schema_is_itself_valid():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert reply_text().strip(), "reply.md is empty"


def test_component():
    assert record()["component"] == "storage"


def test_severity_follows_the_stated_rule():
    assert record()["severity"] == "critical"  # a stored file is silently corrupted


def test_affected_versions_exactly_and_in_order():
    assert record()["affected_versions"] == ["3.2.0", "3.2.1"]


def test_regression_flag():
    assert record()["regression"] is True  # 3.1.4 worked


# Unicode's line terminators: LF, VT, FF, CR, NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR.
LINE_BREAKS = re.compile("[\n\x0b\x0c\r\x85\u2028\u2029]")


def test_title_is_one_line_and_not_blank():
    title = record()["title"]
    assert not LINE_BREAKS.search(title), f"the title has a line break: {title!r}"
    assert title.strip(), "the title is blank"
    assert 1 <= len(title) <= 80  # characters are code points (a JSON \\u escape is one)


def test_steps_are_not_blank():
    steps = record()["steps"]
    assert isinstance(steps, list) and steps and all(isinstance(s, str) for s in steps)
    assert all(step.strip() for step in steps), f"a blank step: {steps!r}"


def test_steps_reproduce_in_order():
    """The report's reproduction, in its order: the upload comes before the check of the
    stored file (downloading it, comparing its size or checksum)."""
    text = "\n".join(record()["steps"]).lower()
    upload = text.find("upload")
    check = min((i for i in (text.find(w, max(upload, 0)) for w in ("download", "compare", "checksum", "size"))
                 if i >= 0), default=-1)
    assert upload >= 0, "no step uploads a file"
    assert check > upload, "no step after the upload checks the stored file"
    first_check = min((i for i in (text.find(w) for w in ("download", "compare", "checksum")) if i >= 0),
                      default=len(text))
    assert upload < first_check, "the stored file is checked before anything is uploaded"


def test_independent_stdlib_parse_agrees():
    """Independent of jsonschema: the stdlib parse of the whole reply gives the same keys."""
    value = record()
    assert sorted(json.loads(reply_text())) == sorted(SCHEMA["required"])
    assert set(value) == set(SCHEMA["properties"])
