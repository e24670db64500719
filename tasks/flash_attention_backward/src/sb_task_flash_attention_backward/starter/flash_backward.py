"""Attention backward pass, one block of keys at a time."""
import math

import torch


def attention_backward_block(q, k_block, v_block, o, lse, do, q_offset, k_offset, causal=True):
    """Return (dq_part, dk_block, dv_block) for one block of keys (see prompt.md)."""
    raise NotImplementedError


def attention_backward(q, k, v, o, lse, do, block_size, causal=True):
    """Return (dq, dk, dv) by looping attention_backward_block over key blocks."""
    raise NotImplementedError
