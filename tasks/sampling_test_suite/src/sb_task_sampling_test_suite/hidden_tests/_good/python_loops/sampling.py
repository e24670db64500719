"""A correct sampler written with Python lists and math, token by token."""
import math

import numpy as np


def _validated(logits, temperature, top_k, top_p, min_p):
    if not isinstance(logits, np.ndarray) or logits.dtype != np.float64 or logits.ndim != 1 or len(logits) == 0:
        raise ValueError("bad logits")
    values = [float(x) for x in logits]
    if any(math.isnan(x) or x == math.inf for x in values) or all(x == -math.inf for x in values):
        raise ValueError("bad logits")
    if math.isnan(temperature) or temperature < 0:
        raise ValueError("bad temperature")
    if top_k is not None and top_k < 0:
        raise ValueError("bad top_k")
    if top_p is not None and (math.isnan(top_p) or top_p <= 0 or top_p > 1):
        raise ValueError("bad top_p")
    if min_p is not None and (math.isnan(min_p) or min_p < 0 or min_p > 1):
        raise ValueError("bad min_p")
    return values


def _kept(values, temperature, top_k, top_p, min_p):
    """{token id: unnormalised weight} of the tokens that survive every filter."""
    ranked = sorted((i for i, x in enumerate(values) if x > -math.inf), key=lambda i: (-values[i], i))
    if temperature == 0:
        return {ranked[0]: 1.0}
    top = values[ranked[0]]
    weight = {i: math.exp((values[i] - top) / temperature) for i in ranked}
    if top_k is not None and top_k > 0:
        ranked = ranked[:top_k]
    if top_p is not None:
        total = math.fsum(weight[i] for i in ranked)
        running = 0.0
        for position, i in enumerate(ranked):
            running += weight[i] / total
            if running >= top_p:
                ranked = ranked[: position + 1]
                break
    if min_p is not None and min_p > 0:
        ranked = [i for i in ranked if weight[i] >= min_p * weight[ranked[0]]]
    return {i: weight[i] for i in ranked}


def filtered_probs(logits, *, temperature=1.0, top_k=None, top_p=None, min_p=None):
    values = _validated(logits, temperature, top_k, top_p, min_p)
    kept = _kept(values, temperature, top_k, top_p, min_p)
    total = math.fsum(kept.values())
    return np.array([kept.get(i, 0.0) / total for i in range(len(values))], dtype=np.float64)


def sample(logits, *, u, temperature=1.0, top_k=None, top_p=None, min_p=None):
    probs = filtered_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p)
    if math.isnan(u) or u < 0 or u >= 1:
        raise ValueError("bad u")
    running, last = 0.0, None
    for i, p in enumerate(probs):
        if p > 0:
            running += p
            last = i
            if u < running:
                return i
    return last
