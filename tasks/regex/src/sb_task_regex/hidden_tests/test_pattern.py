"""Hidden tests for PATTERN, a regex for exactly one JSON string literal (re.fullmatch, no flags)."""
import json
import random
import re

import pytest

import pattern

VALID = [
    '""',
    '"hello"',
    '"with spaces and punctuation: ,;!?"',
    '"quote \\" inside"',
    '"backslash \\\\ inside"',
    '"\\/ escaped slash and / plain slash"',
    '"\\b\\f\\n\\r\\t"',
    '"\\u00e9 and \\u00E9 and \\uABCD"',
    '"\\uD83D\\uDE00"',
    '"caf\u00e9 \U0001F600"',
    '"it\'s got \'single\' quotes"',
    '"DEL \x7f is not a control character here"',
    '"C1 controls \x80 \x85 \x9f are allowed as is"',
    '"line and paragraph separators \u2028 \u2029 are allowed as is"',
    '"a lone surrogate \ud800 and \udfff are characters too"',
    '"\\u12345: four hex digits, then a plain 5"',
    '"\\uAbCd mixed case \\uabcd \\uABCD"',
    '"\\uD800 lone high and \\uDC00 lone low surrogate escapes"',
    '"\\\\"',
    '"\\\\\\\\"',
    '"space \x20 and tilde ~ and open brace {"',
]

INVALID = [
    '',
    '"',
    'hello',
    "'single quoted'",
    '"unterminated',
    'no opening quote"',
    '"a" "b"',
    '"a"b"',
    '"bad \\x escape"',
    '"backslash space \\ "',
    '"short \\u12"',
    '"not hex \\u00G0"',
    '"capital \\U0041"',
    '"raw\nnewline"',
    '"raw\ttab"',
    '"nul \x00"',
    '"ends with an escaped quote\\"',
    ' "leading space"',
    '"trailing space" ',
    '"trailing newline"\n',
    '"\\\'single-quote escape\\\'"',
    '"vertical tab escape \\v"',
    '"nul escape \\0"',
    '"capital escapes \\N \\B \\T"',
    '"arabic-indic hex \\u\u0660\u0660\u0664\u0661"',
    '"fullwidth hex \\u\uff10\uff10\uff14\uff11"',
    '"signed hex \\u+123"',
    '"escaped newline \\\n"',
    '"unit separator \x1f"',
    '"escape \x01"',
    '"\u201cfancy quotes\u201d are not quotes\u201d',
]


_COMPILED = []


def compiled():
    """The solver's PATTERN, read once from the solution's process (by value: a str) and
    compiled here with no flags, exactly as the prompt says it is used."""
    if not _COMPILED:
        value = pattern.PATTERN
        assert type(value) is str, f"PATTERN must be a str, not {type(value).__name__}"
        _COMPILED.append(re.compile(value))
    return _COMPILED[0]


def matches(text: str) -> bool:
    return compiled().fullmatch(text) is not None


def is_json_string_literal(text: str) -> bool:
    """Independent oracle: Python's json parser (strict: raw control characters rejected)."""
    if not (text.startswith('"') and text.endswith('"')):
        return False
    try:
        return isinstance(json.loads(text), str)
    except ValueError:
        return False


def test_pattern_is_a_string():
    assert type(pattern.PATTERN) is str
    re.compile(pattern.PATTERN)


@pytest.mark.parametrize("text", VALID)
def test_matches_valid_literal(text):
    assert is_json_string_literal(text)  # guards the case list against the oracle
    assert matches(text)


@pytest.mark.parametrize("text", INVALID)
def test_rejects_invalid_literal(text):
    assert not is_json_string_literal(text)
    assert not matches(text)


TOKENS = ['a', 'Z', ' ', '/', "'", '"', '\\', '\\"', '\\\\', '\\/', '\\n', '\\t', '\\b', '\\x',
          '\\u00e9', '\\uBEEF', '\\u12', '\\u00G0', '\\U0041', '\\ ', '\n', '\x01', '\x1f',
          '\x7f', '\u00e9', '\U0001F600', '\x85', '\u2028', '\ud800', "\\'", '\\v', '\\N', '\\0',
          '\\uAbCd', '\\uD800', '\\u\u0660\u0660\u0664\u0661', '\\u\uff10\uff10\uff10\uff11', '5', 'f']


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_battery_agrees_with_json_parser(seed):
    rng = random.Random(seed)
    agreed_valid = 0
    for _ in range(1500):
        body = "".join(rng.choice(TOKENS) for _ in range(rng.randrange(0, 6)))
        text = rng.choice(['"', '"', '"', '', "'"]) + body + rng.choice(['"', '"', '"', '', ' '])
        expected = is_json_string_literal(text)
        assert matches(text) == expected, repr(text)
        agreed_valid += expected
    assert agreed_valid > 100  # the battery must hold many valid literals, not only junk
