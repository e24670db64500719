"""Attention over packed variable-length sequences: forward, and a hand-written backward
that can be run on any run of consecutive rows of the packed keys."""
import torch


def varlen_attention_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, scale, causal=False, window=None):
    raise NotImplementedError


def varlen_attention_backward(q, k, v, out, lse, dout, cu_seqlens_q, cu_seqlens_k, scale,
                              causal=False, window=None, k_start=0):
    raise NotImplementedError
