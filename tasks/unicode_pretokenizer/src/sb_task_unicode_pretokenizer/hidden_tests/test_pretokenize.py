"""Hidden tests for unicode_pretokenizer.

Expected pieces come from two places, neither of them the reference: literal lists written
by hand from the prompt's rules (the examples below), and _oracle.pretokenize, a rule-by-rule
transcription of the prompt that classifies characters with unicodedata.category in this
(the judge's) process. The random texts (_texts.py) use only characters whose category is
the same in every Python from 3.9 to 3.13, so the worker's unicodedata agrees with ours.
Everything is exact string equality: there is no tolerance anywhere.
"""
import random

import pytest

import _oracle
from _texts import random_text, random_texts
from pretokenize import pretokenize


def pieces(text):
    got = pretokenize(text)
    assert type(got) is list, f"pretokenize returned {type(got).__name__}, not list"
    assert all(type(p) is str for p in got), f"not every piece is a str: {got!r}"
    return got


def assert_matches_oracle(text):
    got = pieces(text)
    want = _oracle.pretokenize(text)
    assert got == want, f"text {text!r}:\n got  {got!r}\n want {want!r}"


def _check(text, want):
    assert want == _oracle.pretokenize(text), "the hand-written expectation disagrees with the oracle"
    got = pieces(text)
    assert got == want, f"text {text!r}:\n got  {got!r}\n want {want!r}"


def test_empty_text_gives_no_pieces():
    assert pieces("") == []


@pytest.mark.parametrize("text, want", [
    ("Hello world", ["Hello", " world"]),
    ("na\u00efve caf\u00e9", ["na\u00efve", " caf\u00e9"]),
    ("\u01c5ungla \u02b0x", ["\u01c5ungla", " \u02b0x"]),
    ("\u4e2d\u6587 \u05e9\u05dc\u05d5\u05dd", ["\u4e2d\u6587", " \u05e9\u05dc\u05d5\u05dd"]),
    ("\U0001d400\U0001d401 \U0001d465", ["\U0001d400\U0001d401", " \U0001d465"]),
])
def test_letters_run_with_an_optional_leading_space(text, want):
    _check(text, want)


@pytest.mark.parametrize("text, want", [
    # CJK numerals are category Lo: letters, even though str.isnumeric() says True.
    ("\u4e2d\u4e00\u4e8c\u4e09", ["\u4e2d\u4e00\u4e8c\u4e09"]),
    ("7\u4e00\u5343", ["7", "\u4e00\u5343"]),
    # Superscripts, fractions and Roman numerals are N*: numbers, not letters.
    ("x\u00b2+y\u00b2", ["x", "\u00b2", "+", "y", "\u00b2"]),
    ("a\u00bdb\u216bc", ["a", "\u00bd", "b", "\u216b", "c"]),
    # Combining marks are neither letters nor numbers.
    ("cafe\u0301s", ["cafe", "\u0301", "s"]),
    ("\u0915\u093f \u0301", ["\u0915", "\u093f", " \u0301"]),
])
def test_letters_are_exactly_category_l(text, want):
    _check(text, want)


@pytest.mark.parametrize("text, want", [
    ("1234567", ["123", "456", "7"]),
    ("abc123456def", ["abc", "123", "456", "def"]),
    ("12 34", ["12", " ", "34"]),
    ("\u216b\u00bd\u2460\u0663", ["\u216b\u00bd\u2460", "\u0663"]),
    ("\U0001d7ce\U0001d7cf\U00010107\u3007\u00b2", ["\U0001d7ce\U0001d7cf\U00010107", "\u3007\u00b2"]),
    ("9\u00b2\u00b3\u00b9", ["9\u00b2\u00b3", "\u00b9"]),
])
def test_numbers_in_pieces_of_at_most_three(text, want):
    _check(text, want)


