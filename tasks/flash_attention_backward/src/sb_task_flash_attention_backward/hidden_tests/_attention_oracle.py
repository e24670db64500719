"""Independent float64 oracle: plain masked attention differentiated by torch autograd."""
import math

import torch


def make_inputs(batch, n_q, n_k, d, dv, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, n_q, d, generator=g, dtype=torch.float64) * 1.5
    k = torch.randn(*batch, n_k, d, generator=g, dtype=torch.float64) * 1.5
    v = torch.randn(*batch, n_k, dv, generator=g, dtype=torch.float64)
    do = torch.randn(*batch, n_q, dv, generator=g, dtype=torch.float64)
    return [t.to(dtype) for t in (q, k, v, do)]


def autograd_attention(q, k, v, do, q_offset, causal=True):
    """Return o, lse, dq, dk, dv in float64, computed without any blockwise trick.

    Query i sits at absolute position q_offset + i, key j at position j; under the
    causal mask a query sees the keys at or before its own position.
    """
    q, k, v = (t.detach().to(torch.float64).requires_grad_(True) for t in (q, k, v))
    do = do.detach().to(torch.float64)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        q_pos = q_offset + torch.arange(q.shape[-2])
        k_pos = torch.arange(k.shape[-2])
        s = s.masked_fill(k_pos[None, :] > q_pos[:, None], float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = torch.softmax(s, dim=-1) @ v
    (o * do).sum().backward()
    return o.detach(), lse.detach(), q.grad, k.grad, v.grad


def blocks(n_k, block_size):
    return [(a, min(a + block_size, n_k)) for a in range(0, n_k, block_size)]
