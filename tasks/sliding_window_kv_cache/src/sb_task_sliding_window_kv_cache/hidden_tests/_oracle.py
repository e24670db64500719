"""The brute-force model: the whole current sequence kept in full, attention from the definition.

Nothing here is a cache. The model keeps every raw (unrotated) query, key and value of the
sequence as it stands (a rewind cuts the tail off), rotates with complex multiplication, and
computes each query's output by looping over every earlier key and asking the mask rule. The
positions a cache must hold are found by asking, for every length the sequence may have when
the next step starts and every position a later query may take, which keys that query sees.
"""
import functools
import math

import numpy as np


def rotate(x, positions, base):
    """Rotary embedding as a complex rotation of (x[i], x[i + D/2]) by position * theta_i."""
    d = x.shape[-1]
    half = d // 2
    theta = np.array([base ** (-2.0 * i / d) for i in range(half)])
    angles = np.asarray(positions, dtype=np.float64)[:, None] * theta
    z = (x[..., :half] + 1j * x[..., half:]) * np.exp(1j * angles)
    return np.concatenate([z.real, z.imag], axis=-1)


def sees(query_pos, key_pos, window, num_sinks):
    """The mask rule of the prompt, written out."""
    if key_pos > query_pos:
        return False
    return query_pos - key_pos < window or key_pos < num_sinks


def attend(q_raw, q_pos, k_raw, k_pos, v, window, num_sinks, base):
    """Outputs (H, Tq, D) of queries at q_pos over keys at k_pos, one query and key at a time."""
    q = rotate(q_raw, q_pos, base)
    k = rotate(k_raw, k_pos, base)
    n_heads, _, d = q.shape
    out = np.zeros(q.shape)
    for h in range(n_heads):
        for a, qp in enumerate(q_pos):
            cols = [b for b, kp in enumerate(k_pos) if sees(qp, kp, window, num_sinks)]
            scores = [float(np.dot(q[h, a], k[h, b])) / math.sqrt(d) for b in cols]
            top = max(scores)
            weights = [math.exp(s - top) for s in scores]
            total = math.fsum(weights)
            for w, b in zip(weights, cols):
                out[h, a] += (w / total) * v[h, b]
    return out


@functools.lru_cache(maxsize=None)
def reachable(seen, rewindable, window, num_sinks):
    """Positions some query of a later call could attend to: the next step may start at any
    length from seen - rewindable to seen; a later query of it, or of later steps, sits at a
    position >= that length (a query at length + window or later sees no key below length
    that one at length + window - 1 does not)."""
    held = set()
    for length in range(seen - rewindable, seen + 1):
        for query_pos in range(length, length + window):
            # Any other key is neither a sink nor within window of a query at >= length.
            candidates = set(range(min(num_sinks, length))) | set(range(max(0, length - window), length))
            held |= {j for j in candidates if sees(query_pos, j, window, num_sinks)}
    return sorted(held)


class Model:
    """The sequence as it stands, raw, with the bookkeeping the prompt defines."""

    def __init__(self, n_heads, head_dim, window, num_sinks, max_rewind, base):
        self.window, self.num_sinks, self.max_rewind, self.base = window, num_sinks, max_rewind, base
        self.q = np.zeros((n_heads, 0, head_dim))
        self.k = np.zeros((n_heads, 0, head_dim))
        self.v = np.zeros((n_heads, 0, head_dim))
        self.rewindable = 0

    @property
    def seen(self):
        return self.k.shape[1]

    def step(self, q, k, v):
        start = self.seen
        self.q = np.concatenate([self.q, q], axis=1)
        self.k = np.concatenate([self.k, k], axis=1)
        self.v = np.concatenate([self.v, v], axis=1)
        self.rewindable = min(self.max_rewind, q.shape[1])
        q_pos = list(range(start, self.seen))
        return attend(q, q_pos, self.k, list(range(self.seen)), self.v,
                      self.window, self.num_sinks, self.base)

    def rewind(self, n):
        keep = self.seen - n
        self.q, self.k, self.v = self.q[:, :keep], self.k[:, :keep], self.v[:, :keep]
        self.rewindable = 0

    def held(self):
        return reachable(self.seen, self.rewindable, self.window, self.num_sinks)
