"""The oracle: the gated recurrence itself, one step at a time, in numpy float64.

It never forms a chunk or a cumulative decay: S_t = exp(g_t) * S_{t-1} + k_t^T v_t and
o_t = q_t S_t, exactly as written in the prompt. The same loop run on |q|, |k|, |v| and
|initial_state| gives the scale the prompt's tolerance is measured against.
"""
import numpy as np
import torch


def _f64(tensor):
    return tensor.detach().to(torch.float64).numpy()


def recurrence(q, k, v, g, initial_state=None):
    """Return (o, final_state, o_scale, state_scale), all float64 numpy arrays."""
    q, k, v, g = _f64(q), _f64(k), _f64(v), _f64(g)
    batch, heads, length, dk = q.shape
    dv = v.shape[-1]
    if g.ndim == 3:
        g = np.repeat(g[..., None], dk, axis=-1)
    if initial_state is None:
        state = np.zeros((batch, heads, dk, dv))
    else:
        state = _f64(initial_state)
    state_abs = np.abs(state)
    o = np.zeros((batch, heads, length, dv))
    o_abs = np.zeros((batch, heads, length, dv))
    for t in range(length):
        keep = np.exp(g[:, :, t, :])[..., None]                      # (B, H, dk, 1)
        outer = k[:, :, t, :, None] * v[:, :, t, None, :]            # (B, H, dk, dv)
        state = keep * state + outer
        state_abs = keep * state_abs + np.abs(outer)
        o[:, :, t] = np.einsum("bhd,bhde->bhe", q[:, :, t], state)
        o_abs[:, :, t] = np.einsum("bhd,bhde->bhe", np.abs(q[:, :, t]), state_abs)
    return o, state, o_abs, state_abs
