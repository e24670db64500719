"""Probe: the verification loop, run inside the solution's process (one call per round).

The judge draws every draft and builds every probability row; this file only feeds row r of
each array (a view, as a caller would pass it) to verify_draft with one Generator shared by
all rounds, and reports what came back. It holds no distribution and no expected value.
"""
import random

import numpy as np

from speculative import verify_draft


def run_rounds(draft_tokens, draft_probs, target_probs, verify_seed, global_seed=None):
    if global_seed is not None:
        np.random.seed(global_seed)
        random.seed(global_seed)
    rng = np.random.default_rng(verify_seed)
    flat, lengths = [], []
    container_types, element_types = set(), set()
    for r in range(draft_tokens.shape[0]):
        out = verify_draft(draft_tokens[r], draft_probs[r], target_probs[r], rng)
        container_types.add(type(out).__name__)
        n = 0
        for token in out:
            element_types.add(type(token).__name__)
            flat.append(int(token))
            n += 1
        lengths.append(n)
    return {
        "tokens": np.asarray(flat, dtype=np.int64),
        "lengths": np.asarray(lengths, dtype=np.int64),
        "container_types": sorted(container_types),
        "element_types": sorted(element_types),
        "inputs_after": [draft_tokens, draft_probs, target_probs],
    }
