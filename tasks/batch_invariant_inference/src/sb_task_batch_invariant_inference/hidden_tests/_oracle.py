"""Float64 oracles and the accuracy bounds the prompt states, computed independently of any solution."""
import numpy as np

U = 2.0 ** -24  # unit roundoff of float32


def linear64(x, weight, bias):
    x64, w64 = x.astype(np.float64), weight.astype(np.float64)
    y = x64 @ w64.T
    magnitude = np.abs(x64) @ np.abs(w64).T
    if bias is not None:
        y = y + bias.astype(np.float64)
        magnitude = magnitude + np.abs(bias.astype(np.float64))
    return y, magnitude


def linear_bound(x, weight, bias):
    """The prompt's bound: K * 2**-23 * (sum_k |x_k w_nk| + |b_n|), elementwise."""
    _, magnitude = linear64(x, weight, bias)
    return x.shape[1] * 2.0 ** -23 * magnitude


def rms_norm64(x, weight, eps):
    x64 = x.astype(np.float64)
    inv = 1.0 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps)
    return x64 * inv * weight.astype(np.float64)


def rms_norm_bound(x, weight, eps):
    """The prompt's bound: (D + 16) * 2**-24 * |y64|, elementwise."""
    return (x.shape[-1] + 16) * U * np.abs(rms_norm64(x, weight, eps))


def attention64(q, k_cache, v_cache, lengths):
    """(output, bound) per the prompt: the float64 attention over each request's prefix."""
    batch, heads, dim = q.shape
    out = np.zeros((batch, heads, dim))
    bound = np.zeros((batch, heads, dim))
    for b in range(batch):
        length = int(lengths[b])
        keys = k_cache[b, :length].astype(np.float64)
        values = v_cache[b, :length].astype(np.float64)
        qb = q[b].astype(np.float64)
        for h in range(heads):
            scores = keys[:, h] @ qb[h] / np.sqrt(dim)
            weights = np.exp(scores - scores.max())
            out[b, h] = weights @ values[:, h] / weights.sum()
            s_max = (np.abs(keys[:, h]) @ np.abs(qb[h])).max() / np.sqrt(dim)
            v_max = np.abs(values[:, h]).max()
            bound[b, h] = (4 * (dim + 2) * s_max + 3 * length + 16) * U * v_max
    return out, bound
