"""The shader, dispatched one threadgroup per row at threadgroup sizes it does not choose.

These tests need MPS (Apple silicon). The harness decides that before pytest starts (the
task is needs_accelerator elsewhere); nothing here skips. The judge never compiles or runs
the solution's shader: _probe_metal.py does that in the solution's process and returns
the dx buffers. Expected values are computed here, independently, in float64 (numpy, and
torch autograd of softmax).
"""
import numpy as np
import pytest
import torch

from sb.judge import probe

METAL = probe("_probe_metal.py")
DEVICE_TYPE = "mps"  # where the wrapper's result must live

# (threadgroup size, row length): sizes from 1 to 1024, powers of two and not, narrower
# than the row (each lane loops over several elements) and wider (idle lanes).
SHAPES = [
    (1, 1), (1, 37), (2, 3), (3, 1), (3, 100), (5, 4096), (32, 31), (32, 32), (33, 1000),
    (100, 1000), (257, 64), (640, 3000), (1000, 999), (1023, 1024), (1024, 1), (1024, 5000),
]
N_ROWS = 6
EXTRA_ROWS = 1  # a NaN row after the last one: a kernel must leave it alone

# dx = y * (dy - dot) in float32. The dot product is a sum of at most a few thousand float32
# products, split over the lanes and folded: its error is ~1e-7 relative to sum|dy*y| (at
# most ~3), and dx multiplies it by y <= 1. 1e-6 absolute plus 1e-5 relative covers that,
# while a wrong dot product or fold is off by orders of magnitude more.
TOL = dict(rtol=1e-5, atol=1e-6)


def softmax_rows(z):
    y = np.exp(z - z.max(axis=1, keepdims=True))
    return y / y.sum(axis=1, keepdims=True)


def make_problem(n_rows, n_cols, seed, logit_scale=2.0, grad_scale=1.0):
    rng = np.random.default_rng(seed)
    y = softmax_rows(rng.standard_normal((n_rows, n_cols)) * logit_scale).astype(np.float32)
    dy = (rng.standard_normal((n_rows, n_cols)) * grad_scale).astype(np.float32)
    return y, dy


def softmax_backward_float64(y, dy):
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    return y64 * (dy64 - (dy64 * y64).sum(axis=1, keepdims=True))


def dispatch(y, dy, group_size):
    """The dx the solution's kernel writes, after checking it wrote nothing past the rows."""
    (buffer,) = METAL.dispatch([(y, dy, group_size, EXTRA_ROWS)])
    n_rows = y.shape[0]
    assert np.isnan(buffer[n_rows:]).all(), "the kernel wrote past the last row of dx"
    return buffer[:n_rows]


@pytest.mark.parametrize("group_size,n_cols", SHAPES, ids=[f"tg{g}-n{n}" for g, n in SHAPES])
def test_matches_float64_at_any_threadgroup_size(group_size, n_cols):
    y, dy = make_problem(N_ROWS, n_cols, seed=group_size * 10007 + n_cols)
    got = dispatch(y, dy, group_size)
    np.testing.assert_allclose(got, softmax_backward_float64(y, dy), **TOL)


@pytest.mark.parametrize("group_size,n_cols", [(1, 50), (7, 1), (96, 3000), (1024, 700)])
def test_a_single_row(group_size, n_cols):
    y, dy = make_problem(1, n_cols, seed=31 * group_size + n_cols)
    got = dispatch(y, dy, group_size)
    np.testing.assert_allclose(got, softmax_backward_float64(y, dy), **TOL)


def test_many_rows():
    # 300 threadgroups: each must find its own row from its position in the grid.
    y, dy = make_problem(300, 45, seed=3)
    got = dispatch(y, dy, 20)
    np.testing.assert_allclose(got, softmax_backward_float64(y, dy), **TOL)


