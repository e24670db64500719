"""Batch-invariant inference kernels in numpy float32 (see the task description)."""
import numpy as np  # noqa: F401


def linear(x, weight, bias=None):
    """y = x @ weight.T + bias for x (M, K), weight (N, K), bias (N,) or None -> (M, N) float32."""
    raise NotImplementedError


def rms_norm(x, weight, eps=1e-6):
    """x / sqrt(mean(x**2, last axis) + eps) * weight for x (M, D), weight (D,) -> (M, D) float32."""
    raise NotImplementedError


def decode_attention(q, k_cache, v_cache, lengths):
    """One query token per request against its own cache prefix of length lengths[b].

    q (B, H, D); k_cache, v_cache (B, T, H, D); lengths: B ints; returns (B, H, D) float32.
    """
    raise NotImplementedError
