"""Bit-exact conversion of float32 arrays to bfloat16, float8 e4m3fn and float8 e5m2 codes.

Each function takes a float32 numpy array of any shape and returns the codes of the target
format as an unsigned integer array of the same shape (uint16 for bfloat16, uint8 for the
float8 formats). The input array is never modified.

Rounding is to nearest, ties to the even code, on the exact float32 value. A finite value
whose rounded magnitude exceeds the largest finite value of the format overflows: to
infinity (bfloat16, e5m2) or NaN (e4m3fn, which has no infinity), or to the largest finite
value of its sign when saturate=True. With saturate=True infinities are clamped the same
way. Every NaN input gives the format's one canonical NaN code. The sign of zero is kept.
"""
import numpy as np


def _encode(x, *, exp_bits, man_bits, max_code, overflow_code, nan_code, saturate):
    """Round float32 `x` to a format with `exp_bits` exponent bits and `man_bits` mantissa
    bits (bias 2**(exp_bits-1) - 1, subnormals at exponent field 0), all in integers."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.int64)
    sign = bits >> 31
    magnitude = bits & 0x7FFFFFFF
    field = magnitude >> 23
    significand = np.where(field > 0, (magnitude & 0x7FFFFF) | 0x800000, magnitude & 0x7FFFFF)
    exponent = np.maximum(field, 1) - 127          # the value is significand * 2**(exponent - 23)
    emin = 2 - (1 << (exp_bits - 1))                # exponent of the smallest normal number
    quantum = np.maximum(exponent, emin) - man_bits  # the target's spacing there is 2**quantum
    shift = np.minimum(quantum - (exponent - 23), 40)  # beyond 40 bits everything rounds to 0
    kept = significand >> shift
    rest = significand & ((np.int64(1) << shift) - 1)
    half = np.int64(1) << (shift - 1)
    kept = kept + ((rest > half) | ((rest == half) & (kept & 1 == 1)))
    # kept counts quanta: 2**man_bits + mantissa for a normal result, the mantissa itself for
    # a subnormal one; a carry out of the mantissa lands in the exponent by the addition.
    code = ((np.maximum(exponent, emin) - emin) << man_bits) + kept

    infinite = magnitude == 0x7F800000
    nan = magnitude > 0x7F800000
    too_big = infinite | (~nan & (code > max_code))
    code = np.where(too_big, max_code if saturate else overflow_code, code)
    code = code | (sign << (exp_bits + man_bits))
    if overflow_code == nan_code and not saturate:  # e4m3fn: an overflow is NaN, one canonical NaN
        nan = nan | too_big
    code = np.where(nan, nan_code, code)
    return code.astype(np.uint16 if exp_bits + man_bits == 15 else np.uint8)


def to_bf16(x, *, saturate=False):
    """bfloat16: 1 sign, 8 exponent bits (bias 127), 7 mantissa bits; largest finite 0x7F7F."""
    return _encode(x, exp_bits=8, man_bits=7, max_code=0x7F7F, overflow_code=0x7F80,
                   nan_code=0x7FC0, saturate=saturate)


def to_e4m3fn(x, *, saturate=False):
    """float8 e4m3fn: 1 sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinity, only
    S.1111.111 is NaN; largest finite 0x7E = 448."""
    return _encode(x, exp_bits=4, man_bits=3, max_code=0x7E, overflow_code=0x7F, nan_code=0x7F,
                   saturate=saturate)


def to_e5m2(x, *, saturate=False):
    """float8 e5m2: 1 sign, 5 exponent bits (bias 15), 2 mantissa bits; infinity 0x7C,
    largest finite 0x7B = 57344."""
    return _encode(x, exp_bits=5, man_bits=2, max_code=0x7B, overflow_code=0x7C, nan_code=0x7E,
                   saturate=saturate)
