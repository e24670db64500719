"""Decimal text <-> bfloat16 / float8_e5m2 / float8_e4m3fn bit patterns, graded exactly.

Every expected value comes from _oracle: each pattern decoded by the definition into a
Fraction, parsing as the nearest of the sorted values by exact comparison, formatting as a
search over p = 1, 2, ... significant digits checked with that parse. Nothing is compared
with a tolerance: a pattern or a string is right or wrong.

The solution is called in batches (_probe_batch runs the calls in the worker and sends back
what each returned or raised); the formats are exhaustive where they are small enough:
every pattern of all three formats is formatted, and every midpoint between neighbouring
values is parsed.
"""
from fractions import Fraction
from functools import lru_cache

import pytest

from lowp_text import bits_to_decimal, decimal_to_bits  # noqa: F401  (top level: the starter fails each test, not collection)
from sb.judge import probe

import _cases
import _oracle

FMT = pytest.mark.parametrize("name", ["float8_e5m2", "float8_e4m3fn", "bfloat16"])
SHOWN = 8          # mismatches shown in a failure message


def batch():
    return probe("_probe_batch.py")


def _show(x):
    return hex(x) if type(x) is int else repr(x)


def assert_parsed(name, texts, want, what):
    got = batch().parse_many(list(texts), name)
    assert len(got) == len(texts)
    bad = [(t, g, w) for t, g, w in zip(texts, got, want) if type(g) is not int or g != w]
    assert not bad, (
        f"{what}: decimal_to_bits(text, {name!r}) is wrong for {len(bad)} of {len(texts)} texts, e.g. "
        + "; ".join(f"{t!r} gave {_show(g)}, want {_show(w)}" for t, g, w in bad[:SHOWN]))


@lru_cache(maxsize=None)
def formatted_by_the_solution(name):
    """bits_to_decimal of every pattern of the format, called once per pattern in this run
    (the exhaustive test and the round-trip test share it)."""
    return tuple(batch().format_many(list(range(1 << _oracle.fmt(name).width)), name))


def assert_formatted(name, patterns, want, what, got=None):
    if got is None:
        got = batch().format_many(list(patterns), name)
    assert len(got) == len(patterns)
    bad = [(b, g, w) for b, g, w in zip(patterns, got, want) if g != w]
    assert not bad, (
        f"{what}: bits_to_decimal(bits, {name!r}) is wrong for {len(bad)} of {len(patterns)} patterns, e.g. "
        + "; ".join(f"{b:#x} gave {g!r}, want {w!r}" for b, g, w in bad[:SHOWN]))


def assert_rejected(name, texts):
    got = batch().parse_many(list(texts), name)
    bad = [(t, g) for t, g in zip(texts, got) if not (isinstance(g, list) and g[:2] == ["raised", "ValueError"])]
    assert not bad, (
        f"decimal_to_bits(text, {name!r}) must raise ValueError for text outside the grammar; "
        + "; ".join(f"{t!r} gave {_show(g)}" for t, g in bad[:SHOWN]))


# ---- formatting: the specials and the rejections -----------------------------------


@FMT
def test_format_zeros_infinities_and_nans(name):
    f = _oracle.fmt(name)
    sign = f.sign_bit
    patterns = [0, sign] + f.nan_bits + [b for b, v in f.value.items() if v in ("inf", "-inf")]
    want = ["0.0", "-0.0"] + ["nan"] * len(f.nan_bits) + [f.value[b] for b in patterns[2 + len(f.nan_bits):]]
    assert_formatted(name, patterns, want, "zeros, infinities and NaNs")


def test_format_rejects_what_is_not_a_pattern():
    cases = [(256, "float8_e5m2"), (-1, "float8_e4m3fn"), (1 << 16, "bfloat16"), (-1, "bfloat16"),
             (0, "float8"), (0, "float16"), (0, "BFLOAT16")]
    for bits, name in cases:
        with pytest.raises(ValueError):
            bits_to_decimal(bits, name)


