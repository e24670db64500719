"""A correct sampler in torch float64 that never renormalises before the draw: it scales u
by the kept mass instead, and applies min_p in log space."""
import math

import numpy as np
import torch


def _check(logits, temperature, top_k, top_p, min_p, u=0.0):
    if not (isinstance(logits, np.ndarray) and logits.ndim == 1 and logits.shape[0] > 0
            and logits.dtype == np.float64):
        raise ValueError("logits must be a 1-D float64 array")
    x = torch.from_numpy(logits.copy())
    if torch.isnan(x).any() or (x == math.inf).any() or (x == -math.inf).all():
        raise ValueError("logits must be finite or -inf, one at least finite")
    checks = [temperature >= 0, top_k is None or top_k >= 0, top_p is None or 0 < top_p <= 1,
              min_p is None or 0 <= min_p <= 1, 0 <= u < 1]
    if not all(checks):
        raise ValueError("argument out of range")
    return x


def _weights(x, temperature, top_k, top_p, min_p):
    """Unnormalised weights of the kept tokens, 0 elsewhere."""
    order = torch.sort(x, descending=True, stable=True).indices
    finite = int(torch.isfinite(x).sum())
    if temperature == 0:
        w = torch.zeros_like(x)
        w[order[0]] = 1.0
        return w
    log_w = (x - x[order[0]]) / temperature  # max first: rounding scales with the gap, not the logit
    w = torch.exp(log_w)
    keep = torch.zeros(x.shape[0], dtype=torch.bool)
    survivors = order[:finite]
    if top_k:
        survivors = survivors[:top_k]
    if top_p is not None:
        cumulative = torch.cumsum(w[survivors], 0) / w[survivors].sum()
        crossing = torch.nonzero(cumulative >= top_p)
        if crossing.numel():
            survivors = survivors[: int(crossing[0, 0]) + 1]
    keep[survivors] = True
    if min_p:
        keep &= log_w >= math.log(min_p)
    return torch.where(keep, w, torch.zeros_like(w))


def filtered_probs(logits, *, temperature=1.0, top_k=None, top_p=None, min_p=None):
    x = _check(logits, temperature, top_k, top_p, min_p)
    w = _weights(x, temperature, top_k, top_p, min_p)
    return (w / w.sum()).numpy()


def sample(logits, *, u, temperature=1.0, top_k=None, top_p=None, min_p=None):
    x = _check(logits, temperature, top_k, top_p, min_p, u)
    w = _weights(x, temperature, top_k, top_p, min_p)
    cumulative = torch.cumsum(w, 0)
    past = torch.nonzero(cumulative > u * cumulative[-1])
    if past.numel():
        return int(past[0, 0])
    return int(torch.nonzero(w)[-1, 0])
