"""Clip a list of gradient arrays by their total norm (the rules are in the task's prompt)."""
import math

import numpy as np


def _total_norm(grads, norm_type):
    """The norm of all entries of all arrays together, in float64."""
    entries = [g.astype(np.float64).ravel() for g in grads if g.size > 0]
    if not entries:
        return 0.0
    if norm_type == math.inf:
        return float(np.max([np.max(np.abs(e)) for e in entries]))
    power_sum = sum(float(np.sum(np.abs(e) ** norm_type)) for e in entries)
    return power_sum ** (1.0 / norm_type)


def _scaled(g, coef):
    """g times coef, computed in float64 and rounded once to g's dtype (a 0-d array stays one)."""
    out = g.astype(np.float64)
    out *= coef
    return out.astype(g.dtype)


def clip_grad_norm(grads, max_norm, *, norm_type=2.0, eps=1e-6, error_if_nonfinite=False):
    """Return (clipped, total_norm): new arrays scaled by min(1, max_norm / (total_norm + eps)),
    and the total norm of the arrays as given, a Python float."""
    if not max_norm > 0:
        raise ValueError(f"max_norm must be greater than 0, got {max_norm}")
    if not norm_type >= 1:
        raise ValueError(f"norm_type must be at least 1, got {norm_type}")
    total = _total_norm(grads, float(norm_type))
    if not math.isfinite(total) and error_if_nonfinite:
        raise ValueError(f"the total norm of the gradients is {total}")
    denominator = total + eps
    coef = max_norm / denominator if denominator > 0 else math.inf
    if coef < 1:
        return [_scaled(g, coef) for g in grads], total
    return [g.copy() for g in grads], total
