"""Seeded random texts, built from segments rich in the characters whose class the prompt
fixes: letters of every L category (CJK numerals are Lo), numbers of every N category
(superscripts, fractions, Roman numerals, non-BMP digits), whitespace beyond ASCII,
controls that other definitions call whitespace, marks, emoji, and apostrophes followed by
contraction letters in mixed case or by their look-alikes.

Every character here has had the same general category in every Unicode database from
Python 3.9 (Unicode 13.0) to Python 3.13 (Unicode 15.1).
"""
import random

ASCII_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
LETTERS = (
    "\u00e9\u00df\u017f\u01c5\u02b0\u0131\u0130\u03a9\u05d0\u0628\u0915\u30fc\u3042\u4e2d"
    "\u4e00\u4e8c\u4e94\u5341\u5343\u842c\u00aa\U0001d400\U0001d465\U00020000"
)
ASCII_DIGITS = "0123456789"
NUMBERS = (
    "\u00b2\u00b3\u00b9\u00bc\u00bd\u0663\u096a\u0e53\u2070\u2082\u2153\u2160\u216b"
    "\u2460\u2474\u3007\u3021\uff13\U00010107\U0001d7ce\U0001d7ef\U0001f100"
)
WHITESPACE = "\t\n\x0b\x0c\r\u00a0\u1680\u2003\u2009\u2028\u2029\u202f\u205f\u3000"
NOT_WHITESPACE = "\x1c\x1d\x1e\x1f\x85\x08\x0e\x00\x7f\u200b\u200d\u2060\ufeff\u180e"
MARKS = "\u0301\u0308\u093f\u0903\u20dd\u0488\u05b0"
PUNCTUATION = ".,!?-_()[]\"#$%&*+/:;<=>@\\^`{|}~\u00a1\u00bf\u2019\u2018\u201c\u2026\u20ac\u00a9"
SYMBOLS = "\U0001f600\U0001f44d\U0001f1fa\U0001f1f8\u2603\u00b0\ue000\uffff\U0010fffd"
CONTRACTION_WORDS = ["s", "t", "re", "ve", "m", "ll", "d"]
NEAR_CONTRACTIONS = ["\u017f", "r", "v", "l", "e", "x", "\u0131", "\u212a", "S\u0301", "\u2019"]


def _spelled(rng, word):
    return "".join(c.upper() if rng.random() < 0.5 else c for c in word)


def _from(rng, alphabet, low, high, common="", p_common=0.0):
    return "".join(rng.choice(common) if common and rng.random() < p_common else rng.choice(alphabet)
                   for _ in range(rng.randint(low, high)))


def _segment(rng):
    kind = rng.randrange(11)
    if kind == 0:
        return _from(rng, LETTERS, 1, 6, ASCII_LETTERS, 0.6)
    if kind == 1:
        return _from(rng, NUMBERS, 1, 8, ASCII_DIGITS, 0.5)
    if kind == 2:
        return " " * rng.randint(1, 4)
    if kind == 3:
        return _from(rng, WHITESPACE, 1, 4, " ", 0.5)
    if kind == 4:
        return "'" + _spelled(rng, rng.choice(CONTRACTION_WORDS))
    if kind == 5:
        return "'" + rng.choice(NEAR_CONTRACTIONS)
    if kind == 6:
        return _from(rng, PUNCTUATION, 1, 4, "'", 0.3)
    if kind == 7:
        return _from(rng, NOT_WHITESPACE, 1, 3)
    if kind == 8:
        return rng.choice(MARKS)
    if kind == 9:
        return _from(rng, SYMBOLS, 1, 2)
    return rng.choice(" \n\t'") + rng.choice(ASCII_LETTERS + ASCII_DIGITS)


def random_text(rng, max_segments=10):
    return "".join(_segment(rng) for _ in range(rng.randint(1, max_segments)))


def random_texts(seed, count, max_segments=10):
    rng = random.Random(seed)
    return [random_text(rng, max_segments) for _ in range(count)]
