"""Token sampling from logits: temperature, then top-k, top-p and min-p filters, then one
draw by inverse CDF with a caller-supplied u, so every call is deterministic."""
import math

import numpy as np


def _check(logits, temperature, top_k, top_p, min_p):
    if not isinstance(logits, np.ndarray) or logits.ndim != 1 or logits.size == 0 or logits.dtype != np.float64:
        raise ValueError("logits must be a non-empty 1-D float64 numpy array")
    if np.isnan(logits).any() or np.isposinf(logits).any():
        raise ValueError("logits may hold finite values and -inf only")
    if not np.isfinite(logits).any():
        raise ValueError("at least one logit must be finite")
    if not temperature >= 0:
        raise ValueError("temperature must be >= 0")
    if top_k is not None and top_k < 0:
        raise ValueError("top_k must be None or >= 0")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError("top_p must be None or in (0, 1]")
    if min_p is not None and not 0 <= min_p <= 1:
        raise ValueError("min_p must be None or in [0, 1]")


def _rank(logits):
    """Token ids by logit, largest first; equal logits by smaller id first."""
    ids = np.arange(logits.size)
    return np.lexsort((ids, -logits))


def filtered_probs(logits, *, temperature=1.0, top_k=None, top_p=None, min_p=None):
    """The distribution sample() draws from: float64, one entry per token, 0 where filtered."""
    _check(logits, temperature, top_k, top_p, min_p)
    n = logits.size
    order = _rank(logits)
    if temperature == 0:
        result = np.zeros(n)
        result[order[0]] = 1.0
        return result
    probs = np.exp((logits - logits.max()) / temperature)  # max first: rounding scales with the gap, not the logit
    probs /= probs.sum()
    keep = np.zeros(n, dtype=bool)
    keep[order[: int(np.isfinite(logits).sum())]] = True
    if top_k:
        kth = logits[order[min(top_k, n) - 1]]
        keep &= logits >= kth
    if top_p is not None:
        ranked = order[keep[order]]
        mass = probs[ranked] / probs[ranked].sum()
        reached = np.nonzero(np.cumsum(mass) >= top_p)[0]
        if reached.size:
            keep[ranked[reached[0] + 1:]] = False
    if min_p:
        keep &= probs >= min_p * probs[order[0]]
    result = np.where(keep, probs, 0.0)
    return result / result.sum()


def sample(logits, *, u, temperature=1.0, top_k=None, top_p=None, min_p=None):
    """One token id: the first id (ascending) whose cumulative filtered probability exceeds u."""
    probs = filtered_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p)
    if not 0 <= u < 1:
        raise ValueError("u must be in [0, 1)")
    cdf = np.cumsum(probs)
    index = int(np.searchsorted(cdf, u, side="right"))
    if index >= probs.size:
        index = int(np.nonzero(probs)[0][-1])
    return index
