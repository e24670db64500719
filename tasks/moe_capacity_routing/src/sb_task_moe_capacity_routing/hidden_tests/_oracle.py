"""Independent computations for the MoE tests (never the reference solution).

- route(): a per-token, per-assignment replay of the stated rules in float64 with Python
  scalars: softmax by math.exp, top-k by sorting (-p, expert), placement by replaying the
  stated order one assignment at a time.
- forward(): a per-token loop over the kept assignments.
- gradients(): torch autograd in float64 of a dense formulation (a (T, E) gate matrix,
  chosen and kept as indicator matrices) with the oracle's routing held fixed.

make_case() builds inputs rich in ties whose comparisons are unambiguous in float32:
x and w_router hold multiples of 1/4 with small magnitudes, so every logit is a multiple
of 1/16 computed exactly in float32 and float64 in any summation order. Tokens are copies
of a few prototype rows (equal probabilities across tokens: ties in the drop order), and
some router columns are copies of others (equal probabilities within a row: ties in the
top-k). Any two probabilities that are not exact copies of each other differ by more than
1e-4 relative (checked; the sub-seed advances until it holds), far beyond float32
rounding (~1e-7 relative), so float32 and float64 arithmetic order them the same way.
"""
import math

import numpy as np
import torch

SEPARATION = 1e-4  # relative gap between probabilities that are not exact copies


def capacity(num_tokens, k, num_experts, capacity_factor):
    return max(1, math.floor(capacity_factor * num_tokens * k / num_experts))


def _probabilities(logits):
    rows = []
    for row in logits:
        top = max(row)
        ex = [math.exp(v - top) for v in row]
        total = math.fsum(ex)
        rows.append([v / total for v in ex])
    return rows


def route(x, w_router, k, capacity_factor):
    """(experts, gates, slots, probs) as nested lists / float64 arrays."""
    logits = (np.asarray(x, np.float64) @ np.asarray(w_router, np.float64)).tolist()
    probs = _probabilities(logits)
    num_tokens, num_experts = len(probs), len(probs[0])
    experts = [sorted(range(num_experts), key=lambda e: (-p[e], e))[:k] for p in probs]
    gates = []
    for t in range(num_tokens):
        chosen = [probs[t][e] for e in experts[t]]
        gates.append([c / math.fsum(chosen) for c in chosen])
    cap = capacity(num_tokens, k, num_experts, capacity_factor)
    slots = [[-1] * k for _ in range(num_tokens)]
    filled = [0] * num_experts
    for rank in range(k):
        order = sorted(range(num_tokens), key=lambda t: (-probs[t][experts[t][rank]], t))
        for t in order:
            e = experts[t][rank]
            if filled[e] < cap:
                slots[t][rank] = filled[e]
                filled[e] += 1
    return experts, np.array(gates), slots, np.array(probs)


def forward(x, w_router, w_experts, b_experts, k, capacity_factor, aux_coef):
    """(y, aux) in float64 from a loop over tokens and their kept assignments."""
    x, w_experts, b_experts = (np.asarray(a, np.float64) for a in (x, w_experts, b_experts))
    experts, gates, slots, probs = route(x, w_router, k, capacity_factor)
    num_tokens, num_experts = probs.shape
    y = np.zeros((num_tokens, w_experts.shape[2]))
    for t in range(num_tokens):
        for rank in range(k):
            if slots[t][rank] >= 0:
                e = experts[t][rank]
                y[t] += gates[t][rank] * (x[t] @ w_experts[e] + b_experts[e])
    aux = 0.0
    for e in range(num_experts):
        f_e = sum(1 for t in range(num_tokens) if experts[t][0] == e) / num_tokens
        p_e = math.fsum(probs[:, e]) / num_tokens
        aux += f_e * p_e
    return y, aux_coef * num_experts * aux


