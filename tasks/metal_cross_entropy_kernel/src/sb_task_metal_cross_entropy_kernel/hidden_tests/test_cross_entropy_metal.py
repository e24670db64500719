"""The shader, dispatched one threadgroup per row at threadgroup sizes it does not choose.

These tests need MPS (Apple silicon). The harness decides that before pytest starts (the
task is needs_accelerator elsewhere); nothing here skips. Every expected value is computed
independently in float64 numpy.
"""
import numpy as np
import pytest
import torch

from cross_entropy_metal import SOURCE, cross_entropy

DEVICE = torch.device("mps")

# (threadgroup size, row length): sizes from 1 to 1024, powers of two and not, narrower
# than the row (each lane loops over several elements) and wider (idle lanes).
SHAPES = [
    (1, 1), (1, 37), (2, 3), (3, 1), (3, 100), (5, 4096), (32, 31), (32, 32), (33, 1000),
    (100, 1000), (257, 64), (640, 3000), (1000, 999), (1023, 1024), (1024, 1), (1024, 5000),
]
N_ROWS = 6

# The loss is log(sum exp(x - max)) + max - x[target] in float32. Each lane sums at most a
# few thousand terms <= 1 and the fold adds at most 1024 partial sums: the relative error of
# the sum, and so the absolute error of its log, stays below ~1e-5 in practice (worst case
# n * 2**-24 ~ 3e-4 for n = 5000). 2e-4 absolute plus 1e-5 relative covers both, also for a
# fast-math exp, while every mistake the tests target is off by far more.
TOL = dict(rtol=1e-5, atol=2e-4)


@pytest.fixture(scope="module")
def kernel():
    return torch.mps.compile_shader(SOURCE).cross_entropy_rows


def make_problem(n_rows, n_cols, seed, scale=3.0, offset=0.0):
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal((n_rows, n_cols)) * scale + offset).astype(np.float32)
    targets = rng.integers(0, n_cols, size=n_rows).astype(np.int64)
    return logits, targets


def cross_entropy_float64(logits, targets):
    x = logits.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
    return lse - x[np.arange(x.shape[0]), targets]


def dispatch(kernel, logits, targets, group_size):
    n_rows, n_cols = logits.shape
    x = torch.from_numpy(logits).to(DEVICE)
    t = torch.from_numpy(targets).to(DEVICE)
    loss = torch.full((n_rows,), float("nan"), dtype=torch.float32, device=DEVICE)
    kernel(x, t, loss, n_cols, threads=n_rows * group_size, group_size=group_size)
    torch.mps.synchronize()
    return loss.cpu().numpy()


@pytest.mark.parametrize("group_size,n_cols", SHAPES, ids=[f"tg{g}-n{n}" for g, n in SHAPES])
def test_matches_float64_at_any_threadgroup_size(kernel, group_size, n_cols):
    logits, targets = make_problem(N_ROWS, n_cols, seed=group_size * 10007 + n_cols)
    got = dispatch(kernel, logits, targets, group_size)
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


@pytest.mark.parametrize("group_size", [1, 96, 1024])
def test_large_logits_do_not_overflow(kernel, group_size):
    # exp(100) overflows float32: only a max-shifted sum stays finite.
    logits, targets = make_problem(N_ROWS, 300, seed=5, scale=4.0, offset=100.0)
    got = dispatch(kernel, logits, targets, group_size)
    assert np.isfinite(got).all(), "non-finite loss for logits near 100"
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


@pytest.mark.parametrize("group_size,n_cols", [(1024, 5), (300, 7), (77, 2)])
def test_lanes_without_elements_do_not_pollute_the_row(kernel, group_size, n_cols):
    # First fill threadgroup memory with large values from a wide problem, then run rows
    # far narrower than the threadgroup whose logits are all near -200: a slot that an idle
    # lane leaves unwritten (stale, or zero) is far from the true row maximum, and
    # exp(-200) underflows float32, so a wrong maximum shows as inf or NaN.
    wide, wide_targets = make_problem(N_ROWS, 4096, seed=7, scale=1.0, offset=50.0)
    dispatch(kernel, wide, wide_targets, 1024)
    logits, targets = make_problem(N_ROWS, n_cols, seed=group_size + n_cols, scale=2.0, offset=-200.0)
    got = dispatch(kernel, logits, targets, group_size)
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


def test_rows_are_independent_and_use_their_own_target(kernel):
    # Rows of very different scale and offset side by side, each with its own target.
    n_cols = 129
    rng = np.random.default_rng(11)
    scales = np.array([0.1, 1.0, 10.0, 30.0, 2.0, 5.0], dtype=np.float64)[:, None]
    offsets = np.array([0.0, -40.0, 25.0, 0.0, 80.0, -5.0], dtype=np.float64)[:, None]
    logits = (rng.standard_normal((6, n_cols)) * scales + offsets).astype(np.float32)
    targets = np.array([0, n_cols - 1, 64, 3, 100, 17], dtype=np.int64)
    got = dispatch(kernel, logits, targets, 48)
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


def test_wrapper_returns_per_row_loss():
    logits, targets = make_problem(5, 250, seed=13)
    x = torch.from_numpy(logits).to(DEVICE)
    t = torch.from_numpy(targets).to(DEVICE)
    loss = cross_entropy(x, t, threadgroup_size=200)
    assert loss.shape == (5,) and loss.dtype == torch.float32 and loss.device.type == "mps"
    np.testing.assert_allclose(loss.cpu().numpy(), cross_entropy_float64(logits, targets), **TOL)
