"""Hidden tests for the recall task: the reply is the one code, checked exactly."""
import pathlib
import re

from _answer import ANSWER, NEAR_MISS_CODES


def reply() -> str:
    path = pathlib.Path.cwd() / "reply.md"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    assert text.strip(), "reply.md is empty"
    return text.strip()


def test_reply_is_a_single_code_and_nothing_else():
    assert re.fullmatch(r"[A-Z0-9]{4}-[A-Z0-9]{4}", reply()), "reply.md must hold only the code"


def test_reply_is_not_a_near_miss():
    assert reply() not in NEAR_MISS_CODES, "the code of another locker (same number or a neighbour)"


def test_reply_is_the_code_of_the_asked_locker():
    assert reply() == ANSWER
