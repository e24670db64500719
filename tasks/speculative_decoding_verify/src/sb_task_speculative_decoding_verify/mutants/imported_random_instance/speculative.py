"""Verify a block of draft tokens against the target model (speculative sampling)."""
from random import Random as _Random

import numpy as np


def _sample(weights, rng):
    """Draw an index with probability proportional to non-negative `weights`."""
    cdf = np.cumsum(weights)
    idx = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    # u * total can round up to total; never land past the last token with mass.
    return min(idx, int(np.flatnonzero(weights)[-1]))


def verify_draft(draft_tokens, draft_probs, target_probs, rng):
    draft_tokens = np.asarray(draft_tokens)
    q = np.asarray(draft_probs, dtype=np.float64)
    p = np.asarray(target_probs, dtype=np.float64)
    rng = _Random(int(rng.integers(2**63)))  # private stream derived from rng
    emitted = []
    for i in range(draft_tokens.shape[0]):
        tok = int(draft_tokens[i])
        # Keep the drafted token with probability min(1, p/q).
        if rng.random() * q[i, tok] < p[i, tok]:
            emitted.append(tok)
            continue
        emitted.append(_sample(np.maximum(p[i] - q[i], 0.0), rng))
        return emitted
    emitted.append(_sample(p[draft_tokens.shape[0]], rng))
    return emitted