def gradients(x, w_router, w_experts, b_experts, k, capacity_factor, aux_coef, dy):
    """(dx, dw_router, dw_experts, db_experts) of sum(dy * y) + aux, by float64 autograd."""
    experts, _, slots, _ = route(x, w_router, k, capacity_factor)
    num_tokens, num_experts = np.shape(x)[0], np.shape(w_router)[1]
    chosen = torch.zeros(num_tokens, num_experts, dtype=torch.float64)
    kept = torch.zeros(num_tokens, num_experts, dtype=torch.float64)
    for t in range(num_tokens):
        for rank in range(k):
            chosen[t, experts[t][rank]] = 1.0
            if slots[t][rank] >= 0:
                kept[t, experts[t][rank]] = 1.0
    first = torch.zeros(num_experts, dtype=torch.float64)
    for t in range(num_tokens):
        first[experts[t][0]] += 1.0 / num_tokens
    leaves = [torch.tensor(np.asarray(a, np.float64), requires_grad=True)
              for a in (x, w_router, w_experts, b_experts)]
    tx, tw_router, tw_experts, tb_experts = leaves
    probs = torch.softmax(tx @ tw_router, dim=1)
    gate_matrix = probs * chosen / (probs * chosen).sum(dim=1, keepdim=True)
    outputs = torch.einsum("td,edh->teh", tx, tw_experts) + tb_experts
    y = torch.einsum("te,teh->th", gate_matrix * kept, outputs)
    aux = aux_coef * num_experts * (first * probs.mean(dim=0)).sum()
    loss = (torch.tensor(np.asarray(dy, np.float64)) * y).sum() + aux
    loss.backward()
    return tuple(leaf.grad.numpy() for leaf in leaves)


def _separated(logits, probs):
    """Probabilities of different origin differ by more than SEPARATION, relatively.

    The origin of p[t, e] is (the whole logit row of t, the logit of e in it): entries of
    one origin are computed from identical numbers by identical steps in any
    implementation, so they are equal bitwise; entries of different origin must not be
    close, even where they are equal mathematically (rows that are permutations or
    shifts of each other), because their rounding then depends on summation order.
    """
    by_origin = {}
    for row, prow in zip(logits.tolist(), probs.tolist()):
        for z, p in zip(row, prow):
            by_origin[(tuple(row), z)] = p
    values = np.sort(np.array(list(by_origin.values())))
    return bool(np.all(np.diff(values) > SEPARATION * values[1:]))


def make_case(seed, num_tokens, d, num_experts, hidden, k, prototypes, copied_columns,
              dtype, scale=1.0, offset=0.0):
    """Inputs (x, w_router, w_experts, b_experts, dy) in `dtype`; see the module docstring.

    copied_columns: pairs (src, dst): router column dst is a copy of column src.
    scale multiplies x and w_router by a power of two (exact) to sharpen or flatten probs.
    offset != 0 appends a constant feature 1 to every token and a router row of `offset`:
    every logit grows by `offset` (a multiple of 1/4 below 2^10, so still exact in
    float32) and the probabilities are unchanged.
    """
    sub = 0
    while True:
        rng = np.random.default_rng([seed, sub])
        rows = rng.integers(-8, 9, size=(prototypes, d)) / 4.0
        x = rows[rng.integers(0, prototypes, size=num_tokens)]
        w_router = rng.integers(-4, 5, size=(d, num_experts)) / 4.0
        for src, dst in copied_columns:
            w_router[:, dst] = w_router[:, src]
        x, w_router = x * scale, w_router * scale
        if offset:
            x = np.hstack([x, np.ones((num_tokens, 1))])
            w_router = np.vstack([w_router, np.full((1, num_experts), offset)])
        _, _, _, probs = route(x, w_router, k, 1.0)
        if _separated(x @ w_router, probs):
            break
        sub += 1
    d = x.shape[1]
    w_experts = rng.normal(size=(num_experts, d, hidden)) / math.sqrt(d)
    b_experts = rng.normal(size=(num_experts, hidden))
    dy = rng.normal(size=(num_tokens, hidden))
    return tuple(np.ascontiguousarray(a, dtype=dtype)
                 for a in (x, w_router, w_experts, b_experts, dy))
