"""Rotary position embedding (RoPE) applied to a float64 array of query or key vectors."""
import numpy as np

MAX_POSITION = 2**20
LAYOUTS = ("half", "interleaved")


def apply_rope(x, positions, *, base=10000.0, rotary_dim=None, layout="half"):
    """Rotate pairs of features of `x` by angles that grow with the token's position.

    x: float64 array of shape (..., seq, head_dim), any number of leading axes (none too).
    positions: int64 array of shape (seq,), each 0 <= p <= 2**20: the position of token t
        is positions[t] (they need not increase and may repeat).
    base: float > 1. rotary_dim: None (means head_dim) or an even int, 2 <= r <= head_dim.
    layout: "half" pairs feature i with i + r/2; "interleaved" pairs 2i with 2i + 1.

    For i in range(r // 2), theta = p * base ** (-2 * i / r); the pair (a, b) becomes
        out[a] = x[a] * cos(theta) - x[b] * sin(theta)
        out[b] = x[b] * cos(theta) + x[a] * sin(theta)
    and features r .. head_dim - 1 are returned unchanged. Returns a new array; x is
    never modified. Raises ValueError for an invalid r (odd, < 2 or > head_dim), positions
    of the wrong shape or outside [0, 2**20], or an unknown layout.
    """
    x = np.asarray(x)
    positions = np.asarray(positions)
    head_dim = x.shape[-1]
    r = head_dim - head_dim % 2 if rotary_dim is None else rotary_dim
    if r % 2 != 0 or r < 2 or r > head_dim:
        raise ValueError(f"rotary_dim must be even and in [2, {head_dim}], got {r}")
    if positions.shape != (x.shape[-2],):
        raise ValueError(f"positions must have shape ({x.shape[-2]},), got {positions.shape}")
    if np.any(positions < 0) or np.any(positions > MAX_POSITION):
        raise ValueError("positions must lie in [0, 2**20]")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")

    half = r // 2
    inv_freq = base ** (-2.0 * np.arange(half) / r)            # (half,)
    theta = positions.astype(np.float64)[:, None] * inv_freq    # (seq, half)
    cos, sin = np.cos(theta), np.sin(theta)
    if layout == "half":
        a, b = np.arange(half), np.arange(half) + half
    else:
        a, b = 2 * np.arange(half), 2 * np.arange(half) + 1
    out = x.copy()
    xa, xb = x[..., a], x[..., b]
    out[..., a] = xa * cos - xb * sin
    out[..., b] = xb * cos + xa * sin
    return out
