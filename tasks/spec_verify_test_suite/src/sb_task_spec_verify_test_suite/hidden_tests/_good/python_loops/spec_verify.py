"""A correct spec_verify.py written token by token in plain Python floats."""
import math

import numpy as np


def _rows(array, rows, vocab, name):
    if not isinstance(array, np.ndarray) or array.dtype != np.float64 or array.shape != (rows, vocab):
        raise ValueError(f"bad {name}")
    out = [[float(x) for x in row] for row in array]
    for row in out:
        if any(not math.isfinite(x) or x < 0 for x in row):
            raise ValueError(f"bad entry in {name}")
        if abs(math.fsum(row) - 1.0) > 1e-6:
            raise ValueError(f"{name} row does not sum to 1")
    return out


def _uniforms(array, length, name):
    if not isinstance(array, np.ndarray) or array.dtype != np.float64 or array.shape != (length,):
        raise ValueError(f"bad {name}")
    out = [float(x) for x in array]
    if any(not (0.0 <= x < 1.0) for x in out):
        raise ValueError(f"{name} outside [0, 1)")
    return out


def _pick(weights, u):
    total = math.fsum(weights)
    running, last = 0.0, None
    for j, w in enumerate(weights):
        if w > 0:
            running += w
            last = j
            if u * total < running:
                return j
    return last


def verify(draft_tokens, draft_probs, target_probs, u_accept, u_sample):
    if not isinstance(draft_tokens, np.ndarray) or draft_tokens.ndim != 1 or draft_tokens.dtype.kind not in "iu":
        raise ValueError("bad draft_tokens")
    if not isinstance(target_probs, np.ndarray) or target_probs.ndim != 2 or target_probs.shape[1] == 0:
        raise ValueError("bad target_probs")
    tokens = [int(t) for t in draft_tokens]
    k, vocab = len(tokens), target_probs.shape[1]
    q = _rows(draft_probs, k, vocab, "draft_probs")
    p = _rows(target_probs, k + 1, vocab, "target_probs")
    ua = _uniforms(u_accept, k, "u_accept")
    us = _uniforms(u_sample, k + 1, "u_sample")
    for i, t in enumerate(tokens):
        if not 0 <= t < vocab or q[i][t] <= 0:
            raise ValueError("impossible drafted token")
    out = []
    for i, t in enumerate(tokens):
        if ua[i] * q[i][t] < p[i][t]:
            out.append(t)
            continue
        residual = [max(0.0, a - b) for a, b in zip(p[i], q[i])]
        out.append(_pick(residual if any(residual) else p[i], us[i]))
        return out
    out.append(_pick(p[k], us[k]))
    return out
