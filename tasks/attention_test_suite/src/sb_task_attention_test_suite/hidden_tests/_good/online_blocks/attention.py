"""A correct attention computed over blocks of keys with a running (max, sum, output)
state, in the input's own dtype, the way a tiled kernel does it."""
import math

import numpy as np
import torch

BLOCK = 3


def attention(q, k, v, mask=None, causal=False, scale=None):
    as_numpy = not isinstance(q, torch.Tensor)
    qt, kt, vt = (torch.tensor(np.asarray(x)) if as_numpy else x.detach().clone() for x in (q, k, v))
    batch, heads, q_len, d = qt.shape
    key_heads, k_len, dv = kt.shape[1], kt.shape[2], vt.shape[3]
    dtype = qt.dtype
    if scale is None:
        scale = d ** -0.5
    head_of = torch.arange(heads) // (heads // key_heads)
    kt, vt = kt[:, head_of], vt[:, head_of]
    bias = torch.zeros((batch, heads, q_len, k_len), dtype=dtype)
    if mask is not None:
        mt = torch.tensor(np.asarray(mask)) if as_numpy else mask.detach()
        if mt.dtype == torch.bool:
            bias = bias.masked_fill(~mt[:, None, None, :], -math.inf)
        else:
            bias = bias + mt.to(dtype)
    if causal:
        future = torch.arange(k_len)[None, :] > torch.arange(q_len)[:, None] + (k_len - q_len)
        bias = bias.masked_fill(future, -math.inf)
    run_max = torch.full((batch, heads, q_len, 1), -math.inf, dtype=dtype)
    run_sum = torch.zeros((batch, heads, q_len, 1), dtype=dtype)
    run_out = torch.zeros((batch, heads, q_len, dv), dtype=dtype)
    for start in range(0, k_len, BLOCK):
        stop = min(start + BLOCK, k_len)
        scores = (qt @ kt[:, :, start:stop].transpose(-1, -2)) * scale + bias[..., start:stop]
        new_max = torch.maximum(run_max, scores.amax(-1, keepdim=True))
        safe = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
        p = torch.exp(scores - safe)
        correction = torch.exp(run_max - safe)
        run_sum = run_sum * correction + p.sum(-1, keepdim=True)
        run_out = run_out * correction + p @ vt[:, :, start:stop]
        run_max = new_max
    empty = run_sum == 0
    out = torch.where(empty, torch.zeros_like(run_out), run_out / torch.where(empty, torch.ones_like(run_sum), run_sum))
    lse = torch.where(empty, torch.full_like(run_sum, -math.inf),
                      torch.where(torch.isinf(run_max), torch.zeros_like(run_max), run_max) + torch.log(run_sum))
    out, lse = out, lse.squeeze(-1)
    if as_numpy:
        return out.numpy(), lse.numpy()
    return out, lse
