"""Tiled attention with a running softmax state (max, sum, unnormalised output)."""
import math

import numpy as np


def empty_state(n_queries, d_v, dtype=np.float64):
    """The state (m, l, acc) of n_queries rows that have seen no score yet."""
    raise NotImplementedError


def update(state, scores, v):
    """Fold one block of scores (n_queries, n_keys) and its values (n_keys, d_v) into state."""
    raise NotImplementedError


def merge(a, b):
    """Combine the states of two disjoint sets of keys for the same queries."""
    raise NotImplementedError


def finalize(state):
    """Return (output, lse) for a state."""
    raise NotImplementedError


def attention(q, k, v, block_q=64, block_k=64, causal=False, q_offset=0, scale=None):
    """Return (output, lse) of attention computed one (query tile, key block) at a time."""
    raise NotImplementedError