# ---- parsing ---------------------------------------------------------------------------


def test_parse_rejects_unknown_formats():
    for name in ("float8", "float16", "float32", "e4m3", "BFloat16", ""):
        with pytest.raises(ValueError):
            decimal_to_bits("1.0", name)


@FMT
def test_parse_agrees_on_different_spellings_of_one_value(name):
    groups = [
        ["1.5", "+1.5", "01.50", "15e-1", "15E-1", ".15e1", "150e-2", "0.0015e3", "1.5e+0", "1.5e00000",
         "1.500000000000000000000000000000000000", "0000000000000000000001.5", "15.e-1"],
        ["0.1", ".1", "1e-1", "10e-2", "0.10", "100000e-6", "0.000000000001e11"],
        ["-0.3125", "-3.125e-1", "-.3125", "-3125e-4", "-0.31250000000000000000000000000000000"],
        ["3", "3.", "3.0", "+3", "0.3e1", "300e-2", "3e0", "3e-0", "3e+00000"],
        ["1e-7", "0.0000001", "1E-7", "0.1e-6", "100e-9", "00.00000010000"],
    ]
    texts = [t for g in groups for t in g]
    want = _cases.expected(name, texts)
    assert_parsed(name, texts, want, "spellings of the same value")
    for g in groups:
        assert len({w for t, w in zip(texts, want) if t in g}) == 1   # the oracle agrees


@FMT
def test_parse_nan_and_infinity_spellings(name):
    f = _oracle.fmt(name)
    sign = f.sign_bit
    nan = _oracle.CANONICAL_NAN[name]
    over = f.overflow_bits(False)
    cases = {"nan": nan, "NaN": nan, "+nan": nan, "-nan": nan | sign, "-NAN": nan | sign,
             "inf": over, "Inf": over, "+inf": over, "-inf": over | sign, "infinity": over,
             "-INFINITY": over | sign, "iNfInItY": over}
    texts = list(cases)
    assert_parsed(name, texts, [cases[t] for t in texts], "NaN and infinity")


# largest finite value, the next value the exponent range would have, and the midpoint
OVERFLOW = {
    # name: (max finite bits, text of the midpoint between it and the step, bits there, overflow bits)
    "bfloat16": (0x7F7F, "339617752923046005526922703901628039168", 0x7F80, 0x7F80),
    "float8_e5m2": (0x7B, "61440", 0x7C, 0x7C),
    "float8_e4m3fn": (0x7E, "464", 0x7E, 0x7F),
}


@FMT
def test_parse_overflow(name):
    f = _oracle.fmt(name)
    top, mid_text, at_mid, over = OVERFLOW[name]
    sign = f.sign_bit
    assert f.parse(mid_text) == at_mid and f.value[top] == f.max_finite   # the oracle agrees
    mid = int(mid_text)
    cases = {
        mid_text: at_mid,
        "-" + mid_text: at_mid | sign,
        f"{mid_text}.000000000000000000000000000001": over,
        f"{mid - 1}.99999999999999999999999999": top,
        f"-{mid - 1}.99999999999999999999999999": top | sign,
        f"{mid}e0": at_mid,
        str(2 * mid): over,
        f"{mid}e1": over,
        "1e99999": over,
        "-1e+99999": over | sign,
        "0.00001e99999": over,
        "inf": over,
        "-Infinity": over | sign,
        "+INF": over,
    }
    # beyond STEP: the values the exponent range would have there and the midpoints between
    # them, over three binades; every one overflows
    for j in range(3):
        for i in range(2 ** (f.M + 1)):
            x = f.step * (1 + Fraction(i, 2 ** (f.M + 1))) * 2 ** j
            d, e = _cases.decimal_of(x)
            negative = (i + j) % 2 == 1
            cases[_cases.spell(d, e, (i + j) % 5, negative=negative)] = over | (sign if negative else 0)
    texts = list(cases)
    assert [cases[t] for t in texts] == _cases.expected(name, texts)
    assert_parsed(name, texts, [cases[t] for t in texts], "at and beyond the largest finite value")


