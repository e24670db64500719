"""Independent float64 attention: one query row at a time, every allowed key listed."""
import math

import numpy as np


def attention(q, k, v, causal=False, q_offset=0, scale=None):
    """Returns (out, lse) by direct summation; rows with no allowed key give 0 and -inf."""
    n_q, d = q.shape
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    out = np.zeros((n_q, v.shape[1]))
    lse = np.full(n_q, -np.inf)
    for i in range(n_q):
        keys = [j for j in range(k.shape[0]) if not causal or j <= q_offset + i]
        if not keys:
            continue
        s = [scale * math.fsum(q[i] * k[j]) for j in keys]
        top = max(s)
        w = [math.exp(x - top) for x in s]
        total = math.fsum(w)
        lse[i] = top + math.log(total)
        out[i] = sum(wj * v[j] for wj, j in zip(w, keys)) / total
    return out, lse


def softmax_rows(scores, v):
    """(out, lse) for an explicit score matrix that may hold -inf entries."""
    out = np.zeros((scores.shape[0], v.shape[1]))
    lse = np.full(scores.shape[0], -np.inf)
    for i, row in enumerate(scores):
        keep = np.isfinite(row)
        if not keep.any():
            continue
        top = row[keep].max()
        w = np.exp(row[keep] - top)
        lse[i] = top + math.log(w.sum())
        out[i] = w @ v[keep] / w.sum()
    return out, lse
