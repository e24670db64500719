"""Mixture-of-experts layer with top-k routing, expert capacity and a load-balancing loss.

Forward and a hand-written backward, numpy only.
"""
import math

import numpy as np


def expert_capacity(num_tokens, k, num_experts, capacity_factor):
    """Slots per expert: floor(capacity_factor * T * k / E), at least 1."""
    return max(1, math.floor(capacity_factor * num_tokens * k / num_experts))


def _softmax(logits):
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def _decide(x, w_router, k, capacity_factor):
    """probs (T, E), experts (T, k), gates (T, k), slots (T, k)."""
    num_tokens, num_experts = x.shape[0], w_router.shape[1]
    probs = _softmax(x @ w_router)
    # A stable sort of -p: decreasing probability, equal ones by lower expert index.
    experts = np.argsort(-probs, axis=1, kind="stable")[:, :k]
    chosen = np.take_along_axis(probs, experts, axis=1)
    gates = chosen / chosen.sum(axis=1, keepdims=True)
    capacity = expert_capacity(num_tokens, k, num_experts, capacity_factor)
    slots = np.full((num_tokens, k), -1, dtype=np.int64)
    filled = np.zeros(num_experts, dtype=np.int64)
    for rank in range(k):
        # Decreasing probability of this assignment, equal ones by lower token index.
        for t in np.argsort(-chosen[:, rank], kind="stable"):
            e = experts[t, rank]
            if filled[e] < capacity:
                slots[t, rank] = filled[e]
                filled[e] += 1
    return probs, experts, gates, slots


def route(x, w_router, k, capacity_factor):
    """(experts, gates, slots) for every token's k assignments."""
    _, experts, gates, slots = _decide(x, w_router, k, capacity_factor)
    return experts, gates, slots


def _first_choice_fraction(experts, num_experts):
    return np.bincount(experts[:, 0], minlength=num_experts) / experts.shape[0]


def _expert_outputs(x, w_experts, b_experts, experts_of_rank):
    return np.einsum("td,tdh->th", x, w_experts[experts_of_rank]) + b_experts[experts_of_rank]


def moe_forward(x, w_router, w_experts, b_experts, k, capacity_factor, aux_coef):
    """(y, aux): the layer's output (T, h) and the weighted load-balancing loss."""
    probs, experts, gates, slots = _decide(x, w_router, k, capacity_factor)
    num_experts = w_router.shape[1]
    y = np.zeros((x.shape[0], w_experts.shape[2]), dtype=x.dtype)
    for rank in range(k):
        kept = (slots[:, rank] >= 0)[:, None]
        out = _expert_outputs(x, w_experts, b_experts, experts[:, rank])
        y += np.where(kept, gates[:, rank:rank + 1] * out, 0)
    fraction = _first_choice_fraction(experts, num_experts)
    aux = aux_coef * num_experts * np.sum(fraction * probs.mean(axis=0))
    return y.astype(x.dtype), float(aux)


def moe_backward(x, w_router, w_experts, b_experts, k, capacity_factor, aux_coef, dy):
    """(dx, dw_router, dw_experts, db_experts) for L = sum(dy * y) + aux, routing held fixed."""
    probs, experts, gates, slots = _decide(x, w_router, k, capacity_factor)
    num_tokens, num_experts = probs.shape
    dx = np.zeros_like(x)
    dw_experts = np.zeros_like(w_experts)
    db_experts = np.zeros_like(b_experts)
    dgates = np.zeros_like(gates)
    for rank in range(k):
        e = experts[:, rank]
        kept = (slots[:, rank] >= 0)[:, None]
        out = _expert_outputs(x, w_experts, b_experts, e)
        dgates[:, rank] = np.where(kept[:, 0], (dy * out).sum(axis=1), 0)
        dout = np.where(kept, gates[:, rank:rank + 1] * dy, 0)
        dx += np.einsum("th,tdh->td", dout, w_experts[e])
        np.add.at(dw_experts, e, x[:, :, None] * dout[:, None, :])
        np.add.at(db_experts, e, dout)
    # The gates are a softmax over the k chosen logits (the full normaliser cancels), so the
    # gate path reaches only the chosen logits, dropped ones included.
    dlogits = np.zeros_like(probs)
    np.put_along_axis(dlogits, experts,
                      gates * (dgates - (gates * dgates).sum(axis=1, keepdims=True)), axis=1)
    # aux = c * E * sum_e f_e * mean_t p[t, e], with f held constant.
    dprobs = aux_coef * num_experts * _first_choice_fraction(experts, num_experts) / num_tokens
    dlogits += probs * (dprobs - (probs * dprobs).sum(axis=1, keepdims=True))
    dx += dlogits @ w_router.T
    dw_router = x.T @ dlogits
    return tuple(a.astype(x.dtype) for a in (dx, dw_router, dw_experts, db_experts))
