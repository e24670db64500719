"""Verify a tree of drafted tokens against the target model (tree speculative sampling)."""
import numpy as np


def _sample(weights, rng):
    """Draw an index with probability proportional to the non-negative `weights`."""
    cdf = np.cumsum(weights)
    idx = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    # u * total can round up to total: never land past the last token with mass.
    return min(idx, int(np.flatnonzero(weights)[-1]))


def verify_tree(parents, tokens, draft_probs, target_probs, rng):
    parents = np.asarray(parents)
    tokens = np.asarray(tokens)
    children = [[] for _ in range(parents.shape[0])]
    for v in range(1, parents.shape[0]):
        children[int(parents[v])].append(v)
    path = []
    node = 0
    while True:
        q = np.asarray(draft_probs[node], dtype=np.float64)
        # What the token emitted here must still follow, given the children examined so far
        # were not kept: the target row before the first child.
        residual = np.asarray(target_probs[node], dtype=np.float64)
        kept = None
        for child in children[node]:
            tok = int(tokens[child])
            # The child's token is a fresh draw from q: keep it with probability min(1, r/q).
            if rng.random() * q[tok] < residual[tok]:
                kept = child
                break
            # Not kept: the mass min(r, q) is spent, the rest is what remains to be emitted.
            residual = np.maximum(residual - q, 0.0)
            residual = residual / residual.sum()
        if kept is None:
            return path, _sample(residual, rng)
        path.append(kept)
        node = kept
