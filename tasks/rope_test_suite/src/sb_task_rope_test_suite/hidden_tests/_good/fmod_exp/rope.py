"""RoPE with frequencies from exp/log, angles reduced modulo 2*pi, and an explicit pair table."""
import math

import numpy as np


def _pairs(rot, layout):
    if layout == "half":
        return [(i, i + rot // 2) for i in range(rot // 2)]
    if layout == "interleaved":
        return [(2 * i, 2 * i + 1) for i in range(rot // 2)]
    raise ValueError(f"unknown layout {layout!r}")


def apply_rope(x, positions, *, base=10000.0, rotary_dim=None, layout="half"):
    x = np.asarray(x, dtype=np.float64)
    positions = np.asarray(positions)
    if positions.ndim != 1 or x.ndim < 2 or positions.shape[0] != x.shape[-2]:
        raise ValueError("positions must be 1-D with one entry per row of x")
    if positions.size and (positions.min() < 0 or positions.max() > 1 << 20):
        raise ValueError("positions out of range")
    rot = x.shape[-1] if rotary_dim is None else rotary_dim
    if not (2 <= rot <= x.shape[-1]) or rot & 1:
        raise ValueError("rotary_dim must be even and between 2 and head_dim")
    pairs = _pairs(rot, layout)
    log_base = math.log(base)
    inv_freq = np.exp(np.array([-(2.0 * i / rot) * log_base for i in range(rot // 2)]))
    theta = np.fmod(np.multiply.outer(positions.astype(np.float64), inv_freq), 2.0 * math.pi)
    cos, sin = np.cos(theta), np.sin(theta)
    out = np.empty_like(x)
    out[...] = x
    for i, (a, b) in enumerate(pairs):
        out[..., a] = x[..., a] * cos[:, i] - x[..., b] * sin[:, i]
        out[..., b] = x[..., a] * sin[:, i] + x[..., b] * cos[:, i]
    return out
