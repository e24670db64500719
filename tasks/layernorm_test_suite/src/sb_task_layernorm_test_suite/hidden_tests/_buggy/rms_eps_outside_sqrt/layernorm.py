"""Layer normalisation and RMS normalisation over the last axis of a numpy array.

Both functions work in float64 whatever the input dtype, with two passes over each row
(the mean first, then the squared deviations from it), and round the result to x's dtype
once, at the end.
"""
import numpy as np


def layer_norm(x, weight=None, bias=None, *, eps=1e-5):
    """y = (x - mean) / sqrt(var + eps) * weight + bias, each row of the last axis on its own.

    mean and var are the row's mean and biased variance (divided by n, the row length);
    weight (default all ones) and bias (default all zeros) have shape (n,). The result is a
    new array of x's shape and dtype; x, weight and bias are left as they were."""
    x64 = np.asarray(x, dtype=np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    centred = x64 - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    y = centred / np.sqrt(var + eps)
    if weight is not None:
        y = y * np.asarray(weight, dtype=np.float64)
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64)
    return y.astype(x.dtype)


def rms_norm(x, weight=None, *, eps=1e-6):
    """y = x / sqrt(mean(x**2) + eps) * weight, each row of the last axis on its own.

    mean(x**2) is the row's mean square (divided by n); weight (default all ones) has shape
    (n,). The result is a new array of x's shape and dtype; x and weight are left as they were."""
    x64 = np.asarray(x, dtype=np.float64)
    mean_square = np.mean(x64 * x64, axis=-1, keepdims=True)
    y = x64 / (np.sqrt(mean_square) + eps)
    if weight is not None:
        y = y * np.asarray(weight, dtype=np.float64)
    return y.astype(x.dtype)