@FMT
def test_parse_underflow_and_negative_zero(name):
    f = _oracle.fmt(name)
    sign = f.sign_bit
    tiny = f.value[1]                        # the smallest subnormal
    d, e = _cases.decimal_of(tiny / 2)       # half of it: a tie between 0 and pattern 1
    half = _cases.spell(d, e, 1)
    above = _cases.spell(*_cases.nudged(tiny / 2, 25, up=True), 1)
    below = _cases.spell(*_cases.nudged(tiny / 2, 25, up=False), 1)
    cases = {
        half: 0, "-" + half: sign, above: 1, "-" + above: 1 | sign, below: 0, "-" + below: sign,
        "0": 0, "-0": sign, "+0": 0, "-0.0": sign, "-.0": sign, "-0.": sign, "-000.000e-00000": sign,
        "0e99999": 0, "-0e99999": sign, "-0e-99999": sign, "1e-99999": 0, "-1e-99999": sign,
        "-1e-50": sign, "-" + "0." + "0" * 150 + "1": sign,
    }
    texts = list(cases)
    assert [cases[t] for t in texts] == _cases.expected(name, texts)
    assert_parsed(name, texts, [cases[t] for t in texts], "underflow and zeros")


MALFORMED = [
    "", "+", "-", ".", "+.", "-.e1", "e5", "E5", "1e", "1e+", "1e-", "1.5.2", "1..5", "1e5.0", "1e1e1",
    "++1", "+-1", "--1", "1-", "1+", " 1", "1 ", "\t1", "1\n", "\n", "1_000", "1,5", "0x10", "0b1",
    "0x1p3", "1f", "1d", "1e1f", "١", "１", "1e١", "٣.5", "in", "infinit", "infinityy", "infs", "nan0",
    "nan(1)", "nana", "inf1", "1inf", "-+inf", "+-nan", "∞", "-∞", "inf e", "i n f", "NaN ", "1e+-1",
    "1e100000", "1e-100000", "1e000001", "1.0e+123456", "ınf", "\u0130nf",
    "1" + "0" * 200,                                 # 201 characters
    "0." + "0" * 198 + "1",                          # 201 characters
    "-" + "1" * 200,                                 # 201 characters
]


@FMT
def test_parse_rejects_text_outside_the_grammar(name):
    assert all(_oracle.fmt(name).parse(t) == "ValueError" for t in MALFORMED)   # the oracle agrees
    assert_rejected(name, MALFORMED)


@FMT
def test_parse_accepts_the_grammar_at_its_bounds(name):
    texts = ["1" + "0" * 199, "0." + "0" * 197 + "1", "-" + "0" * 198 + "1", "1.", ".5", "-.5", "+5.",
             "1e99999", "1E-99999", "1e+00001", "7e-00005", "00000", "0.0e0", "2.5E0"]
    want = _cases.expected(name, texts)
    assert "ValueError" not in want
    assert_parsed(name, texts, want, "texts within the grammar and its bounds")