@pytest.mark.parametrize("text, want", [
    ("x 1", ["x", " ", "1"]),
    ("x 1234", ["x", " ", "123", "4"]),
    ("x  1", ["x", "  ", "1"]),
    (" \u00b2", [" ", "\u00b2"]),
])
def test_a_number_never_takes_a_leading_space(text, want):
    _check(text, want)


@pytest.mark.parametrize("text, want", [
    ("it's they'RE we'Ve I'M you'LL he'd don't", ["it", "'s", " they", "'RE", " we", "'Ve", " I", "'M", " you",
                                                   "'LL", " he", "'d", " don", "'t"]),
    ("'sup 'llama", ["'s", "up", " '", "llama"]),
    ("''ll", ["''", "ll"]),
    ("?'s", ["?'", "s"]),
    ("a 've", ["a", " '", "ve"]),
    ("'r'e", ["'", "r", "'", "e"]),
    ("'DD", ["'D", "D"]),
])
def test_contractions(text, want):
    _check(text, want)


@pytest.mark.parametrize("text, want", [
    # U+017F LATIN SMALL LETTER LONG S case-folds to "s" but is not an ASCII letter.
    ("it'\u017f", ["it", "'", "\u017f"]),
    ("x'\u017f'S", ["x", "'", "\u017f", "'S"]),
    # A typographic apostrophe is just another character.
    ("it\u2019s", ["it", "\u2019", "s"]),
])
def test_contraction_letters_are_ascii_only(text, want):
    _check(text, want)


@pytest.mark.parametrize("text, want", [
    ("a\u00a0\u3000\u2028\u2029\x0b\x0c\r\n\tb", ["a", "\u00a0\u3000\u2028\u2029\x0b\x0c\r\n\t", "b"]),
    ("a\x1c\x1d\x1e\x1fb", ["a", "\x1c\x1d\x1e\x1f", "b"]),
    ("a \x85b", ["a", " \x85", "b"]),
    ("a\u200bb \ufeff", ["a", "\u200b", "b", " \ufeff"]),
    ("\x08\t\r\x0e", ["\x08", "\t\r", "\x0e"]),
    ("x\u1680\u2003\u202f\u205fy", ["x", "\u1680\u2003\u202f\u205f", "y"]),
])
def test_whitespace_is_exactly_the_stated_set(text, want):
    _check(text, want)


@pytest.mark.parametrize("text, want", [
    ("a  b", ["a", " ", " b"]),
    ("a   !", ["a", "  ", " !"]),
    ("a  's", ["a", " ", " '", "s"]),
    ("\n\nHello", ["\n\n", "Hello"]),
    ("x \tb", ["x", " \t", "b"]),
    ("x\t b", ["x", "\t", " b"]),
    ("x \u00a0b", ["x", " \u00a0", "b"]),
    ("x\u00a0 b", ["x", "\u00a0", " b"]),
    ("x  \u00b2", ["x", "  ", "\u00b2"]),
    ("\n 12", ["\n ", "12"]),
    ("end  ", ["end", "  "]),
    ("end\n ", ["end", "\n "]),
    (" ", [" "]),
    ("  a", [" ", " a"]),
])
def test_whitespace_run_leaves_its_last_space_only_for_a_piece_that_takes_it(text, want):
    _check(text, want)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_texts_match_the_oracle(seed):
    for text in random_texts(seed, 150):
        assert_matches_oracle(text)


def test_pieces_are_non_empty_and_concatenate_to_the_text():
    for text in random_texts(10, 100):
        got = pieces(text)
        assert "".join(got) == text, f"text {text!r}: pieces {got!r} do not concatenate to it"
        assert all(got), f"text {text!r}: an empty piece in {got!r}"


def test_long_text_matches_the_oracle():
    rng = random.Random(20261203)
    text = "".join(random_text(rng, 12) for _ in range(1500))
    got = pieces(text)
    want = _oracle.pretokenize(text)
    if got != want:
        k = next((k for k, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
        assert got == want, f"first difference at piece {k}: got {got[k:k + 3]!r}, want {want[k:k + 3]!r}"
