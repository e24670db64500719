"""A correct attention written as one query row at a time in numpy float64."""
import math

import numpy as np
import torch


def _to_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def attention(q, k, v, mask=None, causal=False, scale=None):
    as_torch = isinstance(q, torch.Tensor)
    dtype = _to_numpy(q).dtype
    qa, ka, va = (_to_numpy(x).astype(np.float64) for x in (q, k, v))
    batch, heads, q_len, d = qa.shape
    key_heads, k_len, dv = ka.shape[1], ka.shape[2], va.shape[3]
    group = heads // key_heads
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    additive = None
    padding = None
    if mask is not None:
        m = _to_numpy(mask)
        if m.dtype == np.bool_:
            padding = m
        else:
            additive = np.broadcast_to(m.astype(np.float64), (batch, heads, q_len, k_len))
    out = np.zeros((batch, heads, q_len, dv))
    lse = np.full((batch, heads, q_len), -np.inf)
    for b in range(batch):
        for h in range(heads):
            kv = h // group
            for i in range(q_len):
                seen = []
                for j in range(k_len):
                    if causal and j > i + (k_len - q_len):
                        continue
                    if padding is not None and not padding[b, j]:
                        continue
                    logit = scale * float(qa[b, h, i] @ ka[b, kv, j])
                    if additive is not None:
                        logit += additive[b, h, i, j]
                    if logit != -math.inf:
                        seen.append((j, logit))
                if not seen:
                    continue
                top = max(logit for _, logit in seen)
                weights = np.array([math.exp(logit - top) for _, logit in seen])
                total = weights.sum()
                rows = va[b, kv, [j for j, _ in seen]]
                out[b, h, i] = weights @ rows / total
                lse[b, h, i] = top + math.log(total)
    out, lse = out.astype(dtype), lse.astype(dtype)
    if as_torch:
        return torch.from_numpy(out), torch.from_numpy(lse)
    return out, lse
