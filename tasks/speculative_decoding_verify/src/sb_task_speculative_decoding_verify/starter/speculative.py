"""Verify a block of draft tokens against the target model."""
import numpy as np


def verify_draft(draft_tokens, draft_probs, target_probs, rng):
    """Return the list of tokens to emit (see prompt.md).

    draft_tokens: int array (k,); draft_probs: float64 (k, V);
    target_probs: float64 (k + 1, V); rng: numpy.random.Generator.
    """
    raise NotImplementedError