@pytest.mark.parametrize("group_size", [1, 50, 512])
def test_matches_autograd_of_softmax(group_size):
    # The gradient of sum(softmax(z) * dy) with respect to z, by float64 autograd, from the
    # same z that produced y. y reaches the kernel rounded to float32 (relative 6e-8), so
    # the tolerance gains 1e-6 relative to stay clear of that rounding.
    n_rows, n_cols = 4, 333
    rng = np.random.default_rng(group_size)
    z = torch.tensor(rng.standard_normal((n_rows, n_cols)) * 2.0, dtype=torch.float64, requires_grad=True)
    dy = torch.tensor(rng.standard_normal((n_rows, n_cols)), dtype=torch.float64)
    y = torch.softmax(z, dim=1)
    (expected,) = torch.autograd.grad((y * dy).sum(), z)
    got = dispatch(y.detach().numpy().astype(np.float32), dy.numpy().astype(np.float32), group_size)
    np.testing.assert_allclose(got, expected.numpy(), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("group_size,n_cols", [(1024, 5), (300, 7), (77, 2)])
def test_lanes_without_elements_do_not_pollute_the_row(group_size, n_cols):
    # First fill threadgroup memory with large partial sums from a wide problem, then, with
    # the same pipeline, run rows far narrower than the threadgroup: a slot an idle lane
    # leaves unwritten (stale or not) enters the dot product and shifts every element.
    wide_y, wide_dy = make_problem(N_ROWS, 4096, seed=7, logit_scale=0.1, grad_scale=1000.0)
    y, dy = make_problem(N_ROWS, n_cols, seed=group_size + n_cols)
    _, got = METAL.dispatch([(wide_y, np.abs(wide_dy), 1024, 0), (y, dy, group_size, 0)])
    np.testing.assert_allclose(got, softmax_backward_float64(y, dy), **TOL)


def test_rows_are_independent():
    # Rows with very different peakedness and gradient scale side by side.
    n_rows, n_cols = 6, 257
    rng = np.random.default_rng(17)
    scales = np.array([0.1, 1.0, 8.0, 3.0, 0.5, 20.0])[:, None]
    y = softmax_rows(rng.standard_normal((n_rows, n_cols)) * scales).astype(np.float32)
    dy = (rng.standard_normal((n_rows, n_cols)) * np.array([1, 10, 0.1, 5, 1, 2])[:, None]).astype(np.float32)
    got = dispatch(y, dy, 96)
    # dy up to ~10x larger here, so the absolute float32 error of dot (and of dx) is too.
    np.testing.assert_allclose(got, softmax_backward_float64(y, dy), rtol=1e-5, atol=1e-5)


def test_constant_gradient_gives_zero():
    # dy = c everywhere: dot = c * sum(y) ~ c, so dx = y * (c - dot) is ~0. A row term that
    # is not sum(dy * y) (sum(dy), or one lane's share of it) is off by ~c * y. The kernel's
    # float32 dot is within ~n * 2**-24 * c = 1e-4 of the float64 one, times y ~ 1/n: the
    # error of dx stays ~2e-7, inside TOL's 1e-6.
    n_rows, n_cols = 4, 500
    y, _ = make_problem(n_rows, n_cols, seed=19)
    dy = np.full((n_rows, n_cols), 3.0, dtype=np.float32)
    got = dispatch(y, dy, 64)
    np.testing.assert_allclose(got, softmax_backward_float64(y, dy), **TOL)


@pytest.mark.parametrize("threadgroup_size,n_rows,n_cols", [(200, 5, 250), (3, 4, 1000), (1024, 3, 10), (1, 2, 33)])
def test_wrapper_dispatches_at_the_given_threadgroup_size(threadgroup_size, n_rows, n_cols):
    y, dy = make_problem(n_rows, n_cols, seed=13 + threadgroup_size)
    seen = METAL.wrapper(y, dy, threadgroup_size)
    assert seen["import_error"] is None, f"the module does not import without MPS: {seen['import_error']}"
    assert seen["compiles_during_import"] == 0, "the library must be compiled on first use, never at import"
    assert seen["type"] == "Tensor", f"softmax_backward returned a {seen['type']}, not a torch.Tensor"
    assert seen["shape"] == [n_rows, n_cols] and str(seen["dtype"]) == "torch.float32", (seen["shape"], seen["dtype"])
    assert seen["device"] == DEVICE_TYPE, f"dx is on {seen['device']}, not {DEVICE_TYPE}"
    calls = seen["calls"]
    assert calls, "softmax_backward never dispatched a kernel of the library compiled from SOURCE"
    for call in calls:
        assert call["kernel"] == "softmax_backward_rows", call
        assert call["group_size"] in (threadgroup_size, [threadgroup_size]), (
            f"dispatched with group_size={call['group_size']}, asked for {threadgroup_size}")
        assert call["threads"] in (n_rows * threadgroup_size, [n_rows * threadgroup_size]), (
            f"dispatched threads={call['threads']} for {n_rows} rows of threadgroups of {threadgroup_size}")
    np.testing.assert_allclose(seen["dx"], softmax_backward_float64(y, dy), **TOL)
