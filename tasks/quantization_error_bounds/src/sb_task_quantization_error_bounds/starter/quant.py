"""Uniform integer quantisation: symmetric or affine, per tensor or per channel."""
import numpy as np


def quant_range(num_bits, signed):
    """(qmin, qmax) of a num_bits integer."""
    raise NotImplementedError


def choose_qparams(x, *, num_bits, symmetric, signed, axis=None):
    """(scale, zero_point): float64 and int64 arrays, shape () or (C,)."""
    raise NotImplementedError


def quantize(x, scale, zero_point, *, num_bits, signed, axis=None):
    """clip(round_half_even(x / scale) + zero_point, qmin, qmax) as int64."""
    raise NotImplementedError


def dequantize(q, scale, zero_point, *, axis=None):
    """(q - zero_point) * scale as float64."""
    raise NotImplementedError


def fake_quantize(x, *, num_bits, symmetric, signed, axis=None):
    """Quantise with parameters chosen from x itself, then dequantise."""
    raise NotImplementedError
