"""Clip gradients by their total norm: all entries in one float64 vector, numpy's vector norm,
the scaled vector cut back into arrays of the original shapes and dtypes."""
import math

import numpy as np


def clip_grad_norm(grads, max_norm, *, norm_type=2.0, eps=1e-6, error_if_nonfinite=False):
    if not (max_norm > 0):
        raise ValueError("max_norm must be > 0")
    if not (norm_type >= 1):
        raise ValueError("norm_type must be >= 1")
    flat = np.concatenate([np.ravel(g).astype(np.float64) for g in grads] + [np.zeros(0)])
    total = float(np.linalg.norm(flat, ord=norm_type)) if flat.size else 0.0
    if math.isnan(total) or math.isinf(total):
        if error_if_nonfinite:
            raise ValueError(f"total norm is {total}")
        return [np.array(g, copy=True) for g in grads], total
    with np.errstate(divide="ignore"):
        coef = np.float64(max_norm) / np.float64(total + eps)
    if not coef < 1:
        return [np.array(g, copy=True) for g in grads], total
    scaled = flat * coef
    bounds = np.cumsum([0] + [np.size(g) for g in grads])
    return [scaled[a:b].reshape(np.shape(g)).astype(g.dtype) for a, b, g in zip(bounds[:-1], bounds[1:], grads)], total
