"""Attention backward pass, one block of keys at a time (FlashAttention-style)."""
import math

import torch


def attention_backward_block(q, k_block, v_block, o, lse, do, q_offset, k_offset, causal=True):
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = (q @ k_block.transpose(-1, -2)) * scale
    if causal:
        q_pos = q_offset + torch.arange(q.shape[-2], device=q.device)
        k_pos = k_offset + torch.arange(k_block.shape[-2], device=q.device)
        s = s.masked_fill(k_pos[None, :] > q_pos[:, None], float("-inf"))
    # The forward's log-sum-exp turns this block's scores into final probabilities.
    p = torch.exp(s - lse.unsqueeze(-1))
    dv = p.transpose(-1, -2) @ do
    dp = do @ v_block.transpose(-1, -2)
    # sum_j P_ij dP_ij over ALL keys equals sum_c dO_ic O_ic: recoverable per row.
    row_term = (do * o).sum(dim=-1, keepdim=True)
    ds = p * (dp - row_term)
    dq = (ds @ k_block) * scale
    dk = (ds.transpose(-1, -2) @ q) * scale
    return dq, dk, dv


def attention_backward(q, k, v, o, lse, do, block_size, causal=True):
    n_q, n_k = q.shape[-2], k.shape[-2]
    q_offset = n_k - n_q  # queries are the last n_q positions of the key range
    dk_blocks, dv_blocks = [], []
    for start in range(0, n_k, block_size):
        stop = min(start + block_size, n_k)
        _, dk_block, dv_block = attention_backward_block(
            q, k[..., start:stop, :], v[..., start:stop, :], o, lse, do, q_offset, start, causal
        )
        dk_blocks.append(dk_block)
        dv_blocks.append(dv_block)
    # dq_i sums over every key of row i, so it is formed once the blocks are done, from
    # the whole row of weights rebuilt from lse.
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        q_pos = q_offset + torch.arange(n_q)
        k_pos = torch.arange(n_k)
        s = s.masked_fill(k_pos[None, :] > q_pos[:, None], float("-inf"))
    p = torch.exp(s - lse.unsqueeze(-1))
    dp = do @ v.transpose(-1, -2)
    ds = p * (dp - (do * o).sum(dim=-1, keepdim=True))
    dq = (ds @ k) * scale
    return dq, torch.cat(dk_blocks, dim=-2), torch.cat(dv_blocks, dim=-2)
