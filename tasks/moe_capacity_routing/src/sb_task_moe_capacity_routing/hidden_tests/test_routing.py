"""Routing decisions against a brute-force replay of the stated rules (_oracle.route).

Inputs come from _oracle.make_case: many tokens are exact copies of each other and some
experts' router columns are copies of others, so ties in the top-k and in the drop order
are the common case, not the exception; and every probability that is not an exact copy
of another is far from it, so the expected decisions are the same in float32 and float64.
"""
import numpy as np
import pytest

import _oracle
from _cases import CASES, DTYPES, assert_close, case
from moe import route

CASE_IDS = [(dtype, name) for dtype in DTYPES for name in CASES]


def _ids(param):
    return param.__name__ if isinstance(param, type) else str(param)


def _route(name, dtype, seed=0):
    (x, w_router, *_), k, cf, _ = case(name, dtype, seed)
    got = [np.asarray(a) for a in route(x, w_router, k, cf)]
    assert len(got) == 3, f"route returned {len(got)} values, expected 3"
    return got, _oracle.route(x, w_router, k, cf)


@pytest.mark.parametrize("dtype, name", CASE_IDS, ids=_ids)
def test_choices_match_oracle(dtype, name):
    (experts, _, _), (want, _, _, _) = _route(name, dtype)
    assert experts.tolist() == want, "the k chosen experts per token, in choice order"


@pytest.mark.parametrize("dtype, name", CASE_IDS, ids=_ids)
def test_gates_match_oracle(dtype, name):
    (_, gates, _), (_, want, _, _) = _route(name, dtype)
    assert_close(gates, want, dtype, "gates")


@pytest.mark.parametrize("dtype, name", CASE_IDS, ids=_ids)
def test_slots_match_replay(dtype, name):
    (_, _, slots), (_, _, want, _) = _route(name, dtype)
    assert slots.tolist() == want, "slot of each assignment in its expert (-1: dropped)"


def _random_layer(seed, dtype):
    rng = np.random.default_rng(seed)
    num_experts = int(rng.integers(3, 9))
    k = int(rng.integers(1, min(3, num_experts) + 1))
    copied = [tuple(int(c) for c in rng.choice(num_experts, 2, replace=False))
              for _ in range(int(rng.integers(0, 3)))]
    num_tokens = int(rng.integers(6, 41))
    cf = float(rng.choice([0.25, 0.5, 0.75, 1.0, 1.25, 1.5]))
    x, w_router, *_ = _oracle.make_case(seed, num_tokens, 5, num_experts, 2, k,
                                        int(rng.integers(2, 7)), copied, dtype,
                                        float(rng.choice([0.5, 1.0, 2.0])))
    return x, w_router, k, cf


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("seed", range(12))
def test_random_layers_match_replay(dtype, seed):
    x, w_router, k, cf = _random_layer(100 + seed, dtype)
    experts, gates, slots = (np.asarray(a) for a in route(x, w_router, k, cf))
    want_experts, want_gates, want_slots, _ = _oracle.route(x, w_router, k, cf)
    assert experts.tolist() == want_experts, "the k chosen experts per token"
    assert slots.tolist() == want_slots, "slot of each assignment in its expert (-1: dropped)"
    assert_close(gates, want_gates, dtype, "gates")


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
def test_route_returns_integer_indices_and_gates_in_input_dtype(dtype):
    (experts, gates, slots), _ = _route("top2_tight", dtype)
    assert experts.shape == slots.shape == gates.shape == (32, 2)
    assert np.issubdtype(experts.dtype, np.integer), f"experts dtype {experts.dtype}"
    assert np.issubdtype(slots.dtype, np.integer), f"slots dtype {slots.dtype}"
    assert gates.dtype == dtype, f"gates dtype {gates.dtype}, inputs {np.dtype(dtype)}"
