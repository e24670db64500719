"""A correct spec_verify.py in torch float64, vectorised over the drafted steps."""
import numpy as np
import torch


def _valid(probs, rows, vocab):
    return (isinstance(probs, np.ndarray) and probs.dtype == np.float64 and probs.shape == (rows, vocab)
            and bool(np.isfinite(probs).all()) and bool((probs >= 0).all())
            and (rows == 0 or bool((np.abs(probs.sum(axis=1) - 1.0) <= 1e-6).all())))


def _valid_u(u, length):
    return (isinstance(u, np.ndarray) and u.dtype == np.float64 and u.shape == (length,)
            and bool(((u >= 0) & (u < 1)).all()))


def _sample(weights, u):
    cdf = torch.cumsum(weights / weights.sum(), dim=0)
    j = int(torch.searchsorted(cdf, torch.tensor([u], dtype=torch.float64), right=True)[0])
    if j >= weights.numel():
        j = int(torch.nonzero(weights > 0)[-1, 0])
    return j


def verify(draft_tokens, draft_probs, target_probs, u_accept, u_sample):
    if not (isinstance(draft_tokens, np.ndarray) and draft_tokens.ndim == 1 and draft_tokens.dtype.kind in "iu"):
        raise ValueError("draft_tokens")
    if not (isinstance(target_probs, np.ndarray) and target_probs.ndim == 2 and target_probs.shape[1] > 0):
        raise ValueError("target_probs")
    k, vocab = draft_tokens.shape[0], target_probs.shape[1]
    if not (_valid(draft_probs, k, vocab) and _valid(target_probs, k + 1, vocab)
            and _valid_u(u_accept, k) and _valid_u(u_sample, k + 1)):
        raise ValueError("probabilities or uniforms")
    tokens = torch.from_numpy(draft_tokens.astype(np.int64))
    if bool(((tokens < 0) | (tokens >= vocab)).any()):
        raise ValueError("token id out of range")
    p, q = torch.from_numpy(target_probs), torch.from_numpy(draft_probs)
    steps = torch.arange(k)
    q_t, p_t = q[steps, tokens], p[steps, tokens]
    if bool((q_t <= 0).any()):
        raise ValueError("drafted token the draft gave probability 0")
    accepted = torch.from_numpy(u_accept) < torch.clamp(p_t / q_t, max=1.0)
    rejected = torch.nonzero(~accepted)
    if rejected.numel() == 0:
        return [int(t) for t in tokens] + [_sample(p[k], float(u_sample[k]))]
    i = int(rejected[0, 0])
    residual = torch.clamp(p[i] - q[i], min=0.0)
    if not bool((residual > 0).any()):
        residual = p[i]
    return [int(t) for t in tokens[:i]] + [_sample(residual, float(u_sample[i]))]
