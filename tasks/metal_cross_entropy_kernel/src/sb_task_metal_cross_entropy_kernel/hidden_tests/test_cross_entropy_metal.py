"""The shader, dispatched one threadgroup per row at threadgroup sizes it does not choose.

These tests need MPS (Apple silicon). The harness decides that before pytest starts (the
task is needs_accelerator elsewhere); nothing here skips. The judge never compiles or runs
the solution's shader: _probe_metal.py does that in the solution's process and returns
the loss buffers. Every expected value is computed here, independently, in float64 numpy.
"""
import numpy as np
import pytest

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
EXTRA = 4  # NaN slots after the last row's loss: a kernel must leave them alone

# The loss is log(sum exp(x - max)) + max - x[target] in float32. Each lane sums at most a
# few thousand terms <= 1 and the fold adds at most 1024 partial sums: the relative error of
# the sum, and so the absolute error of its log, stays below ~1e-5 in practice (worst case
# n * 2**-24 ~ 3e-4 for n = 5000). 2e-4 absolute plus 1e-5 relative covers both, also for a
# fast-math exp, while every mistake the tests target is off by far more.
TOL = dict(rtol=1e-5, atol=2e-4)


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


def dispatch(logits, targets, group_size):
    """The loss the solution's kernel writes, after checking it wrote nothing past the rows."""
    (buffer,) = METAL.dispatch([(logits, targets, group_size, EXTRA)])
    n_rows = logits.shape[0]
    assert np.isnan(buffer[n_rows:]).all(), "the kernel wrote past loss[n_rows - 1]"
    return buffer[:n_rows]


@pytest.mark.parametrize("group_size,n_cols", SHAPES, ids=[f"tg{g}-n{n}" for g, n in SHAPES])
def test_matches_float64_at_any_threadgroup_size(group_size, n_cols):
    logits, targets = make_problem(N_ROWS, n_cols, seed=group_size * 10007 + n_cols)
    got = dispatch(logits, targets, group_size)
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


@pytest.mark.parametrize("group_size,n_cols", [(1, 50), (7, 1), (96, 3000), (1024, 700)])
def test_a_single_row(group_size, n_cols):
    logits, targets = make_problem(1, n_cols, seed=31 * group_size + n_cols)
    got = dispatch(logits, targets, group_size)
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


def test_many_rows():
    # 300 threadgroups: each must find its own row from its position in the grid.
    logits, targets = make_problem(300, 45, seed=3)
    got = dispatch(logits, targets, 20)
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


@pytest.mark.parametrize("group_size", [1, 96, 1024])
def test_large_logits_do_not_overflow(group_size):
    # exp(100) overflows float32: only a max-shifted sum stays finite.
    logits, targets = make_problem(N_ROWS, 300, seed=5, scale=4.0, offset=100.0)
    got = dispatch(logits, targets, group_size)
    assert np.isfinite(got).all(), "non-finite loss for logits near 100"
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


@pytest.mark.parametrize("group_size,n_cols", [(1024, 5), (300, 7), (77, 2)])
def test_lanes_without_elements_do_not_pollute_the_row(group_size, n_cols):
    # First fill threadgroup memory with large values from a wide problem, then, with the
    # same pipeline, run rows far narrower than the threadgroup whose logits are all near
    # -200: a slot that an idle lane leaves unwritten (stale, or zero) is far from the true
    # row maximum, and exp(-200) underflows float32, so a wrong maximum shows as inf or NaN.
    wide, wide_targets = make_problem(N_ROWS, 4096, seed=7, scale=1.0, offset=50.0)
    logits, targets = make_problem(N_ROWS, n_cols, seed=group_size + n_cols, scale=2.0, offset=-200.0)
    _, got = METAL.dispatch([(wide, wide_targets, 1024, 0), (logits, targets, group_size, 0)])
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


def test_rows_are_independent_and_use_their_own_target():
    # Rows of very different scale and offset side by side, each with its own target,
    # among them the first and the last column.
    n_cols = 129
    rng = np.random.default_rng(11)
    scales = np.array([0.1, 1.0, 10.0, 30.0, 2.0, 5.0], dtype=np.float64)[:, None]
    offsets = np.array([0.0, -40.0, 25.0, 0.0, 80.0, -5.0], dtype=np.float64)[:, None]
    logits = (rng.standard_normal((6, n_cols)) * scales + offsets).astype(np.float32)
    targets = np.array([0, n_cols - 1, 64, 3, 100, 17], dtype=np.int64)
    got = dispatch(logits, targets, 48)
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


def test_target_at_the_row_maximum_and_far_below_it():
    # One dominant logit: the loss is ~0 when it is the target and ~60 when the target is
    # 60 below it; a loss that loses the max shift, or reads the wrong target, is far off.
    n_cols = 200
    logits = np.zeros((4, n_cols), dtype=np.float32)
    logits[:, 17] = 60.0
    targets = np.array([17, 0, n_cols - 1, 17], dtype=np.int64)
    got = dispatch(logits, targets, 64)
    np.testing.assert_allclose(got, cross_entropy_float64(logits, targets), **TOL)


@pytest.mark.parametrize("threadgroup_size,n_rows,n_cols", [(200, 5, 250), (3, 4, 1000), (1024, 3, 10), (1, 2, 33)])
def test_wrapper_dispatches_at_the_given_threadgroup_size(threadgroup_size, n_rows, n_cols):
    logits, targets = make_problem(n_rows, n_cols, seed=13 + threadgroup_size)
    seen = METAL.wrapper(logits, targets, threadgroup_size)
    assert seen["import_error"] is None, f"the module does not import without MPS: {seen['import_error']}"
    assert seen["compiles_during_import"] == 0, "the library must be compiled on first use, never at import"
    assert seen["type"] == "Tensor", f"cross_entropy returned a {seen['type']}, not a torch.Tensor"
    assert seen["shape"] == [n_rows] and str(seen["dtype"]) == "torch.float32", (seen["shape"], seen["dtype"])
    assert seen["device"] == DEVICE_TYPE, f"the loss is on {seen['device']}, not {DEVICE_TYPE}"
    calls = seen["calls"]
    assert calls, "cross_entropy never dispatched a kernel of the library compiled from SOURCE"
    for call in calls:
        assert call["kernel"] == "cross_entropy_rows", call
        assert call["group_size"] in (threadgroup_size, [threadgroup_size]), (
            f"dispatched with group_size={call['group_size']}, asked for {threadgroup_size}")
        assert call["threads"] in (n_rows * threadgroup_size, [n_rows * threadgroup_size]), (
            f"dispatched threads={call['threads']} for {n_rows} rows of threadgroups of {threadgroup_size}")
    np.testing.assert_allclose(seen["loss"], cross_entropy_float64(logits, targets), **TOL)
