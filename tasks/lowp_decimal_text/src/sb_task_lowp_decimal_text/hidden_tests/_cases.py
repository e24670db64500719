"""Texts for the parse tests, built from exact values (every expected pattern comes from
_oracle's parse, which rounds the text's exact value by comparison with every value of the
format).

A dyadic number is written exactly as digits * 10^exponent (_oracle.exact_decimal), and each
text is one of several spellings of such a pair; every text keeps to the prompt's grammar and
to its bounds (at most 200 characters, at most 5 exponent digits): spell() checks both.
"""
import random
from fractions import Fraction
from functools import lru_cache

import _oracle

MAX_LENGTH = _oracle.MAX_LENGTH


def _sci(digits, exponent, style):
    """digits * 10^exponent in one of several equivalent spellings."""
    s = str(digits)
    lead = exponent + len(s) - 1              # the power of ten of the leading digit
    if style == 0:                            # 1234e-5
        return f"{s}e{exponent}"
    if style == 1:                            # 1.234e-02
        body = s[0] + ("." + s[1:] if len(s) > 1 else "")
        return f"{body}e{lead:+03d}"
    if style == 2:                            # plain positional notation
        if exponent >= 0:
            return s + "0" * exponent
        point = len(s) + exponent
        if point > 0:
            return s[:point] + "." + s[point:]
        return "0." + "0" * -point + s
    if style == 3:                            # .1234E-1, trailing zeros, explicit '+'
        return f"+.{s}000E{lead + 1}"
    if style == 4:                            # leading zeros, a bare point, a padded exponent
        return f"00{s}.E{exponent:+06d}" if -9999 <= exponent <= 9999 else f"00{s}.e{exponent}"
    raise AssertionError(style)


def spell(digits, exponent, style, negative=False):
    text = _sci(digits, exponent, style)
    if len(text) + negative > MAX_LENGTH:
        text = _sci(digits, exponent, 1)      # positional notation can be long: fall back
    if negative:
        text = "-" + text.removeprefix("+")
    assert len(text) <= MAX_LENGTH, text
    return text


def decimal_of(x):
    """(digits, exponent) of a positive dyadic Fraction with no trailing zero in digits."""
    d, e = _oracle.exact_decimal(x)
    while d % 10 == 0:
        d //= 10
        e += 1
    return d, e


def nudged(x, sig, up):
    """A decimal with `sig` significant digits just above (up) or below x > 0: x itself cut
    to `sig` digits and moved one unit in the last place. Returns (digits, exponent)."""
    d, e = decimal_of(x)
    if len(str(d)) < sig:                     # pad x to sig digits, then step
        pad = sig - len(str(d))
        d, e = d * 10 ** pad, e - pad
        return (d + 1, e) if up else (d - 1, e)
    cut = len(str(d)) - sig                   # x has more digits: truncate (always below x)
    t, rest = divmod(d, 10 ** cut)
    assert rest != 0 or cut == 0
    if cut == 0:
        return (d + 1, e) if up else (d - 1, e)
    return (t + 1, e + cut) if up else (t, e + cut)


@lru_cache(maxsize=None)
def midpoints(name):
    """Every midpoint between neighbouring non-negative values, zero and the overflow step
    included: (Fraction, the lower value's bits, the upper value's bits)."""
    f = _oracle.fmt(name)
    out = []
    for i in range(len(f.scaled) - 1):
        mid = Fraction(f.scaled[i] + f.scaled[i + 1], 2 ** (f.S + 1))
        out.append((mid, f.ladder_bits[i], f.ladder_bits[i + 1]))
    return out


def sample(items, count, seed):
    """A fixed, seeded sample (all of them when there are few)."""
    if len(items) <= count:
        return list(items)
    return random.Random(seed).sample(list(items), count)


def expected(name, texts):
    f = _oracle.fmt(name)
    return [f.parse(t) for t in texts]
