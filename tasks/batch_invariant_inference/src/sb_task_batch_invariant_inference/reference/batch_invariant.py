"""Batch-invariant inference kernels in numpy float32.

Every reduction here is a pairwise tree built from elementwise float32 additions of whole
array slices. An elementwise addition rounds each element on its own, so the value of one
output depends only on the values it reduces and on the length of the reduction, never on
how many other rows are computed beside it, where they sit, or how the arrays are laid
out in memory. BLAS calls and numpy's own reductions (sum, mean, matmul, einsum) are
avoided on purpose: their summation order depends on shapes and strides.
"""
import numpy as np

_ROW_BLOCK_ELEMENTS = 1 << 21  # bounds the (K, rows, N) product array of linear


def _tree_sum(a):
    """Sum `a` over its FIRST axis by pairwise halving; the order depends only on a.shape[0]."""
    while a.shape[0] > 1:
        half = a.shape[0] // 2
        paired = a[:half] + a[half:2 * half]
        if a.shape[0] % 2:
            paired = np.concatenate([paired, a[2 * half:]], axis=0)
        a = paired
    return a[0]


def linear(x, weight, bias=None):
    """y = x @ weight.T + bias for x (M, K), weight (N, K), bias (N,) or None -> (M, N) float32."""
    x = np.asarray(x, dtype=np.float32)
    weight = np.asarray(weight, dtype=np.float32)
    m, k = x.shape
    n = weight.shape[0]
    out = np.empty((m, n), dtype=np.float32)
    w_t = weight.T  # (K, N)
    rows = max(1, _ROW_BLOCK_ELEMENTS // max(1, k * n))
    for start in range(0, m, rows):
        xb = x[start:start + rows]
        products = xb.T[:, :, None] * w_t[:, None, :]  # (K, rows, N)
        out[start:start + rows] = _tree_sum(products)
    if bias is not None:
        out += np.asarray(bias, dtype=np.float32)[None, :]
    return out


def rms_norm(x, weight, eps=1e-6):
    """x / sqrt(mean(x**2, last axis) + eps) * weight for x (M, D), weight (D,) -> (M, D) float32."""
    x = np.asarray(x, dtype=np.float32)
    weight = np.asarray(weight, dtype=np.float32)
    d = x.shape[-1]
    sum_sq = _tree_sum(np.moveaxis(x * x, -1, 0))  # (M,)
    mean_sq = sum_sq / np.float32(d)
    inv_rms = np.float32(1.0) / np.sqrt(mean_sq + np.float32(eps))
    return (x * inv_rms[:, None]) * weight[None, :]


def decode_attention(q, k_cache, v_cache, lengths):
    """One query token per request against its own cache prefix of length lengths[b].

    q (B, H, D); k_cache, v_cache (B, T, H, D); returns (B, H, D) float32.
    """
    q = np.asarray(q, dtype=np.float32)
    k_cache = np.asarray(k_cache, dtype=np.float32)
    v_cache = np.asarray(v_cache, dtype=np.float32)
    batch, heads, dim = q.shape
    scale = np.float32(1.0 / np.sqrt(dim))
    out = np.empty((batch, heads, dim), dtype=np.float32)
    for b in range(batch):
        length = int(lengths[b])
        keys = k_cache[b, :length]  # (L, H, D)
        values = v_cache[b, :length]
        scores = _tree_sum(np.moveaxis(keys * q[b][None], -1, 0)) * scale  # (L, H)
        weights = np.exp(scores - scores.max(axis=0)[None])
        total = _tree_sum(weights)  # (H,)
        out[b] = _tree_sum(weights[:, :, None] * values) / total[:, None]
    return out
