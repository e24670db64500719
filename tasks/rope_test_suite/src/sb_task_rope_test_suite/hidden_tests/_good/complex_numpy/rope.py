"""RoPE as a complex multiplication (complex128): each pair is one complex number turned by
exp(i * theta), the way many model codebases write it."""
import numpy as np


def apply_rope(x, positions, *, base=10000.0, rotary_dim=None, layout="half"):
    x = np.asarray(x)
    positions = np.asarray(positions)
    head_dim, seq = x.shape[-1], x.shape[-2]
    rot = head_dim if rotary_dim is None else int(rotary_dim)
    if layout != "half" and layout != "interleaved":
        raise ValueError("unknown layout")
    if rot < 2 or rot > head_dim or rot % 2:
        raise ValueError("bad rotary_dim")
    if positions.shape != (seq,):
        raise ValueError("positions shape does not match x")
    if (positions < 0).any() or (positions > 2**20).any():
        raise ValueError("position out of range")
    half = rot // 2
    inv_freq = 1.0 / np.power(float(base), np.arange(0, rot, 2, dtype=np.float64) / rot)
    turn = np.exp(1j * np.outer(positions.astype(np.float64), inv_freq))     # (seq, half) complex128
    if layout == "half":
        z = (x[..., :half] + 1j * x[..., half:rot]) * turn
        rotated = np.concatenate([z.real, z.imag], axis=-1)
    else:
        pairs = x[..., :rot].reshape(*x.shape[:-1], half, 2)
        z = (pairs[..., 0] + 1j * pairs[..., 1]) * turn
        rotated = np.stack([z.real, z.imag], axis=-1).reshape(*x.shape[:-1], rot)
    return np.concatenate([rotated, x[..., rot:]], axis=-1)
