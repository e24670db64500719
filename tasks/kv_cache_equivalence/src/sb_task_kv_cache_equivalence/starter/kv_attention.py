"""Multi-head self-attention with rotary embeddings and a key/value cache."""
import math

import torch
from torch import nn


def apply_rotary(x, positions, base=10000.0):
    """Rotate x (..., T, D) by rotary embeddings at the integer positions (T,)."""
    raise NotImplementedError


class CachedSelfAttention(nn.Module):
    """Causal self-attention whose forward can continue from a cache of earlier tokens."""

    def __init__(self, d_model, n_heads, rope_base=10000.0):
        super().__init__()
        raise NotImplementedError

    def forward(self, x, cache=None):
        """Return (output, new_cache) for the chunk x (B, T, d_model)."""
        raise NotImplementedError
