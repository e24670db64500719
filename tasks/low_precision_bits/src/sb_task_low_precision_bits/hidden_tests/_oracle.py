"""Independent oracles for the three formats, in the judge.

Values come from the textbook field formula evaluated with exact rationals, never from bit
tricks; encoding is a brute-force nearest search over the sorted list of every finite value
(plus the step above the largest one), with ties broken toward the even code. All numbers
involved are exact in float64: a float32 input, any value of these formats, twice an input,
and the sum of two neighbouring format values (at most 9 significant bits apart in exponent
by under 60) are all representable, so every comparison below is an exact one.
"""

from fractions import Fraction
from functools import lru_cache

import numpy as np


class Spec:
    def __init__(self, name, exp_bits, man_bits, bias, max_code, overflow_code, nan_code, ieee, dtype):
        self.name, self.exp_bits, self.man_bits, self.bias = name, exp_bits, man_bits, bias
        self.max_code, self.overflow_code, self.nan_code = max_code, overflow_code, nan_code
        self.ieee = ieee  # the all-ones exponent is infinity / NaN (bf16, e5m2); e4m3fn only S.1111.111 is NaN
        self.dtype = dtype
        self.sign_bit = 1 << (exp_bits + man_bits)
        self.n_codes = 1 << (exp_bits + man_bits + 1)


SPECS = {
    "bf16": Spec("bf16", 8, 7, 127, 0x7F7F, 0x7F80, 0x7FC0, True, np.uint16),
    "e4m3fn": Spec("e4m3fn", 4, 3, 7, 0x7E, 0x7F, 0x7F, False, np.uint8),
    "e5m2": Spec("e5m2", 5, 2, 15, 0x7B, 0x7C, 0x7F, True, np.uint8),
}


def formula_value(spec, code):
    """The magnitude of a sign-less code by the field formula, as if the exponent never ran out."""
    e_field, m = code >> spec.man_bits, code & ((1 << spec.man_bits) - 1)
    if e_field == 0:
        return Fraction(m, 1 << spec.man_bits) * Fraction(2) ** (1 - spec.bias)
    return (1 + Fraction(m, 1 << spec.man_bits)) * Fraction(2) ** (e_field - spec.bias)


def decoded(spec, code):
    """What a full code (sign included) means: a Fraction, or the strings 'inf' / 'nan'; and the sign."""
    negative = bool(code & spec.sign_bit)
    mag = code & (spec.sign_bit - 1)
    e_field = mag >> spec.man_bits
    all_ones = (1 << spec.exp_bits) - 1
    if spec.ieee and e_field == all_ones:
        return ("inf" if mag & ((1 << spec.man_bits) - 1) == 0 else "nan"), negative
    if not spec.ieee and mag == spec.sign_bit - 1:
        return "nan", negative
    return formula_value(spec, mag), negative


def finite_ladder(spec):
    """float64 magnitudes of codes 0..max_code (increasing) and then the step above the largest."""
    return _ladder(spec.name).copy()


@lru_cache(maxsize=None)
def _ladder(name):
    spec = SPECS[name]
    values = [formula_value(spec, c) for c in range(spec.max_code + 2)]
    assert all(a < b for a, b in zip(values, values[1:]))
    return np.array([float(v) for v in values], dtype=np.float64)


def expected_encoding(spec, x, saturate):
    """The encoding the prompt asks for, for every float32 in `x` (any shape), by nearest search."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(invalid="ignore"):  # signalling NaNs widen to NaN, which is all that is asked
        flat = x.reshape(-1).astype(np.float64)
    ladder = finite_ladder(spec)
    step = ladder[-1]
    mag = np.abs(flat)
    finite_small = np.isfinite(mag) & (mag < step)
    safe = np.where(finite_small, mag, 0.0)
    idx = np.searchsorted(ladder, safe, side="right") - 1
    lo, hi = ladder[idx], ladder[np.minimum(idx + 1, len(ladder) - 1)]
    twice, mid2 = 2.0 * safe, lo + hi
    up = (twice > mid2) | ((twice == mid2) & ((idx + 1) % 2 == 0))
    code = np.where(up, idx + 1, idx).astype(np.int64)
    code = np.where(finite_small, code, spec.max_code + 1)  # at or past the step, or infinite: overflow
    overflow = code > spec.max_code
    code = np.where(overflow, spec.max_code if saturate else spec.overflow_code, code)
    code = np.where(np.isnan(flat), spec.nan_code, code)
    code = code | np.where(np.signbit(flat), spec.sign_bit, 0)
    return code.astype(spec.dtype).reshape(x.shape), overflow.reshape(x.shape)


def expected_decoding(spec, codes):
    """float32 bit patterns (uint32) the prompt asks for, from the exact value of each code."""
    table = _decoding_table(spec.name)
    return table[np.asarray(codes).astype(np.int64)]


@lru_cache(maxsize=None)
def _decoding_table(name):
    spec = SPECS[name]
    out = []
    for code in range(spec.n_codes):
        value, negative = decoded(spec, code)
        sign = 0x80000000 if negative else 0
        if value == "nan":
            out.append(sign | (code << 16 if spec.name == "bf16" else 0x7FC00000))
        elif value == "inf":
            out.append(sign | 0x7F800000)
        else:
            f = np.float32(float(value) * (-1.0 if negative else 1.0))
            assert Fraction(float(f)) == value * (-1 if negative else 1) or value == 0
            out.append(int(np.array([f]).view(np.uint32)[0]) | sign)
    return np.array(out, dtype=np.uint32)
