"""The shader, dispatched one threadgroup per row at threadgroup sizes it does not choose.

These tests need MPS (Apple silicon). The harness decides that before pytest starts (the
task is needs_accelerator elsewhere); nothing here skips. Expected values are computed
independently in float64 (numpy, and torch autograd of softmax).
"""
import numpy as np
import pytest
import torch

from softmax_backward_metal import SOURCE, softmax_backward

DEVICE = torch.device("mps")

# (threadgroup size, row length): sizes from 1 to 1024, powers of two and not, narrower
# than the row (each lane loops over several elements) and wider (idle lanes).
SHAPES = [
    (1, 1), (1, 37), (2, 3), (3, 1), (3, 100), (5, 4096), (32, 31), (32, 32), (33, 1000),
    (100, 1000), (257, 64), (640, 3000), (1000, 999), (1023, 1024), (1024, 1), (1024, 5000),
]
N_ROWS = 6

# dx = y * (dy - dot) in float32. The dot product is a sum of at most a few thousand float32
# products, split over the lanes and folded: its error is ~1e-7 relative to sum|dy*y| (at
# most ~3), and dx multiplies it by y <= 1. 1e-6 absolute plus 1e-5 relative covers that,
# while a wrong dot product or fold is off by orders of magnitude more.
TOL = dict(rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def kernel():
    return torch.mps.compile_shader(SOURCE).softmax_backward_rows


def make_problem(n_rows, n_cols, seed, logit_scale=2.0, grad_scale=1.0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n_rows, n_cols)) * logit_scale
    y = np.exp(z - z.max(axis=1, keepdims=True))
    y = (y / y.sum(axis=1, keepdims=True)).astype(np.float32)
    dy = (rng.standard_normal((n_rows, n_cols)) * grad_scale).astype(np.float32)
    return y, dy


def softmax_backward_float64(y, dy):
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    return y64 * (dy64 - (dy64 * y64).sum(axis=1, keepdims=True))


def dispatch(kernel, y, dy, group_size):
    n_rows, n_cols = y.shape
    y_t = torch.from_numpy(y).to(DEVICE)
    dy_t = torch.from_numpy(dy).to(DEVICE)
    dx = torch.full((n_rows, n_cols), float("nan"), dtype=torch.float32, device=DEVICE)
    kernel(y_t, dy_t, dx, n_cols, threads=n_rows * group_size, group_size=group_size)
    torch.mps.synchronize()
    return dx.cpu().numpy()


@pytest.mark.parametrize("group_size,n_cols", SHAPES, ids=[f"tg{g}-n{n}" for g, n in SHAPES])
def test_matches_float64_at_any_threadgroup_size(kernel, group_size, n_cols):
    y, dy = make_problem(N_ROWS, n_cols, seed=group_size * 10007 + n_cols)
    got = dispatch(kernel, y, dy, group_size)
    np.testing.assert_allclose(got, softmax_backward_float64(y, dy), **TOL)


@pytest.mark.parametrize("group_size", [1, 50, 512])
def test_matches_autograd_of_softmax(kernel, group_size):
    # The gradient of sum(softmax(z) * dy) with respect to z, by float64 autograd, from the
    # same z that produced y. y reaches the kernel rounded to float32 (relative 6e-8), so
    # the tolerance gains 1e-6 relative to stay clear of that rounding.
    n_rows, n_cols = 4, 333
    rng = np.random.default_rng(group_size)
    z = torch.tensor(rng.standard_normal((n_rows, n_cols)) * 2.0, dtype=torch.float64, requires_grad=True)
    dy = torch.tensor(rng.standard_normal((n_rows, n_cols)), dtype=torch.float64)
    y = torch.softmax(z, dim=1)
    (expected,) = torch.autograd.grad((y * dy).sum(), z)
    got = dispatch(kernel, y.detach().numpy().astype(np.float32), dy.numpy().astype(np.float32), group_size)
    np.testing.assert_allclose(got, expected.numpy(), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("group_size,n_cols", [(1024, 5), (300, 7), (77, 2)])
def test_lanes_without_elements_do_not_pollute_the_row(kernel, group_size, n_cols):
    # First fill threadgroup memory with large partial sums from a wide problem, then run
    # rows far narrower than the threadgroup: a slot an idle lane leaves unwritten (stale or
    # not) enters the dot product and shifts every element of the row.
    wide_y, wide_dy = make_problem(N_ROWS, 4096, seed=7, logit_scale=0.1, grad_scale=1000.0)
    dispatch(kernel, wide_y, np.abs(wide_dy), 1024)
    y, dy = make_problem(N_ROWS, n_cols, seed=group_size + n_cols)
    got = dispatch(kernel, y, dy, group_size)
    np.testing.assert_allclose(got, softmax_backward_float64(y, dy), **TOL)


def test_rows_are_independent(kernel):
    # Rows with very different peakedness and gradient scale side by side.
    n_rows, n_cols = 6, 257
    rng = np.random.default_rng(17)
    scales = np.array([0.1, 1.0, 8.0, 3.0, 0.5, 20.0])[:, None]
    z = rng.standard_normal((n_rows, n_cols)) * scales
    y = np.exp(z - z.max(axis=1, keepdims=True))
    y = (y / y.sum(axis=1, keepdims=True)).astype(np.float32)
    dy = (rng.standard_normal((n_rows, n_cols)) * np.array([1, 10, 0.1, 5, 1, 2])[:, None]).astype(np.float32)
    got = dispatch(kernel, y, dy, 96)
    # dy up to ~10x larger here, so the absolute float32 error of dot (and of dx) is too.
    np.testing.assert_allclose(got, softmax_backward_float64(y, dy), rtol=1e-5, atol=1e-5)


def test_wrapper_returns_dx():
    y, dy = make_problem(5, 250, seed=13)
    dx = softmax_backward(torch.from_numpy(y).to(DEVICE), torch.from_numpy(dy).to(DEVICE), threadgroup_size=200)
    assert dx.shape == (5, 250) and dx.dtype == torch.float32 and dx.device.type == "mps"
    np.testing.assert_allclose(dx.cpu().numpy(), softmax_backward_float64(y, dy), **TOL)
