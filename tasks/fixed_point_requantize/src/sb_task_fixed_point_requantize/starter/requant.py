"""Integer-only requantization: the fixed-point arithmetic of int8 inference runtimes."""
import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def quantize_multiplier(real_multiplier):
    """(quantized_multiplier, shift): real_multiplier ~= quantized_multiplier * 2**(shift - 31)."""
    raise NotImplementedError


def saturating_rounding_doubling_high_mul(a, b):
    """trunc((a*b + nudge) / 2**31) elementwise, INT32_MIN * INT32_MIN saturating; int32 array."""
    raise NotImplementedError


def rounding_divide_by_power_of_two(x, exponent):
    """x / 2**exponent rounded to nearest, ties away from zero; int32 array."""
    raise NotImplementedError


def multiply_by_quantized_multiplier(x, quantized_multiplier, shift):
    """Saturating left shift, high multiply, rounding right shift; int32 array."""
    raise NotImplementedError


def requantized_matmul(a, a_zero_point, b, b_zero_point, bias, multiplier, out_zero_point, out_dtype,
                       activation_min=None, activation_max=None):
    """The requantized (M, N) product of int8/uint8 a (M, K) and b (K, N), as out_dtype."""
    raise NotImplementedError
