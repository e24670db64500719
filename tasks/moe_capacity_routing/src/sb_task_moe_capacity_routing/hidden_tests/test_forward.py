"""The layer's output and auxiliary loss against a per-token float64 loop (_oracle.forward)."""
import numpy as np
import pytest

import _oracle
from _cases import CASES, DTYPES, assert_close, case
from moe import moe_forward

CASE_IDS = [(dtype, name) for dtype in DTYPES for name in CASES]


def _ids(param):
    return param.__name__ if isinstance(param, type) else str(param)


def _forward(name, dtype):
    (x, w_router, w_experts, b_experts, _), k, cf, aux_coef = case(name, dtype)
    y, aux = moe_forward(x, w_router, w_experts, b_experts, k, cf, aux_coef)
    want = _oracle.forward(x, w_router, w_experts, b_experts, k, cf, aux_coef)
    return (np.asarray(y), aux), want, (x, w_router, k, cf)


@pytest.mark.parametrize("dtype, name", CASE_IDS, ids=_ids)
def test_output_matches_per_token_loop(dtype, name):
    (y, _), (want, _), _ = _forward(name, dtype)
    assert_close(y, want, dtype, "y")


@pytest.mark.parametrize("dtype, name", CASE_IDS, ids=_ids)
def test_aux_loss_matches_oracle(dtype, name):
    (_, aux), (_, want), _ = _forward(name, dtype)
    assert_close(float(aux), want, dtype, "aux loss")


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("name", ["top1", "top2_tight", "top2_sharp", "minimum_capacity"])
def test_tokens_with_every_assignment_dropped_output_zeros(dtype, name):
    (y, _), _, (x, w_router, k, cf) = _forward(name, dtype)
    _, _, slots, _ = _oracle.route(x, w_router, k, cf)
    dropped = [t for t, row in enumerate(slots) if all(s < 0 for s in row)]
    assert dropped, "test precondition: some token has every assignment dropped"
    assert np.all(y[dropped] == 0), f"rows {dropped} of y must be exactly zero"


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
def test_forward_keeps_input_dtype(dtype):
    (y, aux), _, _ = _forward("top2_flat", dtype)
    assert y.dtype == dtype, f"y dtype {y.dtype}, inputs {np.dtype(dtype)}"
    assert y.shape == (40, 4)
    assert isinstance(float(aux), float)
