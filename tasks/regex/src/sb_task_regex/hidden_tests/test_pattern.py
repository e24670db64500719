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
]


def matches(text: str) -> bool:
    assert isinstance(pattern.PATTERN, str), "PATTERN must be a str"
    return re.fullmatch(pattern.PATTERN, text) is not None


def is_json_string_literal(text: str) -> bool:
    """Independent oracle: Python's json parser (strict: raw control characters rejected)."""
    if not (text.startswith('"') and text.endswith('"')):
        return False
    try:
        return isinstance(json.loads(text), str)
    except ValueError:
        return False


def test_pattern_is_a_string():
    assert isinstance(pattern.PATTERN, str)
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
          '\x7f', '\u00e9', '\U0001F600']


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
