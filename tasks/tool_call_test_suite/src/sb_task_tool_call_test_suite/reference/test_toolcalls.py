"""Tests for toolcalls.parse_tool_calls: every text is compared, value by value and type by
type, with a model that tries json.loads on the text between every opening tag and every
later closing tag."""
import json

import pytest

from toolcalls import parse_tool_calls

OPEN, CLOSE = "<tool_call>", "</tool_call>"


def typed(value):
    """Scalars by type and repr (True, 1 and 1.0 differ; so do 0.0 and -0.0); dicts unordered."""
    if type(value) is dict:
        return ("dict", sorted((k, typed(v)) for k, v in value.items()))
    if type(value) in (list, tuple):
        return (type(value).__name__, [typed(v) for v in value])
    return (type(value).__name__, repr(value))


def refuse(name):
    raise ValueError(name)


def call_in(body):
    try:
        value = json.loads(body, parse_constant=refuse)
    except ValueError:
        return None
    if type(value) is dict and type(value.get("name")) is str and type(value.get("arguments")) is dict:
        return {"name": value["name"], "arguments": value["arguments"]}
    return None


def model(text):
    content, calls, at = "", [], 0
    while at < len(text):
        if text.startswith(OPEN, at):
            ends = [e for e in range(at + len(OPEN), len(text)) if text.startswith(CLOSE, e)]
            found = next(((call, e) for e in ends if (call := call_in(text[at + len(OPEN):e])) is not None), None)
            if found is not None:
                calls.append(found[0])
                at = found[1] + len(CLOSE)
                continue
        content += text[at]
        at += 1
    return content, calls


def check(text):
    assert typed(parse_tool_calls(text)) == typed(model(text)), text


def wrap(body, before="", after=""):
    return OPEN + before + body + after + CLOSE


F = '{"name": "f", "arguments": %s}'

TEXTS = [
    "", "no call at all",
    "Let me look.\n" + wrap(F % '{"city": "Paris", "days": 3}') + "\n",
    "  a " + wrap(F % "{}") + " b " + wrap(F % '{"x": [1, 2.5, null, true, false]}') + " c  ",
    wrap(F % "{}", " \t\r\n", " \t\r\n"),
    wrap(F % "{}", "\x0c"), wrap(F % "{}", "", "\x0b"), wrap(F % "{}", "\u00a0"), wrap(F % "{}", "", "\u2028"),
    wrap(F % '{"x": NaN}'), wrap(F % '{"x": [-Infinity, Infinity]}'),
    wrap(F % '{"code": "a\nb"}'), wrap(F % '{"code": "a\tb"}'), wrap(F % '{"code": "a\\nb\\t\\u001f"}'),
    wrap(F % '{"a": 1, "a": 2}'), wrap('{"name": "f", "name": "g", "arguments": {}}'),
    "<TOOL_CALL>" + F % "{}" + "</TOOL_CALL>", wrap(F % "{}")[:-len(CLOSE)] + "</Tool_Call>",
    wrap(F % '{"html": "</tool_call>"}'), wrap(F % '{"s": "}{"}'), wrap(F % '{"s": "\\"}"}'),
    wrap('{"name": "", "arguments": {}}'), wrap('{"name": 5, "arguments": {}}'), wrap('{"arguments": {}}'),
    wrap('{"name": "f"}'), wrap(F % '"{\\"a\\": 1}"'), wrap(F % "[1]"), wrap('[{"name": "f", "arguments": {}}]'),
    wrap('{"name": "f", "arguments": {}, "id": 7}'),
    wrap(F % '{"n": 12345678901234567891, "m": -9007199254740993}'),
    wrap(F % '{"a": 1.0, "b": 1e2, "c": -0.0, "d": -0, "e": 2E-3, "f": 1e400}'),
    wrap(F % '{"n": \uff11\uff12}'), wrap(F % '{"n": 1\u0663}'), wrap(F % '{"n": 01}'), wrap(F % '{"n": +1}'),
    wrap(F % '{"s": "\\u0041\\u00e9\\u00E9"}'), wrap(F % '{"s": "\\u+041"}'), wrap(F % '{"s": "\\u0_41"}'),
    wrap(F % '{"s": "\\u 41 "}'), wrap(F % '{"s": "\\u12G4"}'),
    wrap(F % '{"s": "\\ud83d\\ude00 \\ud83d\\u0041"}'), wrap(F % '{"s": "\\ude00\\ud83d"}'),
    OPEN + F % "{}", OPEN + F % "{}" + " \n", wrap(F % "{}", "", " x"), wrap(F % "{}", "", ","),
    wrap(F % "{},"), "a " + wrap("oops") + " b " + wrap(F % "{}") + " c",
    OPEN + '{"name": "g", ' + wrap(F % "{}"), OPEN + wrap(F % "{}") + CLOSE,
    wrap(F % '{"x": "<tool_call>"}') + CLOSE, "<" + wrap(F % "{}") + ">", "x</tool_call>y<tool_call",
]


@pytest.mark.parametrize("text", TEXTS)
def test_against_the_model(text):
    check(text)


def test_literal_results():
    # written out by hand, so that the model itself is checked
    assert parse_tool_calls("hi " + wrap(F % '{"a": 1}', "\n", "\n") + "!") == ("hi !", [{"name": "f", "arguments": {"a": 1}}])
    assert parse_tool_calls(wrap(F % '{"x": NaN}')) == (wrap(F % '{"x": NaN}'), [])
    got = parse_tool_calls(wrap(F % '{"n": 12345678901234567891, "f": 1.0}'))[1][0]["arguments"]
    assert (type(got["n"]), got["n"], type(got["f"])) == (int, 12345678901234567891, float)
    text = OPEN + '{"name": "g", ' + wrap(F % "{}")
    assert parse_tool_calls(text) == (OPEN + '{"name": "g", ', [{"name": "f", "arguments": {}}])
