"""An independent float64 numpy model of the layer: loops, complex rotation, no torch."""
import numpy as np


def rotate(x, positions, base):
    """Rotary via complex multiplication: channel i and i + D/2 are the real and imaginary parts."""
    dim = x.shape[-1]
    half = dim // 2
    z = x[..., :half] + 1j * x[..., half:]
    theta = np.array([base ** (-2.0 * i / dim) for i in range(half)])
    phase = np.exp(1j * np.outer(np.asarray(positions, dtype=np.float64), theta))
    r = z * phase
    return np.concatenate([r.real, r.imag], axis=-1)


def full_forward(weights, x, n_heads, base=10000.0):
    """Causal attention over the whole sequence x (B, T, d_model).

    weights maps q/k/v/o to (d_model, d_model) float64 arrays in torch's Linear layout
    (y = x @ W.T). Returns (out, rotated_keys, values), the last two as (B, H, T, head_dim).
    """
    batch, length, d_model = x.shape
    head_dim = d_model // n_heads
    positions = np.arange(length)

    def heads(w):
        return (x @ w.T).reshape(batch, length, n_heads, head_dim).transpose(0, 2, 1, 3)

    q = rotate(heads(weights["q"]), positions, base)
    k = rotate(heads(weights["k"]), positions, base)
    v = heads(weights["v"])
    mixed = np.zeros((batch, length, d_model))
    for b in range(batch):
        for h in range(n_heads):
            for i in range(length):
                scores = np.array([q[b, h, i] @ k[b, h, j] for j in range(i + 1)])
                scores /= np.sqrt(head_dim)
                w = np.exp(scores - scores.max())
                w /= w.sum()
                mixed[b, i, h * head_dim:(h + 1) * head_dim] = w @ v[b, h, :i + 1]
    return mixed @ weights["o"].T, k, v


def continue_from(weights, cache_k, cache_v, x, n_heads, base=10000.0):
    """One chunk x (B, T, d_model) after a cache of S tokens (rotated keys, values), vectorised.

    The chunk sits at positions S .. S+T-1; query S+i sees keys 0 .. S+i. Returns
    (out, keys, values) with the keys and values of all S+T tokens.
    """
    batch, length, d_model = x.shape
    head_dim = d_model // n_heads
    past = cache_k.shape[2]
    positions = np.arange(past, past + length)

    def heads(w):
        return (x @ w.T).reshape(batch, length, n_heads, head_dim).transpose(0, 2, 1, 3)

    q = rotate(heads(weights["q"]), positions, base)
    k = np.concatenate([cache_k, rotate(heads(weights["k"]), positions, base)], axis=2)
    v = np.concatenate([cache_v, heads(weights["v"])], axis=2)
    scores = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(head_dim)
    visible = np.arange(past + length)[None, :] <= positions[:, None]
    scores = np.where(visible, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    mixed = np.einsum("bhij,bhjd->bhid", w, v).transpose(0, 2, 1, 3).reshape(batch, length, d_model)
    return mixed @ weights["o"].T, k, v
