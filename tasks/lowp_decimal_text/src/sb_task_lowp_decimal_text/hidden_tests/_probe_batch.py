"""Probe: calls the solution's two functions once per item, in the solution's process.

The judge sends the bit patterns or texts and the format name; this file returns each
result as it came back (a str or int) or, when it is not that type or the call raised,
a list [what, type name, text]. It holds no expected value: every check is in the judge.
"""
from lowp_text import bits_to_decimal, decimal_to_bits


def _outcome(function, argument, fmt, want):
    try:
        got = function(argument, fmt)
    except Exception as exc:  # reported to the judge, which decides
        return ["raised", type(exc).__name__, str(exc)[:200]]
    if type(got) is not want:
        try:
            shown = repr(got)[:200]
        except Exception:
            shown = "?"
        return ["returned", type(got).__name__, shown]
    return got


def format_many(patterns, fmt):
    return [_outcome(bits_to_decimal, bits, fmt, str) for bits in patterns]


def parse_many(texts, fmt):
    return [_outcome(decimal_to_bits, text, fmt, int) for text in texts]
