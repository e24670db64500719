import math

import numpy as np
import pytest

from router import route

TOL = 1e-13  # the promised accuracy of every gate


def oracle(logits, k, capacity):
    """The contract in plain Python: choices, stable gates, then slots offered rank by rank."""
    choices, gates = [], []
    for row in logits.tolist():
        best = sorted(range(len(row)), key=lambda e: (-row[e], e))[:k]
        weights = [math.exp(row[e] - row[best[0]]) for e in best]
        choices.append(best)
        gates.append([w / math.fsum(weights) for w in weights])
    experts, kept, load = np.full((len(logits), k), -1), np.zeros((len(logits), k)), {}
    for rank in range(k):
        for t in sorted(range(len(logits)), key=lambda t: (-gates[t][rank], t)):
            e = choices[t][rank]
            if load.get(e, 0) < capacity:
                load[e] = load.get(e, 0) + 1
                experts[t, rank], kept[t, rank] = e, gates[t][rank]
    return experts, kept


def check(logits, k, capacity):
    experts, gates = route(logits, k=k, capacity=capacity)
    want_experts, want_gates = oracle(logits, k, capacity)
    assert experts.dtype == np.int64 and gates.dtype == np.float64
    np.testing.assert_array_equal(experts, want_experts)
    np.testing.assert_allclose(gates, want_gates, rtol=0, atol=TOL)


def sweep(logits):
    """Every k from 1 to E against capacities from 0 (all dropped) to no limit."""
    tokens, n_experts = logits.shape
    for k in range(1, n_experts + 1):
        for capacity in {0, 1, -(-tokens * k // n_experts), tokens * k}:
            check(logits, k, capacity)


@pytest.mark.parametrize("seed", range(6))
def test_random_logits_match_the_oracle(seed):
    rng = np.random.default_rng(seed)
    sweep(rng.standard_normal((seed + 1, 5 - seed % 5)))


@pytest.mark.parametrize("seed", range(3))
def test_tied_logits_match_the_oracle(seed):
    rng = np.random.default_rng(seed)
    logits = rng.integers(-1, 2, (9, 4)).astype(np.float64)
    logits[seed::2] = logits[seed] + seed  # rows shifted by a constant have exactly equal gates
    sweep(logits)


def test_large_logits_at_unlike_offsets():
    rng = np.random.default_rng(7)
    offsets = np.linspace(-9990, 9990, 12)[:, None]
    sweep(np.clip(offsets + rng.standard_normal((12, 4)), -1e4, 1e4))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_logits_raise(bad):
    with pytest.raises(ValueError):
        route(np.full((2, 3), bad), k=1, capacity=1)


@pytest.mark.parametrize("logits, k, capacity", [
    (np.zeros(3), 1, 1), (np.zeros((1, 2, 3)), 1, 1), (np.zeros((2, 3)), 0, 1),
    (np.zeros((2, 3)), 4, 1), (np.zeros((2, 3)), 2, -1)])
def test_bad_arguments_raise(logits, k, capacity):
    with pytest.raises(ValueError):
        route(logits, k=k, capacity=capacity)


def test_logits_not_modified():
    logits = np.random.default_rng(3).standard_normal((6, 4)) + 2
    before = logits.copy()
    route(logits, k=2, capacity=2)
    np.testing.assert_array_equal(logits, before)
