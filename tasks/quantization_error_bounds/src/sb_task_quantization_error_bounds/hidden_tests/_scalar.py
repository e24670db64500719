"""Independent scalar model: Python floats, builtin min/max/abs and round() (half to even)."""
import itertools

import numpy as np


def qrange(num_bits, signed):
    if signed:
        return -(2 ** (num_bits - 1)), 2 ** (num_bits - 1) - 1
    return 0, 2 ** num_bits - 1


def params(values, num_bits, symmetric, signed):
    """(scale, zero_point) for one slice given as a flat list of floats."""
    qmin, qmax = qrange(num_bits, signed)
    if symmetric:
        extent = max(abs(v) for v in values)
        scale = extent / (2 ** (num_bits - 1) - 1) if extent > 0 else 1.0
        return scale, (0 if signed else 2 ** (num_bits - 1))
    lo = min(min(values), 0.0)
    hi = max(max(values), 0.0)
    scale = (hi - lo) / (qmax - qmin) if hi > lo else 1.0
    zero_point = min(max(qmin - round(lo / scale), qmin), qmax)
    return scale, zero_point


def quantize_one(v, scale, zero_point, num_bits, signed):
    qmin, qmax = qrange(num_bits, signed)
    return min(max(round(v / scale) + zero_point, qmin), qmax)


def channel_slices(x, axis):
    """[(index tuples of channel c)] for every channel c along axis (or one slice for None)."""
    all_index = list(itertools.product(*[range(n) for n in x.shape]))
    if axis is None:
        return [all_index]
    axis = axis % x.ndim
    return [[i for i in all_index if i[axis] == c] for c in range(x.shape[axis])]


def fake_quantize(x, num_bits, symmetric, signed, axis):
    """Returns (dequantised copy, per-element scale) for a float64 numpy array x."""
    out = np.zeros(x.shape)
    scales = np.zeros(x.shape)
    for indices in channel_slices(x, axis):
        values = [float(x[i]) for i in indices]
        scale, zero_point = params(values, num_bits, symmetric, signed)
        for i in indices:
            q = quantize_one(float(x[i]), scale, zero_point, num_bits, signed)
            out[i] = (q - zero_point) * scale
            scales[i] = scale
    return out, scales
