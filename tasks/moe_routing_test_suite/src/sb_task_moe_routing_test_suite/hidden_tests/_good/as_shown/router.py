"""Top-k mixture-of-experts routing with a capacity per expert."""
import numpy as np


def route(logits, *, k, capacity):
    """Route each of T tokens to k of E experts; each expert takes at most `capacity` slots.

    logits: float64 numpy array (T, E), finite. Returns (experts, gates), both (T, k): column
    j holds each token's j-th choice (its expert id, or -1 where that slot was dropped) and
    the gate of that choice (0.0 where dropped). See prompt.md for the whole contract.
    """
    if logits.ndim != 2:
        raise ValueError("logits must be a 2-D array (tokens, experts)")
    tokens, n_experts = logits.shape
    if not 1 <= k <= n_experts:
        raise ValueError("k must lie in 1..E")
    if capacity < 0:
        raise ValueError("capacity must be >= 0")
    if not np.isfinite(logits).all():
        raise ValueError("logits must be finite")

    # descending logits, equal logits in ascending expert id (a stable sort of the negation)
    chosen = np.argsort(-logits, axis=1, kind="stable")[:, :k]
    top = np.take_along_axis(logits, chosen, axis=1)
    weights = np.exp(top - top[:, :1])  # column 0 holds the token's largest logit
    gates = weights / weights.sum(axis=1, keepdims=True)

    experts = np.full((tokens, k), -1, dtype=np.int64)
    kept = np.zeros((tokens, k), dtype=np.float64)
    load = np.zeros(n_experts, dtype=np.int64)
    for rank in range(k):
        # offer this rank's slots by descending gate, equal gates by ascending token id
        for t in np.lexsort((np.arange(tokens), -gates[:, rank])):
            expert = chosen[t, rank]
            if load[expert] < capacity:
                load[expert] += 1
                experts[t, rank] = expert
                kept[t, rank] = gates[t, rank]
    return experts, kept
