"""Numerically stable logsumexp, softmax and log_softmax over one axis."""
import numpy as np


def _as_float(x):
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    return x


def _shift_and_sum(x, axis):
    """Return (x - m, m, sum(exp(x - m))) with every reduced quantity kept as a size-1 axis.

    m is the slice maximum, or 0 for a slice that is entirely -inf, so the shift never
    forms -inf - (-inf) = NaN; such a slice simply sums to 0.
    """
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)
    shifted = x - m
    total = np.sum(np.exp(shifted), axis=axis, keepdims=True)
    return shifted, m, total


def logsumexp(x, axis=-1, keepdims=False):
    x = _as_float(x)
    _, m, total = _shift_and_sum(x, axis)
    with np.errstate(divide="ignore"):
        out = np.log(total) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis)
    out = out.astype(x.dtype, copy=False)
    return float(out) if out.ndim == 0 else out


def softmax(x, axis=-1):
    x = _as_float(x)
    shifted, _, total = _shift_and_sum(x, axis)
    safe_total = np.where(total > 0, total, 1)
    return (np.exp(shifted) / safe_total).astype(x.dtype, copy=False)


def log_softmax(x, axis=-1):
    x = _as_float(x)
    shifted, _, total = _shift_and_sum(x, axis)
    safe_total = np.where(total > 0, total, 1)
    out = shifted - np.log(safe_total)
    # A fully masked slice: shifted is already -inf everywhere and log(1) = 0 keeps it so.
    return out.astype(x.dtype, copy=False)
