"""Gated linear attention in its chunked parallel form."""
import math

import torch


def chunked_gla(q, k, v, g, chunk_size, initial_state=None):
    """Return (o, final_state) for S_t = exp(g_t) * S_{t-1} + k_t^T v_t, o_t = q_t S_t.

    Decays are only ever exponentiated as differences G_i - G_j with j <= i (never as a
    product exp(G_i) * exp(-G_j)), and masked pairs are set to -inf before exp, so no step
    overflows. The log-decays are summed from each chunk's start, never from the
    sequence's (that sum reaches -1.6e5, where float32 numbers are 1/64 apart), and in
    float64 for margin.
    """
    batch, heads, length, dk = q.shape
    dv = v.shape[-1]
    dtype = q.dtype
    g = g.reshape(batch, heads, length, -1).expand(batch, heads, length, dk)   # (B, H, T) too
    if initial_state is None:
        state = q.new_zeros(batch, heads, dk, dv)
    else:
        state = initial_state.clone()
    out = q.new_empty(batch, heads, length, dv)
    causal = torch.ones(chunk_size, chunk_size, dtype=torch.bool).tril()
    for start in range(0, length, chunk_size):
        stop = min(start + chunk_size, length)
        size = stop - start
        qc, kc, vc = q[..., start:stop, :], k[..., start:stop, :], v[..., start:stop, :]
        decay = g[..., start:stop, :].to(torch.float64).cumsum(-2)        # (B, H, L, dk)
        pair = decay.unsqueeze(-2) - decay.unsqueeze(-3)                   # [i, j] = G_i - G_j
        pair = pair.masked_fill(~causal[:size, :size, None], -math.inf)
        weights = torch.exp(pair).to(dtype)                                # (B, H, L, L, dk)
        scores = (qc.unsqueeze(-2) * kc.unsqueeze(-3) * weights).sum(-1)   # (B, H, L, L)
        from_state = (qc * torch.exp(decay).to(dtype)) @ state
        out[..., start:stop, :] = scores @ vc + from_state
        end = decay[..., -1:, :]                                           # (B, H, 1, dk)
        kept = torch.exp(end).to(dtype).transpose(-1, -2) * state
        state = kept + (kc * torch.exp(end - decay).to(dtype)).transpose(-1, -2) @ vc
    return out, state
