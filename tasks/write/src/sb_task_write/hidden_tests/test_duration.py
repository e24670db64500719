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


# Every character str.isspace() accepts (the prompt's definition of whitespace), found by
# brute force over all code points rather than listed by hand.
WHITESPACE = "".join(c for c in map(chr, range(0x110000)) if c.isspace())


@pytest.mark.parametrize("text, seconds", [
    ("\r\n1h\r\n", 3600), ("\x0b5m\x0c", 300), ("\u00a090m\u3000", 5400),
    ("\u20281d\u2029", 86400), ("\x1c5s\x1f", 5), ("\x852h\u202f", 7200), ("\u1680\u20001s\u205f", 1),
])
def test_unicode_whitespace_around_is_ignored(text, seconds):
    assert parse_duration(text) == seconds


def test_every_whitespace_character_is_stripped():
    for char in WHITESPACE:
        assert parse_duration(char + "1h" + char * 2) == 3600, hex(ord(char))


@pytest.mark.parametrize("text", ["1h\u00a030m", "1h\r30m", "1\u3000h", "1h\t30m", "1\u2028h",
                                  "1d\x0c2h", "1\x1cs"])
def test_whitespace_inside_is_rejected(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["\u200b1h", "1h\u200b", "\ufeff1h", "1h\ufeff", "\x001h", "1h\x00"])
def test_characters_that_are_not_whitespace_are_not_stripped(text):
    """Zero-width space, BOM and NUL look blank but str.isspace() is false for them."""
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["1_000s", "1_0h", "0x10s", "1e3s", "1,000s", "١٠s", "1h3_0m"])
def test_rejects_python_int_syntax(text):
    """int() accepts underscores and non-ASCII digits; the format does not."""
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["\uff11h", "1\uff10m", "\u0966s", "\u00b2h", "1\u2070m"])
def test_rejects_other_unicode_digit_forms(text):
    """Fullwidth, Devanagari and superscript digits are not the ASCII digits 0-9."""
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["1hm", "m", "d1h", "1hs", "1d2h3m4", "1h30", "5m5"])
def test_rejects_unit_without_number_or_number_without_unit(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text, seconds", [
    ("123456789012345678901234567890s", 123456789012345678901234567890),
    ("99999999999999999999d", 99999999999999999999 * 86400),
    ("9007199254740993s", 9007199254740993),  # 2**53 + 1: the first integer a float cannot hold
    ("1d" "0000000000000000000000000001s", 86401),
])
def test_large_values_are_exact(text, seconds):
    value = parse_duration(text)
    assert type(value) is int and value == seconds


@pytest.mark.parametrize("text", ["0s", "0d0h0m0s", "00000m"])
def test_zero_is_a_plain_int(text):
    value = parse_duration(text)
    assert type(value) is int and value == 0


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


@pytest.mark.parametrize("seed", [3, 4])
def test_random_whitespace_placement_matches_brute_force(seed):
    """Independent oracle: whitespace from the full str.isspace() set is fine around the
    duration and wrong anywhere between its first and last character."""
    rng = random.Random(seed)
    for _ in range(150):
        picked = [unit for unit in UNITS if rng.random() < 0.5] or [rng.choice(UNITS)]
        body, expected = "", 0
        for letter, scale in picked:
            value = rng.randrange(0, 10**rng.randrange(1, 25))
            body += str(value) + letter
            expected += value * scale
        outside = lambda: "".join(rng.choice(WHITESPACE) for _ in range(rng.randrange(0, 3)))  # noqa: E731
        assert parse_duration(outside() + body + outside()) == expected, body
        cut = rng.randrange(1, len(body))
        broken = outside() + body[:cut] + rng.choice(WHITESPACE) + body[cut:] + outside()
        with pytest.raises(ValueError):
            parse_duration(broken)
