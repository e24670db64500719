"""Integer-only requantization: the fixed-point arithmetic of int8 inference runtimes."""
import math

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def quantize_multiplier(real_multiplier):
    """(q, shift) with real_multiplier ~= q * 2**(shift - 31), q a Q0.31 significand."""
    m = float(real_multiplier)
    if m == 0.0:
        return 0, 0
    significand, exponent = math.frexp(m)  # m = significand * 2**exponent, 1/2 <= significand < 1
    # significand * 2**31 is exact and has at most 22 fraction bits, so adding 1/2 is exact
    # (or, at the very top, rounds to 2**31, which is the floor of the true sum anyway).
    q = math.floor(significand * (1 << 31) + 0.5)
    if q == 1 << 31:
        q = 1 << 30
        exponent += 1
    if exponent < -31:
        return 0, 0
    if exponent > 30:
        return INT32_MAX, 30
    return int(q), int(exponent)


def _int64(x):
    return np.asarray(x).astype(np.int64)


def saturating_rounding_doubling_high_mul(a, b):
    """trunc((a*b + nudge) / 2**31), nudge = 2**30 or 1 - 2**30 by the sign of a*b."""
    a64, b64 = _int64(a), _int64(b)
    product = a64 * b64  # |a*b| <= 2**62: exact in int64
    nudged = product + np.where(product >= 0, 1 << 30, 1 - (1 << 30))
    magnitude = np.abs(nudged) >> 31
    result = np.where(nudged < 0, -magnitude, magnitude)
    result = np.where((a64 == INT32_MIN) & (b64 == INT32_MIN), INT32_MAX, result)
    return np.asarray(result).astype(np.int32)


def rounding_divide_by_power_of_two(x, exponent):
    """The integer nearest to x / 2**exponent, a tie rounded away from zero."""
    x64, e64 = _int64(x), _int64(exponent)
    half = np.left_shift(np.int64(1), e64) >> 1  # 0 when the exponent is 0
    magnitude = (np.abs(x64) + half) >> e64
    result = np.where(x64 < 0, -magnitude, magnitude)
    return np.asarray(result).astype(np.int32)


def multiply_by_quantized_multiplier(x, quantized_multiplier, shift):
    """x * q * 2**(shift - 31) in two roundings: left shift (saturating), high mul, right shift."""
    x64, s64 = _int64(x), _int64(shift)
    left, right = np.maximum(s64, 0), np.maximum(-s64, 0)
    shifted = np.clip(np.left_shift(x64, left), INT32_MIN, INT32_MAX)
    high = saturating_rounding_doubling_high_mul(shifted, quantized_multiplier)
    return rounding_divide_by_power_of_two(high, right)


def requantized_matmul(a, a_zero_point, b, b_zero_point, bias, multiplier, out_zero_point, out_dtype,
                       activation_min=None, activation_max=None):
    """clamp(requantize((a - za) @ (b - zb) + bias) + out_zero_point) as out_dtype."""
    a64 = _int64(a) - int(a_zero_point)
    b64 = _int64(b) - _int64(b_zero_point)  # a per-channel zero point broadcasts over columns
    acc = a64 @ b64
    if bias is not None:
        acc = acc + _int64(bias)
    n = acc.shape[1]
    multipliers = np.broadcast_to(np.asarray(multiplier, dtype=np.float64), (n,))
    pairs = [quantize_multiplier(float(m)) for m in multipliers]
    q = np.array([p[0] for p in pairs], dtype=np.int64)
    shift = np.array([p[1] for p in pairs], dtype=np.int64)
    scaled = _int64(multiply_by_quantized_multiplier(acc, q, shift)) + int(out_zero_point)
    dtype = np.dtype(out_dtype)
    low = np.iinfo(dtype).min if activation_min is None else int(activation_min)
    high = np.iinfo(dtype).max if activation_max is None else int(activation_max)
    return np.clip(scaled, low, high).astype(dtype)
