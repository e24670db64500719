"""Replies the prompt allows (surrounding whitespace, a final newline or none, CRLF) pass
every hidden test. Runs without a model."""
import importlib.util
import pathlib
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "src" / "sb_task_recall"


def _load(name, filename):
    spec = importlib.util.spec_from_file_location(name, PACKAGE / "hidden_tests" / filename)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


answer = _load("sb_task_recall_answer_module", "_answer.py")
sys.modules["_answer"] = answer  # what the hidden test module imports
hidden = _load("sb_task_recall_hidden_tests", "test_reply.py")


@pytest.mark.parametrize("text", ["{}", "{}\n", "  {}  \n", "\n\n{}\n\n", "\r\n{}\r\n", "\t{}\n"])
def test_allowed_layout_passes_every_hidden_test(text, tmp_path, monkeypatch):
    (tmp_path / "reply.md").write_text(text.format(answer.ANSWER), encoding="utf-8", newline="")
    monkeypatch.chdir(tmp_path)
    tests = [getattr(hidden, n) for n in dir(hidden) if n.startswith("test_")]
    assert len(tests) == 3
    for test in tests:
        test()
