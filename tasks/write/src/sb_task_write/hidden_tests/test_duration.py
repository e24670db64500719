"""Hidden tests for parse_duration: many cases, not one."""
import random

import pytest

from duration import parse_duration

UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


@pytest.mark.parametrize("text, seconds", [("45s", 45), ("2m", 120), ("3h", 10800), ("1d", 86400)])
def test_single_unit(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text, seconds", [
    ("1h30m", 5400), ("1d2h3m4s", 93784), ("2d30s", 172830), ("0h5m", 300),
    ("90m", 5400), ("007s", 7), ("0s", 0), ("100000d", 8_640_000_000),
])
def test_combined_units(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text, seconds", [("  1h  ", 3600), ("\t5m\n", 300)])
def test_surrounding_whitespace_is_ignored(text, seconds):
    assert parse_duration(text) == seconds


def test_returns_a_plain_int():
    value = parse_duration("1h1s")
    assert type(value) is int and value == 3601


@pytest.mark.parametrize("text", ["", "   ", "abc", "10", "1x", "h", "1h 30m", "5 m",
                                  "-5m", "+5m", "1.5h", "1h,30m"])
def test_rejects_malformed(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["", "   "])
def test_rejects_empty(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["30m1h", "1s1m", "2h1d", "5s4d"])
def test_rejects_units_out_of_order(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["1h1h", "5m10m", "1d2h2h"])
def test_rejects_repeated_unit(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["1h30mx", "x1h", "1h30m!", "1h\n2m"])
def test_rejects_garbage_around_components(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["1H", "2D", "3M", "1h30S"])
def test_rejects_uppercase_units(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["\u0661h", "2\u0663m"])  # ARABIC-INDIC digits are not ASCII 0-9
def test_rejects_non_ascii_digits(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_compositions_match_brute_force(seed):
    """Independent oracle: build strings from random (unit, value) picks and add them up by hand."""
    rng = random.Random(seed)
    for _ in range(200):
        picked = [unit for unit in UNITS if rng.random() < 0.5] or [rng.choice(UNITS)]
        text, expected = "", 0
        for letter, scale in picked:
            value = rng.randrange(0, 1000)
            text += str(value).zfill(rng.randrange(1, 5)) + letter
            expected += value * scale
        assert parse_duration(text) == expected, text
