"""Scaled dot-product attention with an end-aligned causal mask and key padding."""
import math

import torch


def causal_mask(num_queries, num_keys, *, dtype=torch.float32):
    """Additive mask (num_queries, num_keys): 0.0 where a query may look, -inf elsewhere."""
    raise NotImplementedError


def attention(q, k, v, *, causal=False, key_padding_mask=None):
    """softmax(q k^T / sqrt(d) + mask) v over (B, H, L, D) tensors."""
    raise NotImplementedError
