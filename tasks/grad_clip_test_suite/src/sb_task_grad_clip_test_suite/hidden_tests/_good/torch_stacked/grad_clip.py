"""Clip gradients by their total norm, torch style: one norm per array in float64, then the
norm of those norms; the scaling multiplies in the array's own dtype."""
import math

import numpy as np
import torch


def _array_norm(t, norm_type):
    if t.numel() == 0:
        return torch.zeros((), dtype=torch.float64)
    return torch.linalg.vector_norm(t.to(torch.float64), ord=norm_type)


def clip_grad_norm(grads, max_norm, *, norm_type=2.0, eps=1e-6, error_if_nonfinite=False):
    if math.isnan(max_norm) or max_norm <= 0:
        raise ValueError("max_norm must be positive")
    if math.isnan(norm_type) or norm_type < 1:
        raise ValueError("norm_type must be >= 1")
    tensors = [torch.from_numpy(np.array(g, copy=True)) for g in grads]
    if tensors:
        norms = torch.stack([_array_norm(t, float(norm_type)) for t in tensors])
        total = torch.linalg.vector_norm(norms, ord=float(norm_type))
    else:
        total = torch.zeros((), dtype=torch.float64)
    if not bool(torch.isfinite(total)):
        if error_if_nonfinite:
            raise ValueError("non-finite total norm")
        return [t.numpy() for t in tensors], float(total)
    coef = torch.tensor(float(max_norm), dtype=torch.float64) / (total + eps)
    if bool(coef < 1):
        tensors = [(t.to(torch.float64) * coef).to(t.dtype) for t in tensors]  # rounded once
    return [t.numpy() for t in tensors], float(total)
