"""Scaled dot-product attention with masks, causality, grouped-query heads and the
log-sum-exp of every row. A correct implementation: every rule below is its contract."""
import math

import numpy as np
import torch


def attention(q, k, v, mask=None, causal=False, scale=None):
    """Attention of every query over the keys it may see; returns (out, lse).

    Shapes: q is (B, H, Tq, D); k is (B, H_kv, Tk, D); v is (B, H_kv, Tk, Dv). H is a
    multiple of H_kv and query head h reads key/value head h // (H // H_kv): consecutive
    query heads share one key/value head. Every size is at least 1.

    Arrays: q, k, v (and mask) are all numpy arrays or all torch tensors (CPU), q, k and v
    of one dtype, float32 or float64. out and lse are of that same kind and dtype. The
    arguments are never modified.

    logits[b, h, i, j] = scale * (q[b, h, i] . k[b, h // (H // H_kv), j]) + mask term,
    with scale = 1 / sqrt(D) when scale is None (D is q's last size, not v's).

    mask:
      None: no mask term.
      boolean array of shape (B, Tk): key padding, True means the key may be attended,
        False means padding; a padded key is excluded from every query of its batch row.
      float array broadcastable to (B, H, Tq, Tk): added to the scaled scores (the
        mask term); its entries are finite or -inf, and -inf excludes that key.
    causal: when True, query i may only see keys j <= i + (Tk - Tq): the queries are the
      LAST Tq positions of the key sequence (end-aligned), as when decoding after a cache.
      Combined with a mask, a key is seen only when both allow it.

    out[b, h, i] = sum_j softmax_j(logits[b, h, i]) * v[b, h // (H // H_kv), j], over the
    keys the row may see; shape (B, H, Tq, Dv).
    lse[b, h, i] = log(sum_j exp(logits[b, h, i, j])) over the same keys; shape (B, H, Tq).
    A row that may see no key at all gives out = 0 (never NaN) and lse = -inf.
    Large logits never overflow: the result is computed stably (shifted by the row max).
    """
    as_numpy = isinstance(q, np.ndarray)
    # torch.as_tensor shares memory with a numpy argument: nothing below writes to it.
    qt, kt, vt = (torch.as_tensor(x) for x in (q, k, v))
    heads, key_heads = qt.shape[1], kt.shape[1]
    q_len, k_len, d = qt.shape[2], kt.shape[2], qt.shape[3]
    if scale is None:
        scale = 1.0 / d
    group = heads // key_heads
    kt = kt.repeat_interleave(group, dim=1)
    vt = vt.repeat_interleave(group, dim=1)
    logits = torch.matmul(qt, kt.transpose(-1, -2)) * scale
    allowed = torch.ones(q_len, k_len, dtype=torch.bool)
    if mask is not None:
        mt = torch.as_tensor(mask)
        if mt.dtype == torch.bool:
            allowed = allowed & mt[:, None, None, :]
        else:
            logits = logits + mt.to(logits.dtype)
    if causal:
        rows = torch.arange(q_len)[:, None]
        cols = torch.arange(k_len)[None, :]
        allowed = allowed & (cols <= rows + (k_len - q_len))
    logits = logits.masked_fill(~allowed, float("-inf"))
    row_max = logits.amax(dim=-1, keepdim=True)
    shift = torch.where(row_max == float("-inf"), torch.zeros_like(row_max), row_max)
    weights = torch.exp(logits - shift)
    total = weights.sum(dim=-1, keepdim=True)
    out = torch.matmul(weights, vt) / torch.where(total == 0, torch.ones_like(total), total)
    lse = (shift + torch.log(total)).squeeze(-1)  # log(0) = -inf on a row that sees nothing
    if as_numpy:
        return out.numpy(), lse.numpy()
    return out, lse
