"""A correct quantizer written element by element with Python floats (IEEE float64) and the
built-in round(), which rounds half to even."""
import itertools
import math

import numpy as np


def _limits(bits, symmetric):
    if isinstance(bits, bool) or bits < 2 or bits > 16:
        raise ValueError("bits out of range")
    if symmetric:
        top = 2 ** (bits - 1) - 1
        return -top, top, (np.int8 if bits <= 8 else np.int16)
    return 0, 2**bits - 1, (np.uint8 if bits <= 8 else np.uint16)


def _channel_parameters(values, symmetric, qmax):
    if symmetric:
        a = max(abs(v) for v in values)
        return (a / qmax if a != 0 else 1.0), 0
    lo, hi = min(min(values), 0.0), max(max(values), 0.0)
    scale = (hi - lo) / qmax if hi != lo else 1.0
    return scale, min(max(round(-lo / scale), 0), qmax)


def quantize(x, *, axis=None, symmetric=True, bits=8):
    if x.dtype != np.float32 and x.dtype != np.float64:
        raise ValueError("dtype")
    qmin, qmax, dtype = _limits(bits, symmetric)
    if not all(math.isfinite(v) for v in x.ravel().tolist()):
        raise ValueError("not finite")
    if axis is not None:
        if axis < -x.ndim or axis >= x.ndim:
            raise ValueError("axis")
        axis = axis + x.ndim if axis < 0 else axis
    channels = 1 if axis is None else x.shape[axis]
    members = [[] for _ in range(channels)]
    for index in itertools.product(*(range(n) for n in x.shape)):
        members[0 if axis is None else index[axis]].append(index)
    q = np.zeros(x.shape, dtype=np.int64)
    scales, zero_points = [], []
    for indices in members:
        values = [float(x[i]) for i in indices]
        scale, zp = _channel_parameters(values, symmetric, qmax)
        for i, v in zip(indices, values):
            q[i] = min(max(round(v / scale) + zp, qmin), qmax)
        scales.append(scale)
        zero_points.append(zp)
    if axis is None:
        return q.astype(dtype), np.array(scales[0], dtype=np.float64), np.array(zero_points[0], dtype=np.int32)
    return q.astype(dtype), np.array(scales, dtype=np.float64), np.array(zero_points, dtype=np.int32)


def dequantize(q, scale, zero_point, *, axis=None):
    q = np.asarray(q)
    scales = np.asarray(scale, dtype=np.float64).reshape(-1).tolist()
    zero_points = np.asarray(zero_point).reshape(-1).tolist()
    out = np.zeros(q.shape, dtype=np.float64)
    for index in itertools.product(*(range(n) for n in q.shape)):
        c = 0 if axis is None else index[axis]
        out[index] = (int(q[index]) - int(zero_points[c])) * scales[c]
    return out
