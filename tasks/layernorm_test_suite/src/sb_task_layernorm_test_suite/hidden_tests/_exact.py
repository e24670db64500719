"""The contract's exact values, computed in the judge far more accurately than the promise.

The row statistics are built from correctly rounded sums (math.fsum) and an error-free
difference (TwoSum), so the mean is known to about 1e-32 of the row's magnitude and each
deviation x_j - mean to a rounding of itself: the values below are within about 5e-16 * S_j
of the real-arithmetic result, S_j = |w_j| * K + |b_j| the prompt's scale (K = max|x| / D),
which is more than a thousand times inside the promised 1e-12 * S_j."""
import math

import numpy as np


def _two_difference(a: np.ndarray, b: float) -> tuple:
    """a - b as hi + lo exactly (Knuth's TwoSum on a and -b, elementwise)."""
    hi = a - b
    back = hi - a
    lo = (a - (hi - back)) + (-b - back)
    return hi, lo


def _rows(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).reshape(-1, x.shape[-1])


def _affine(y_hat, weight, bias, scale_k):
    w = np.ones(y_hat.shape[-1]) if weight is None else np.asarray(weight, dtype=np.float64)
    b = np.zeros(y_hat.shape[-1]) if bias is None else np.asarray(bias, dtype=np.float64)
    return y_hat * w + b, np.abs(w) * scale_k + np.abs(b)


def exact_layer_norm(x, weight=None, bias=None, eps=1e-5) -> tuple:
    """(y, S): the exact layer_norm of x (float64, x's shape) and the prompt's scale S."""
    rows = _rows(x)
    n = rows.shape[1]
    y_hat = np.empty_like(rows)
    k = np.empty((rows.shape[0], 1))
    for i, row in enumerate(rows):
        values = row.tolist()
        m = math.fsum(values) / n
        tau = math.fsum(values + [-m] * n) / n  # mean = m + tau, to a rounding of tau
        hi, lo = _two_difference(row, m)
        d = hi + (lo - tau)
        var = math.fsum((d * d).tolist()) / n
        root = math.sqrt(var + eps)
        y_hat[i] = d / root
        k[i, 0] = max(abs(v) for v in values) / root
    y, scale = _affine(y_hat, weight, bias, k)
    return y.reshape(x.shape), scale.reshape(x.shape)


def exact_rms_norm(x, weight=None, eps=1e-6) -> tuple:
    """(y, S): the exact rms_norm of x (float64, x's shape) and the prompt's scale S."""
    rows = _rows(x)
    n = rows.shape[1]
    roots = np.array([math.sqrt(math.fsum((row * row).tolist()) / n + eps) for row in rows])[:, None]
    k = np.abs(rows).max(axis=1, keepdims=True) / roots
    y, scale = _affine(rows / roots, weight, None, k)
    return y.reshape(x.shape), scale.reshape(x.shape)


def promised_bound(y: np.ndarray, scale: np.ndarray, dtype) -> np.ndarray:
    """The prompt's accuracy: 1e-12 * S for float64; 2**-24 * |y| + 1e-12 * S for float32."""
    bound = 1e-12 * scale
    if np.dtype(dtype) == np.float32:
        bound = bound + 2.0**-24 * np.abs(y)
    return bound
