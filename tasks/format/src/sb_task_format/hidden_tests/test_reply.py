"""Hidden tests for the format task: one JSON object, the schema, and the stated rules."""
import json

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


def test_title_is_one_line_and_steps_are_not_blank():
    value = record()
    assert "\n" not in value["title"] and "\r" not in value["title"]
    assert all(step.strip() for step in value["steps"])


def test_independent_stdlib_parse_agrees():
    """Independent of jsonschema: the stdlib parse of the whole reply gives the same keys."""
    value = record()
    assert sorted(json.loads(reply_text())) == sorted(SCHEMA["required"])
    assert set(value) == set(SCHEMA["properties"])