@FMT
def test_parse_long_texts_where_the_last_digit_decides(name):
    f = _oracle.fmt(name)
    mids = _cases.midpoints(name)
    chosen = mids[:4] + mids[len(mids) // 2: len(mids) // 2 + 4] + mids[-4:]
    texts = []
    for mid, _, _ in chosen:
        d, e = _cases.decimal_of(mid)
        s = _cases.spell(d, e, 1)                 # d.ddde±xx
        body, exp = s.split("e")
        body = body if "." in body else body + "."
        room = _cases.MAX_LENGTH - len(body) - len(exp) - 2
        texts += [
            body + "0" * room + "1" + "e" + exp,          # just above: the 200th character decides
            body + "0" * (room + 1) + "e" + exp,          # the midpoint itself, 200 characters
            "-" + body + "0" * (room - 1) + "1" + "e" + exp,
        ]
        below = _cases.nudged(mid, 150, up=False)        # 150 digits: ...49999... or ...0000... just under
        texts.append(_cases.spell(*below, 1))
    for t in texts:
        assert len(t) <= _cases.MAX_LENGTH, t
    assert_parsed(name, texts, _cases.expected(name, texts), "long texts")
    assert f.parse("1." + "0" * 197 + "1") == f.parse("1")


@FMT
def test_parse_exact_values_in_several_spellings(name):
    f = _oracle.fmt(name)
    texts, want = [], []
    for i, bits in enumerate(f.finite_bits):
        v = f.value[bits]
        if v == 0:
            continue
        d, e = _cases.decimal_of(abs(v))
        texts.append(_cases.spell(d, e, i % 5, negative=v < 0))
        want.append(bits)
    assert want == _cases.expected(name, texts)   # the oracle agrees with the construction
    assert_parsed(name, texts, want, "the exact value of a pattern")


@FMT
def test_parse_every_midpoint_goes_to_the_even_pattern(name):
    texts = []
    for i, (mid, _, _) in enumerate(_cases.midpoints(name)):
        d, e = _cases.decimal_of(mid)
        texts += [_cases.spell(d, e, i % 5), _cases.spell(d, e, (i + 2) % 5, negative=True)]
    want = _cases.expected(name, texts)
    f = _oracle.fmt(name)
    for (mid, lo, hi), plus in zip(_cases.midpoints(name), want[::2]):
        even = lo if lo % 2 == 0 else hi
        assert plus == (even if even != f.step_bits else f.overflow_bits(False))
    assert_parsed(name, texts, want, "exactly halfway between two neighbouring values")


# midpoints nudged to 20, 30 and 40 significant digits: at 20 the nudge is below 1e-19 of
# the value, under half a float64 ulp (2^-53, about 1.1e-16), so a float64 (or float32)
# parse lands exactly on the midpoint and rounds a second time from there
NUDGE_DIGITS = (20, 30, 40)

# bfloat16 has 32640 non-negative midpoints: a fixed sample of them, plus every midpoint of
# the subnormal range, the lowest normal binade and the overflow end, keeps the test to
# about 30000 texts (float8: all of them)
BF16_SAMPLE = 4000


def _nudge_targets(name):
    mids = _cases.midpoints(name)
    if name != "bfloat16":
        return mids
    ends = mids[:300] + mids[-300:]
    powers = [m for m in mids if m[2] % 128 == 0 or m[1] % 128 == 0]    # around powers of two
    return ends + powers + _cases.sample(mids[300:-300], BF16_SAMPLE, seed=20261204)


@FMT
def test_parse_just_off_each_midpoint(name):
    texts = []
    for i, (mid, _, _) in enumerate(_nudge_targets(name)):
        for sig in NUDGE_DIGITS:
            for up in (False, True):
                d, e = _cases.nudged(mid, sig, up)
                texts.append(_cases.spell(d, e, (i + sig + up) % 5, negative=(i + up) % 2 == 1))
    assert_parsed(name, texts, _cases.expected(name, texts), "a tiny amount above or below a midpoint")


# ---- formatting every pattern -----------------------------------------------------------


@FMT
def test_format_every_pattern_matches_the_oracle(name):
    f = _oracle.fmt(name)
    patterns = list(range(1 << f.width))
    assert_formatted(name, patterns, list(_oracle.all_formatted(name)), "every pattern",
                     got=formatted_by_the_solution(name))


@FMT
def test_format_round_trips_through_parse(name):
    f = _oracle.fmt(name)
    patterns = [b for b in range(1 << f.width) if f.value[b] != "nan"]
    texts = [formatted_by_the_solution(name)[b] for b in patterns]
    assert all(type(t) is str for t in texts), "bits_to_decimal must return a str for every pattern"
    assert_parsed(name, texts, patterns, "parsing what bits_to_decimal wrote")
