"""Pre-tokenization for a byte-level BPE tokenizer: split text into the pieces merges run on."""
import unicodedata

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_CONTRACTION_SUFFIXES = ("s", "t", "m", "d", "re", "ve", "ll")
_MAX_DIGITS = 3


def _kind(ch):
    """'W' whitespace, 'L' letter, 'N' number, 'O' anything else."""
    if "\t" <= ch <= "\r":
        return "W"
    category = unicodedata.category(ch)
    if category in ("Zs", "Zl", "Zp"):
        return "W"
    if category[0] in "LN":
        return category[0]
    return "O"


def _contraction_end(text, i):
    """End of the contraction starting at text[i], or None. Only ASCII case is ignored:
    str.lower/casefold would map more than the 52 ASCII letters."""
    if text[i] != "'":
        return None
    for suffix in _CONTRACTION_SUFFIXES:
        end = i + 1 + len(suffix)
        if text[i + 1:end].translate(_ASCII_LOWER) == suffix:
            return end
    return None


def _run_end(kinds, start, kind):
    end = start
    while end < len(kinds) and kinds[end] == kind:
        end += 1
    return end


def _piece_end(text, kinds, i):
    contraction = _contraction_end(text, i)
    if contraction is not None:
        return contraction
    # A single U+0020 may lead a run of letters or of other characters, never a number.
    start = i + 1 if text[i] == " " and i + 1 < len(text) and kinds[i + 1] in "LO" else i
    kind = kinds[start]
    if kind in "LO":
        return _run_end(kinds, start, kind)
    if kind == "N":
        return min(_run_end(kinds, i, "N"), i + _MAX_DIGITS)
    end = _run_end(kinds, i, "W")
    # The run's last character is left behind only when the next piece will take it.
    if end < len(text) and text[end - 1] == " " and kinds[end] in "LO":
        return end - 1
    return end


def pretokenize(text: str) -> list[str]:
    kinds = [_kind(ch) for ch in text]
    pieces = []
    i = 0
    while i < len(text):
        end = _piece_end(text, kinds, i)
        pieces.append(text[i:end])
        i = end
    return pieces
