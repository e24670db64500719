"""Replies that keep the contract in ways the reference does not (key order, layout, line
endings, escapes, the longest title allowed) must pass every hidden test: the strict parse
must not be stricter than prompt.md. Runs without a model."""
import importlib.util
import json
import pathlib
import sys

import pytest

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1] / "src" / "sb_task_format"


def _load(name, filename):
    spec = importlib.util.spec_from_file_location(name, PACKAGE_DIR / "hidden_tests" / filename)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


contract = _load("sb_task_format_contract", "_contract.py")
sys.modules["_contract"] = contract  # what the hidden test module imports
hidden = _load("sb_task_format_hidden_tests", "test_reply.py")

REFERENCE = json.loads((PACKAGE_DIR / "reference" / "reply.md").read_text(encoding="utf-8"))


def _variant(**changes):
    value = dict(REFERENCE)
    value.update(changes)
    return value


VARIANTS = {
    "compact_one_line": json.dumps(REFERENCE, separators=(",", ":")),
    "keys_reversed": json.dumps(dict(reversed(list(REFERENCE.items()))), indent=4),
    "crlf_line_endings": json.dumps(REFERENCE, indent=2).replace("\n", "\r\n") + "\r\n",
    "tabs_and_blank_lines_around": "\n\n\t" + json.dumps(REFERENCE, indent="\t") + "\n\n\n",
    "ascii_escapes": json.dumps(_variant(title="Uploads over 2\u00a0GiB are truncated to 2\u2009GiB"), ensure_ascii=True),
    "title_of_80_characters": json.dumps(_variant(
        title="Uploads larger than 2 GiB are silently truncated to 2147483647 bytes when stored")),
    "title_of_one_character": json.dumps(_variant(title="!")),
    "one_step_only": json.dumps(_variant(steps=[
        "On 3.2.x, upload a file over 2 GiB with the web uploader, then download it and compare checksums"])),
    "more_detailed_steps": json.dumps(_variant(steps=[
        "Run the server on 3.2.0 or 3.2.1", "Open the web uploader in Chrome or Firefox",
        "Upload a 3 GiB file and wait for the green tick", "Download the stored file again",
        "Compare its size and checksum with the original"])),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_passes_every_hidden_test(name, monkeypatch):
    text = VARIANTS[name]
    monkeypatch.setattr(contract, "reply_text", lambda: text)
    monkeypatch.setattr(hidden, "reply_text", lambda: text)
    tests = [getattr(hidden, n) for n in dir(hidden) if n.startswith("test_")]
    assert len(tests) >= 10
    for test in tests:
        test()


def test_title_variant_lengths():
    assert len(json.loads(VARIANTS["title_of_80_characters"])["title"]) == 80
