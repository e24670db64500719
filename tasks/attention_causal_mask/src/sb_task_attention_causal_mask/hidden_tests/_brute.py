"""Independent float64 attention: plain Python loops over rows, one key at a time."""
import math

import numpy as np


def brute_attention(q, k, v, *, causal=False, padding=None):
    """q (B,H,Lq,D), k (B,H,Lk,D), v (B,H,Lk,Dv) as float64 numpy; padding (B,Lk) bool, True = pad."""
    batch, heads, num_queries, dim = q.shape
    num_keys, value_dim = k.shape[2], v.shape[3]
    out = np.zeros((batch, heads, num_queries, value_dim))
    for b in range(batch):
        for h in range(heads):
            for i in range(num_queries):
                position = num_keys - num_queries + i
                keys = [
                    j for j in range(num_keys)
                    if (not causal or j <= position) and (padding is None or not padding[b, j])
                ]
                if not keys:
                    continue
                scores = [float(np.dot(q[b, h, i], k[b, h, j])) / math.sqrt(dim) for j in keys]
                top = max(scores)
                weights = [math.exp(s - top) for s in scores]
                total = sum(weights)
                for w, j in zip(weights, keys):
                    out[b, h, i] += (w / total) * v[b, h, j]
    return out
