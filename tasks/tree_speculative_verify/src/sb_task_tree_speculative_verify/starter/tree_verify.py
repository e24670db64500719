"""Verify a tree of drafted tokens against the target model."""
import numpy as np  # noqa: F401


def verify_tree(parents, tokens, draft_probs, target_probs, rng):
    """Return (path, token): the kept nodes from the root down, and the final token (see prompt.md).

    parents: int array (N,); tokens: int array (N,); draft_probs, target_probs: float64 (N, V);
    rng: numpy.random.Generator.
    """
    raise NotImplementedError
