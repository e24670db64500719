"""float32 <-> bfloat16, float8 e4m3fn and float8 e5m2, on bit patterns with integer arithmetic only."""

import numpy as np


class _Format:
    """A binary format by its fields; `emin` is the exponent of its smallest normal value."""

    def __init__(self, exp_bits, man_bits, bias, max_code, overflow_code, nan_code, dtype):
        self.exp_bits, self.man_bits, self.bias = exp_bits, man_bits, bias
        self.emin = 1 - bias
        self.max_code = max_code            # largest finite magnitude
        self.overflow_code = overflow_code  # what a non-saturating overflow becomes
        self.nan_code = nan_code
        self.sign_bit = 1 << (exp_bits + man_bits)
        self.dtype = dtype


BF16 = _Format(8, 7, 127, 0x7F7F, 0x7F80, 0x7FC0, np.uint16)
E4M3FN = _Format(4, 3, 7, 0x7E, 0x7F, 0x7F, np.uint8)     # no infinity: overflow is NaN
E5M2 = _Format(5, 2, 15, 0x7B, 0x7C, 0x7F, np.uint8)


def _round_shift(sig, shift):
    """sig / 2**shift rounded to nearest, ties to even; every shifted-out bit counts (shift >= 1)."""
    kept = sig >> shift
    rest = sig - (kept << shift)
    half = np.int64(1) << (shift - 1)
    up = (rest > half) | ((rest == half) & ((kept & 1) == 1))
    return kept + up


def _encode(x, fmt, saturate):
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.int64)
    magnitude = u & 0x7FFFFFFF
    exp_field = magnitude >> 23
    frac = magnitude & 0x7FFFFF
    sig = np.where(exp_field > 0, frac | 0x800000, frac)  # value = sig * 2**(e - 23)
    e = np.maximum(exp_field, 1) - 127
    below = np.maximum(fmt.emin - e, 0)
    # sig < 2**24, so from a shift of 25 on the value is under half the format's smallest step:
    # capping the shift at 26 keeps every shift well-defined and still rounds those to zero.
    shift = np.minimum(23 - fmt.man_bits + below, 26)
    q = _round_shift(sig, shift)
    # The codes of one sign are in value order, so a carry out of the mantissa moves to the next
    # binade (or past the largest finite value) by itself.
    code = (np.maximum(e - fmt.emin, 0) << fmt.man_bits) + q
    overflow = code > fmt.max_code  # infinities land here too
    code = np.where(overflow, fmt.max_code if saturate else fmt.overflow_code, code)
    code = np.where(magnitude > 0x7F800000, fmt.nan_code, code)
    sign = np.where(u >> 31 == 1, fmt.sign_bit, 0)
    return (code | sign).astype(fmt.dtype)


def _decode_float8(bits, fmt, is_nan, is_inf):
    b = np.asarray(bits).astype(np.int64)
    exp_field = (b >> fmt.man_bits) & ((1 << fmt.exp_bits) - 1)
    frac = b & ((1 << fmt.man_bits) - 1)
    # Normal: rebias the exponent, widen the mantissa.
    out = ((exp_field - fmt.bias + 127) << 23) | (frac << (23 - fmt.man_bits))
    # Subnormal: frac * 2**(emin - man_bits); normalise on frac's leading bit p.
    lead = np.zeros_like(frac)
    for p in range(1, fmt.man_bits):
        lead = np.where(frac >> p > 0, p, lead)
    sub = ((fmt.emin - fmt.man_bits + lead + 127) << 23) | ((frac - (1 << lead)) << (23 - lead))
    out = np.where(exp_field == 0, np.where(frac == 0, 0, sub), out)
    out = np.where(is_inf(exp_field, frac), 0x7F800000, out)
    out = np.where(is_nan(exp_field, frac), 0x7FC00000, out)
    out = out | np.where(b & fmt.sign_bit > 0, 0x80000000, 0)
    return out.astype(np.uint32).view(np.float32)


def float32_to_bf16(x, *, saturate):
    return _encode(x, BF16, saturate)


def float32_to_e4m3fn(x, *, saturate):
    return _encode(x, E4M3FN, saturate)


def float32_to_e5m2(x, *, saturate):
    return _encode(x, E5M2, saturate)


def bf16_to_float32(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def e4m3fn_to_float32(bits):
    return _decode_float8(bits, E4M3FN, lambda e, m: (e == 15) & (m == 7), lambda e, m: np.zeros_like(e, dtype=bool))


def e5m2_to_float32(bits):
    return _decode_float8(bits, E5M2, lambda e, m: (e == 31) & (m != 0), lambda e, m: (e == 31) & (m == 0))
