"""The judge's own pre-tokenizer, written rule by rule from prompt.md (never from the
reference): character classes straight from unicodedata.category, contractions as an
explicit set of spellings, and at each piece start the five rules tried in the stated order.
"""
import itertools
import unicodedata

SPACE = " "  # U+0020


def is_whitespace(ch):
    return 0x09 <= ord(ch) <= 0x0D or unicodedata.category(ch) in {"Zs", "Zl", "Zp"}


def is_letter(ch):
    return unicodedata.category(ch) in {"Lu", "Ll", "Lt", "Lm", "Lo"}


def is_number(ch):
    return unicodedata.category(ch) in {"Nd", "Nl", "No"}


def is_other(ch):
    return not (is_whitespace(ch) or is_letter(ch) or is_number(ch))


def _spellings(word):
    """Every ASCII upper/lower mix of word: 're' -> re, rE, Re, RE."""
    return {"".join(letters) for letters in itertools.product(*[(c.lower(), c.upper()) for c in word])}


CONTRACTIONS = {"'" + s for word in ["s", "t", "re", "ve", "m", "ll", "d"] for s in _spellings(word)}


def _run(text, i, predicate):
    j = i
    while j < len(text) and predicate(text[j]):
        j += 1
    return j


def _contraction(text, i):
    for length in (3, 2):
        if text[i:i + length] in CONTRACTIONS:
            return i + length
    return None


def _spaced_run(text, i, predicate):
    """Rules 2 and 4: an optional single U+0020, then one or more characters of the class."""
    j = i + 1 if text[i] == SPACE else i
    if j < len(text) and predicate(text[j]):
        return _run(text, j, predicate)
    return None


def _digits(text, i):
    if is_number(text[i]):
        return min(_run(text, i, is_number), i + 3)
    return None


def _rules_1_to_4(text, i):
    """The end of the piece rules 1 to 4 give at i, or None when none of them applies."""
    for rule in (_contraction, lambda t, k: _spaced_run(t, k, is_letter), _digits,
                 lambda t, k: _spaced_run(t, k, is_other)):
        end = rule(text, i)
        if end is not None:
            return end
    return None


def _whitespace(text, i):
    """Rule 5, as worded: the whole run, unless it has two or more characters and one of
    rules 1 to 4 would apply to a piece starting at its last character."""
    end = _run(text, i, is_whitespace)
    assert end > i, "every character belongs to one of the classes"
    if end - i >= 2 and _rules_1_to_4(text, end - 1) is not None:
        return end - 1
    return end


def pretokenize(text):
    pieces = []
    i = 0
    while i < len(text):
        end = _rules_1_to_4(text, i)
        if end is None:
            end = _whitespace(text, i)
        pieces.append(text[i:end])
        i = end
    return pieces
