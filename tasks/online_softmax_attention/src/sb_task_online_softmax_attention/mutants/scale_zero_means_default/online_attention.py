"""Tiled attention with a running softmax state (max, sum, unnormalised output)."""
import math

import numpy as np


def empty_state(n_queries, d_v, dtype=np.float64):
    """The state of rows that have seen no score yet: max -inf, sum 0, output 0."""
    return (np.full(n_queries, -np.inf, dtype=dtype),
            np.zeros(n_queries, dtype=dtype),
            np.zeros((n_queries, d_v), dtype=dtype))


def _reference_point(m):
    """The running max where finite, else 0: exp(-inf - ref) is then 0, never exp(nan)."""
    return np.where(np.isneginf(m), 0.0, m)


def update(state, scores, v):
    """Fold one block of scores (n_queries, n_keys) and its values (n_keys, d_v) into state."""
    m, l, acc = state
    m_new = np.maximum(m, scores.max(axis=1))
    ref = _reference_point(m_new)
    alpha = np.exp(m - ref)
    p = np.exp(scores - ref[:, None])
    return m_new, alpha * l + p.sum(axis=1), alpha[:, None] * acc + p @ v


def merge(a, b):
    """Combine the states of two disjoint sets of keys for the same queries."""
    m_a, l_a, acc_a = a
    m_b, l_b, acc_b = b
    m = np.maximum(m_a, m_b)
    ref = _reference_point(m)
    w_a = np.exp(m_a - ref)
    w_b = np.exp(m_b - ref)
    return m, w_a * l_a + w_b * l_b, w_a[:, None] * acc_a + w_b[:, None] * acc_b


def finalize(state):
    """(output, lse); a row that attended to nothing gives output 0 and lse -inf."""
    m, l, acc = state
    seen = l > 0
    out = np.zeros_like(acc)
    out[seen] = acc[seen] / l[seen, None]
    lse = np.full_like(m, -np.inf)
    lse[seen] = m[seen] + np.log(l[seen])
    return out, lse


def attention(q, k, v, block_q=64, block_k=64, causal=False, q_offset=0, scale=None):
    """softmax(scale * q k^T [+ causal mask]) v, one (query tile, key block) at a time."""
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = scale or 1.0 / math.sqrt(d)
    dtype = np.result_type(q, k, v)
    out = np.zeros((n_q, v.shape[1]), dtype=dtype)
    lse = np.zeros(n_q, dtype=dtype)
    for q_start in range(0, n_q, block_q):
        q_end = min(q_start + block_q, n_q)
        q_pos = q_offset + np.arange(q_start, q_end)
        state = empty_state(q_end - q_start, v.shape[1], dtype)
        for k_start in range(0, n_k, block_k):
            if causal and k_start > q_pos[-1]:
                break  # this block and every later one lie wholly in the tile's future
            k_end = min(k_start + block_k, n_k)
            scores = scale * (q[q_start:q_end] @ k[k_start:k_end].T)
            if causal:
                k_pos = np.arange(k_start, k_end)
                scores = np.where(k_pos[None, :] > q_pos[:, None], -np.inf, scores)
            state = update(state, scores, v[k_start:k_end])
        out[q_start:q_end], lse[q_start:q_end] = finalize(state)
    return out, lse
