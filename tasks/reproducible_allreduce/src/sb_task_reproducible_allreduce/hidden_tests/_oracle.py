"""Independent exact oracles for the reproducible sum (no code shared with any solution).

Small arrays: every element is summed as a Fraction and rounded to float32 by bisection
over the ordered float32 bit patterns, comparing Fractions. Large arrays: every element is
summed as a Python integer in units of 2**-149 and rounded with int arithmetic.
The special-value rules are applied here from the statement of the task.
"""
import math
import struct
from fractions import Fraction

import numpy as np

POS_INF_BITS = 0x7F800000
NEG_ZERO_BITS = 0x80000000


def bits_value(k):
    """The exact value of a nonnegative float32 bit pattern; 0x7F800000 stands for 2**128,
    the next value after FLT_MAX were the exponent unbounded (its significand is even)."""
    if k == POS_INF_BITS:
        return Fraction(2**128)
    return Fraction(struct.unpack("<f", struct.pack("<I", k))[0])


def round_fraction(v):
    """Bits of v rounded to nearest float32, ties to the even bit pattern (overflow -> inf)."""
    a = abs(v)
    lo, hi = 0, POS_INF_BITS  # invariant: bits_value(lo) <= a
    if a >= bits_value(hi):
        k = hi
    else:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if bits_value(mid) <= a:
                lo = mid
            else:
                hi = mid
        below, above = a - bits_value(lo), bits_value(lo + 1) - a
        if below < above or (below == above and lo % 2 == 0):
            k = lo
        else:
            k = lo + 1
    return k | (NEG_ZERO_BITS if v < 0 else 0)


def _special(column):
    """Bits for a column (list of Python floats) when a special rule decides it, else None."""
    if any(math.isnan(x) for x in column):
        return "nan"
    pos, neg = any(x == math.inf for x in column), any(x == -math.inf for x in column)
    if pos and neg:
        return "nan"
    if pos:
        return POS_INF_BITS
    if neg:
        return POS_INF_BITS | NEG_ZERO_BITS
    if all(x == 0 and math.copysign(1.0, x) < 0 for x in column):
        return NEG_ZERO_BITS
    return None


def exact_sum_bits_small(shards):
    """Expected float32 bits (uint32 array, NaN as 'nan' in an object array) by Fractions."""
    stacked = np.stack([np.asarray(s, dtype=np.float32) for s in shards]).reshape(len(shards), -1)
    out = []
    for column in stacked.T.astype(np.float64).tolist():
        special = _special(column)
        if special is not None:
            out.append(special)
            continue
        out.append(round_fraction(sum((Fraction(x) for x in column), Fraction(0))))
    return out


def round_units(total):
    """Bits of total * 2**-149 (a Python int) rounded to nearest float32, ties to even."""
    a = abs(total)
    lsb = max(a.bit_length() - 24, 0)
    q, rem = a >> lsb, a & ((1 << lsb) - 1)
    if lsb:
        half = 1 << (lsb - 1)
        if rem > half or (rem == half and q % 2 == 1):
            q += 1
    value = math.ldexp(q, lsb - 149)  # exact in float64: q <= 2**24
    k = POS_INF_BITS if value >= 2.0**128 else struct.unpack("<I", struct.pack("<f", value))[0]
    return k | (NEG_ZERO_BITS if total < 0 else 0)


def exact_sum_bits_large(shards):
    """Expected bits as exact_sum_bits_small, by integers; for large, finite inputs."""
    stacked = np.stack([np.asarray(s, dtype=np.float32) for s in shards]).reshape(len(shards), -1)
    assert np.isfinite(stacked).all()
    units = np.ldexp(stacked.astype(np.float64), 149)  # exact: integers below 2**278
    totals = [sum(map(int, column)) for column in units.T.tolist()]
    negzero = np.all((stacked == 0) & np.signbit(stacked), axis=0).tolist()
    return [NEG_ZERO_BITS if nz else round_units(t) for t, nz in zip(totals, negzero)]


def assert_bits_equal(got, expected_bits, shape=None):
    """got (a float32 array) equals the expected bits; any NaN matches 'nan'."""
    got = np.asarray(got)
    assert got.dtype == np.float32, got.dtype
    if shape is not None:
        assert got.shape == tuple(shape), (got.shape, shape)
    flat = got.reshape(-1)
    assert flat.size == len(expected_bits)
    got_bits = flat.view(np.uint32).tolist()
    bad = []
    for i, (g, e) in enumerate(zip(got_bits, expected_bits)):
        if e == "nan":
            ok = math.isnan(float(flat[i]))
        else:
            ok = g == e
        if not ok:
            bad.append(i)
    if bad:
        i = bad[0]
        e = expected_bits[i]
        want = "nan" if e == "nan" else struct.unpack("<f", struct.pack("<I", e))[0]
        raise AssertionError(f"{len(bad)} of {len(got_bits)} elements wrong; first at {i}: "
                             f"got {float(flat[i])!r} (bits {got_bits[i]:#010x}), want {want!r}")
