"""Uniform integer quantisation: symmetric or affine, per tensor or per channel."""
import numpy as np


def quant_range(num_bits, signed):
    """(qmin, qmax) of a num_bits integer."""
    if not isinstance(num_bits, (int, np.integer)) or not 2 <= num_bits <= 16:
        raise ValueError(f"num_bits must be an int in [2, 16], got {num_bits!r}")
    if signed:
        return -(2 ** (num_bits - 1)), 2 ** (num_bits - 1) - 1
    return 0, 2 ** num_bits - 1


def _reduce_axes(ndim, axis):
    """Every axis except the channel axis (all of them for per-tensor)."""
    if axis is None:
        return None
    axis = axis % ndim
    return tuple(a for a in range(ndim) if a != axis)


def _along(values, ndim, axis):
    """Shape per-channel values to broadcast along `axis` of an ndim array."""
    values = np.asarray(values)
    if axis is None:
        return values
    shape = [1] * ndim
    shape[axis % ndim] = values.shape[0]
    return values.reshape(shape)


def choose_qparams(x, *, num_bits, symmetric, signed, axis=None):
    """(scale, zero_point): float64 and int64 arrays, shape () or (C,).

    The range always contains zero, so zero quantises exactly (padding and ReLU zeros stay
    zeros); an all-zero slice gets scale 1 rather than 0, which would divide by zero.
    """
    qmin, qmax = quant_range(num_bits, signed)
    x = np.asarray(x, dtype=np.float64)
    axes = _reduce_axes(x.ndim, axis)
    if symmetric:
        extent = np.max(np.abs(x), axis=axes)
        scale = extent / (2 ** (num_bits - 1) - 1)
        scale = np.where(extent > 0, scale, 1.0)
        zero_point = np.full(np.shape(scale), 0 if signed else 2 ** (num_bits - 1))
    else:
        lo = np.minimum(np.min(x, axis=axes), 0.0)
        hi = np.maximum(np.max(x, axis=axes), 0.0)
        scale = np.where(hi > lo, (hi - lo) / (qmax - qmin), 1.0)
        zero_point = np.clip(qmin - np.rint(lo / scale), qmin, qmax)
    if axis is None:
        return np.float64(scale), np.int64(zero_point)
    return np.asarray(scale, dtype=np.float64), np.asarray(zero_point, dtype=np.int64)


def quantize(x, scale, zero_point, *, num_bits, signed, axis=None):
    """clip(round_half_even(x / scale) + zero_point, qmin, qmax) as int64.

    Round first, then add the integer zero point: rounding after the shift moves the
    half-way ties with the zero point's parity.
    """
    qmin, qmax = quant_range(num_bits, signed)
    x = np.asarray(x, dtype=np.float64)
    scale = _along(np.asarray(scale, dtype=np.float64), x.ndim, axis)
    zero_point = _along(np.asarray(zero_point, dtype=np.int64), x.ndim, axis)
    q = np.rint(x / scale) + zero_point
    return np.clip(q, qmin, qmax).astype(np.int64)


def dequantize(q, scale, zero_point, *, axis=None):
    """(q - zero_point) * scale as float64."""
    q = np.asarray(q, dtype=np.int64)
    scale = _along(np.asarray(scale, dtype=np.float64), q.ndim, axis)
    zero_point = _along(np.asarray(zero_point, dtype=np.int64), q.ndim, axis)
    return (q - zero_point) * scale


def fake_quantize(x, *, num_bits, symmetric, signed, axis=None):
    """Quantise with parameters chosen from x itself, then dequantise."""
    scale, zero_point = choose_qparams(x, num_bits=num_bits, symmetric=symmetric,
                                       signed=signed, axis=axis)
    q = quantize(x, scale, zero_point, num_bits=num_bits, signed=signed, axis=axis)
    return dequantize(q, scale, zero_point, axis=axis)
