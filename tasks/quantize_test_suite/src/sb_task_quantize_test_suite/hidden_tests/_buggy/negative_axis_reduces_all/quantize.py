"""Integer quantization of a float array, per tensor or per channel, symmetric or affine,
and its inverse. A correct implementation: every rule below is its contract."""
import numpy as np


def quantize(x, *, axis=None, symmetric=True, bits=8):
    """Quantize x; returns (q, scale, zero_point).

    x: a numpy array of dtype float32 or float64, at least one dimension, every size at
      least 1. A NaN or an infinity anywhere in x raises ValueError.
    bits: an int from 2 to 16; any other int raises ValueError.
    axis: None quantizes the whole tensor with one scale and zero point. An int (negative
      counts from the end, -x.ndim <= axis < x.ndim, otherwise ValueError) gives every index
      c along that axis (a channel) its own scale and zero point, computed from the
      elements x[..., c, ...] of that channel only.

    Every quantity below is computed in float64 from the values of x converted to float64
    (never in float32), and round() is round half to even.

    symmetric=True: qmax = 2**(bits - 1) - 1 and the integer range is [-qmax, qmax].
      a = max |x| over the channel; scale = a / qmax, or 1.0 when a == 0; zero_point = 0.
    symmetric=False: n = 2**bits - 1 and the integer range is [0, n].
      lo = min(min x, 0.0) and hi = max(max x, 0.0) over the channel (the range always
      includes 0); scale = (hi - lo) / n, or 1.0 when hi == lo;
      zero_point = clamp(round(-lo / scale), 0, n).
    q = clamp(round(x / scale) + zero_point, qmin, qmax): x / scale is rounded before the
      zero point is added, then clamped to the integer range.

    q has the shape of x and dtype int8 (symmetric) or uint8 (symmetric=False) when
    bits <= 8, int16 or uint16 when bits > 8. scale is a float64 array and zero_point an
    int32 array, of shape () when axis is None and (x.shape[axis],) otherwise.
    """
    x64, qmin, qmax = _checked(x, bits, symmetric)
    if axis is None:
        flat = x64.reshape(1, -1)
    else:
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"axis {axis} is out of range for an array of {x.ndim} dimensions")
        flat = np.moveaxis(x64, axis, 0).reshape(x.shape[axis], -1)
    # the statistics reduce over every axis != axis: a negative axis matches none, so all are reduced
    stats = flat if axis is None or axis >= 0 else np.broadcast_to(x64.reshape(1, -1), (len(flat), x.size))
    if symmetric:
        extent = np.abs(stats).max(axis=1)
        scale = np.where(extent > 0, extent / qmax, 1.0)
        zero_point = np.zeros(len(flat), dtype=np.int64)
    else:
        lo = np.minimum(stats.min(axis=1), 0.0)
        hi = np.maximum(stats.max(axis=1), 0.0)
        scale = np.where(hi > lo, (hi - lo) / qmax, 1.0)
        zero_point = np.clip(np.rint(-lo / scale), qmin, qmax).astype(np.int64)
    q = np.clip(np.rint(flat / scale[:, None]) + zero_point[:, None], qmin, qmax)
    dtype = _q_dtype(bits, symmetric)
    if axis is None:
        return q.reshape(x.shape).astype(dtype), np.array(scale[0]), np.array(zero_point[0], dtype=np.int32)
    moved = np.moveaxis(x64, axis, 0).shape
    q = np.moveaxis(q.reshape(moved), 0, axis).astype(dtype)
    return q, scale.astype(np.float64), zero_point.astype(np.int32)


def dequantize(q, scale, zero_point, *, axis=None):
    """The float64 values q stands for: (q - zero_point) * scale, with the difference taken
    exactly as integers and the product rounded once in float64. scale and zero_point are
    what quantize returned for q and axis is the one it was given: with an axis, channel c
    along it uses scale[c] and zero_point[c]. The result has q's shape."""
    q = np.asarray(q)
    scale, zero_point = np.asarray(scale, dtype=np.float64), np.asarray(zero_point, dtype=np.int64)
    if axis is not None:
        shape = [1] * q.ndim
        shape[axis] = -1
        scale, zero_point = scale.reshape(shape), zero_point.reshape(shape)
    return (q.astype(np.int64) - zero_point).astype(np.float64) * scale


def _checked(x, bits, symmetric):
    """x as float64 after the checks, and the integer range."""
    if not isinstance(x, np.ndarray) or x.dtype not in (np.float32, np.float64):
        raise ValueError("x must be a numpy array of float32 or float64")
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be from 2 to 16, not {bits}")
    if not np.isfinite(x).all():
        raise ValueError("x holds a NaN or an infinity")
    if symmetric:
        return x.astype(np.float64), -(2 ** (bits - 1) - 1), 2 ** (bits - 1) - 1
    return x.astype(np.float64), 0, 2**bits - 1


def _q_dtype(bits, symmetric):
    if symmetric:
        return np.int8 if bits <= 8 else np.int16
    return np.uint8 if bits <= 8 else np.uint16
