"""Speculative decoding: verify the tokens a draft model proposed against the target model.

Each drafted token is accepted with probability min(1, p/q); at the first rejection one
token is drawn from the residual max(0, p - q) and the walk stops; when every drafted token
is accepted, one bonus token is drawn from the target's next distribution. The uniforms are
the caller's, so every call is deterministic."""
import numpy as np

ROW_SUM_TOLERANCE = 1e-6


def _check_probs(probs, rows, vocab, name):
    if not isinstance(probs, np.ndarray) or probs.dtype != np.float64 or probs.shape != (rows, vocab):
        raise ValueError(f"{name} must be a float64 array of shape ({rows}, {vocab})")
    if not np.isfinite(probs).all() or (probs < 0).any():
        raise ValueError(f"{name} must hold finite, non-negative entries")
    if rows and (np.abs(probs.sum(axis=1) - 1.0) > ROW_SUM_TOLERANCE).any():
        raise ValueError(f"every row of {name} must sum to 1 within {ROW_SUM_TOLERANCE}")


def _check_uniforms(u, length, name):
    if not isinstance(u, np.ndarray) or u.dtype != np.float64 or u.shape != (length,):
        raise ValueError(f"{name} must be a float64 array of shape ({length},)")
    if not ((u >= 0.0) & (u < 1.0)).all():
        raise ValueError(f"{name} must lie in [0, 1)")


def _check(draft_tokens, draft_probs, target_probs, u_accept, u_sample):
    if not isinstance(draft_tokens, np.ndarray) or draft_tokens.ndim != 1 \
            or not np.issubdtype(draft_tokens.dtype, np.integer):
        raise ValueError("draft_tokens must be a 1-D integer array")
    if not isinstance(target_probs, np.ndarray) or target_probs.ndim != 2 or target_probs.shape[1] < 1:
        raise ValueError("target_probs must be a 2-D array with at least one column")
    k, vocab = draft_tokens.shape[0], target_probs.shape[1]
    _check_probs(draft_probs, k, vocab, "draft_probs")
    _check_probs(target_probs, k + 1, vocab, "target_probs")
    _check_uniforms(u_accept, k, "u_accept")
    _check_uniforms(u_sample, k + 1, "u_sample")
    if ((draft_tokens < 0) | (draft_tokens >= vocab)).any():
        raise ValueError("every drafted token must be a token id in [0, V)")
    if k and (draft_probs[np.arange(k), draft_tokens] <= 0).any():
        raise ValueError("the draft gave probability 0 to a token it drafted")


def _draw(weights, u):
    """Inverse CDF over ascending token id: the smallest j with u < C_j."""
    cdf = np.cumsum(weights) / weights.sum()
    j = int(np.searchsorted(cdf, u, side="right"))
    if j == weights.size:  # rounding left u at or above the last cumulative sum
        j = int(np.flatnonzero(weights)[-1])
    return j


def verify(draft_tokens, draft_probs, target_probs, u_accept, u_sample):
    """The tokens emitted by one round: the accepted prefix of the draft, then one token
    drawn from the residual (at the first rejection) or from the last target row (bonus)."""
    _check(draft_tokens, draft_probs, target_probs, u_accept, u_sample)
    emitted = []
    for i, token in enumerate(draft_tokens.tolist()):
        p, q = target_probs[i], draft_probs[i]
        if u_accept[i] < min(1.0, p[token] / q[token]):
            emitted.append(token)
            continue
        residual = np.maximum(p - q, 0.0)
        weights = residual if residual.any() else p
        emitted.append(_draw(weights, u_sample[i]))
        return emitted
    k = draft_tokens.shape[0]
    emitted.append(_draw(target_probs[k], u_sample[0]))
    return emitted
