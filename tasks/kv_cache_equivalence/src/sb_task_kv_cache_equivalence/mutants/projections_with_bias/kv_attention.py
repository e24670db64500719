"""Multi-head self-attention with rotary embeddings and a key/value cache."""
import math

import torch
from torch import nn


def apply_rotary(x, positions, base=10000.0):
    """Rotate channel pairs (i, i + D/2) of x by angle position * base**(-2i/D).

    x is (..., T, D); positions is an integer tensor of shape (T,). The angles are
    formed in float64 so that large absolute positions keep their precision.
    """
    dim = x.shape[-1]
    half = dim // 2
    inv_freq = base ** (-2.0 * torch.arange(half, dtype=torch.float64) / dim)
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    cos = angles.cos().to(x.dtype)
    sin = angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class CachedSelfAttention(nn.Module):
    """Causal self-attention whose forward can continue from a cache of earlier tokens."""

    def __init__(self, d_model, n_heads, rope_base=10000.0):
        super().__init__()
        if d_model % n_heads:
            raise ValueError("d_model must be divisible by n_heads")
        if (d_model // n_heads) % 2:
            raise ValueError("head_dim must be even for rotary embeddings")
        self.d_model = d_model
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.rope_base = rope_base
        self.q_proj = nn.Linear(d_model, d_model, bias=True)
        self.k_proj = nn.Linear(d_model, d_model, bias=True)
        self.v_proj = nn.Linear(d_model, d_model, bias=True)
        self.o_proj = nn.Linear(d_model, d_model, bias=True)

    def _split_heads(self, t):
        batch, length, _ = t.shape
        return t.view(batch, length, self.n_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, cache=None):
        batch, length, _ = x.shape
        past = 0 if cache is None else cache["k"].shape[2]
        positions = torch.arange(past, past + length, device=x.device)

        q = apply_rotary(self._split_heads(self.q_proj(x)), positions, self.rope_base)
        k = apply_rotary(self._split_heads(self.k_proj(x)), positions, self.rope_base)
        v = self._split_heads(self.v_proj(x))
        if cache is not None:
            # torch.cat builds new tensors: the caller's cache stays as it was.
            k = torch.cat([cache["k"], k], dim=2)
            v = torch.cat([cache["v"], v], dim=2)

        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        key_positions = torch.arange(k.shape[2], device=x.device)
        future = key_positions[None, :] > positions[:, None]
        scores = scores.masked_fill(future, float("-inf"))
        mixed = scores.softmax(dim=-1) @ v
        out = self.o_proj(mixed.transpose(1, 2).reshape(batch, length, self.d_model))
        return out, {"k": k, "v": v}
