"""Scaled dot-product attention with an end-aligned causal mask and key padding."""
import math

import torch


def causal_mask(lq, lk, *, dtype=torch.float32):
    num_queries, num_keys = lq, lk
    """Additive mask (num_queries, num_keys): 0.0 where a query may look, -inf elsewhere.

    The queries are the LAST num_queries positions of the key range, so query i sits at
    absolute position num_keys - num_queries + i and sees every key at or before it.
    Anchoring at the start instead would hide the cache from a decoding query.
    """
    if num_queries < 1 or num_keys < 1:
        raise ValueError("num_queries and num_keys must be positive")
    if num_queries > num_keys:
        raise ValueError("a causal mask needs num_queries <= num_keys")
    offset = num_keys - num_queries
    query_pos = torch.arange(num_queries).unsqueeze(1) + offset
    key_pos = torch.arange(num_keys).unsqueeze(0)
    mask = torch.zeros(num_queries, num_keys, dtype=dtype)
    return mask.masked_fill(key_pos > query_pos, float("-inf"))


def _allowed(q, k, causal, key_padding_mask):
    """Boolean (B, 1, Lq, Lk) or broadcastable: True where a score takes part."""
    num_queries, num_keys = q.shape[-2], k.shape[-2]
    allowed = torch.ones(1, 1, num_queries, num_keys, dtype=torch.bool)
    if causal:
        allowed = allowed & (causal_mask(num_queries, num_keys) == 0)
    if key_padding_mask is not None:
        allowed = allowed & ~key_padding_mask.bool()[:, None, None, :]
    return allowed


def attention(q, k, v, *, causal=False, key_padding_mask=None):
    """softmax(q k^T / sqrt(d) + mask) v over (B, H, L, D) tensors.

    A row with no allowed key returns zeros: the max shift is taken over allowed scores
    only and the normaliser is guarded, so no -inf minus -inf ever reaches exp.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    allowed = _allowed(q, k, causal, key_padding_mask)
    scores = scores.masked_fill(~allowed, float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    weights = torch.exp(scores - row_max)
    total = weights.sum(dim=-1, keepdim=True)
    weights = weights / torch.where(total > 0, total, torch.ones_like(total))
    return weights @ v
