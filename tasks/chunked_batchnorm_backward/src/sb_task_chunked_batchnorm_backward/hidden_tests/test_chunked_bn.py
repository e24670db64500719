import numpy as np
import pytest

from chunked_bn import ChunkedBatchNorm

from _autograd import C, make_batch, split, whole_batch

# Everything is float64 on 12 rows of O(1) values: two correct evaluations of batch norm
# and its gradient agree to ~1e-14, while each wrong formula moves entries by O(0.01-1).
TOL = 1e-10
EPS = 1e-3
N = 12

MANY_CHUNK_SPLITS = [(1, 11), (11, 1), (3, 1, 4, 1, 3), (2, 2, 2, 2, 2, 2), (1,) * 12]


def _ids(sizes):
    return "chunks_" + "-".join(map(str, sizes))


def _run(x, dy, gamma, beta, sizes, apply_sizes=None, reverse_apply=False):
    """Drive the two-pass protocol; returns (y, dx, bn) with rows in batch order."""
    bn = ChunkedBatchNorm(gamma, beta, eps=EPS)
    passes = split(x, sizes)
    for lo, hi in passes:
        bn.forward_accumulate(x[lo:hi])
    applies = split(x, apply_sizes or sizes)
    order = list(reversed(applies)) if reverse_apply else applies
    y = np.full_like(x, np.nan)
    for lo, hi in order:
        y[lo:hi] = bn.forward_apply(x[lo:hi])
    for lo, hi in passes:
        bn.backward_accumulate(x[lo:hi], dy[lo:hi])
    dx = np.full_like(x, np.nan)
    for lo, hi in order:
        dx[lo:hi] = bn.backward_apply(x[lo:hi], dy[lo:hi])
    return y, dx, bn


@pytest.mark.parametrize("sizes", [(N,)] + MANY_CHUNK_SPLITS, ids=_ids)
def test_forward_matches_whole_batch(sizes):
    x, dy, gamma, beta = make_batch(1, N)
    y, _, _ = _run(x, dy, gamma, beta, sizes)
    np.testing.assert_allclose(y, whole_batch(x, dy, gamma, beta, EPS)[0], rtol=0, atol=TOL)


@pytest.mark.parametrize("sizes", [(N,)] + MANY_CHUNK_SPLITS, ids=_ids)
def test_parameter_gradients_match_autograd(sizes):
    x, dy, gamma, beta = make_batch(2, N)
    _, _, bn = _run(x, dy, gamma, beta, sizes)
    _, _, dgamma, dbeta = whole_batch(x, dy, gamma, beta, EPS)
    np.testing.assert_allclose(bn.grad_gamma(), dgamma, rtol=0, atol=TOL)
    np.testing.assert_allclose(bn.grad_beta(), dbeta, rtol=0, atol=TOL)


def test_input_gradient_single_chunk():
    x, dy, gamma, beta = make_batch(3, N)
    _, dx, _ = _run(x, dy, gamma, beta, (N,))
    np.testing.assert_allclose(dx, whole_batch(x, dy, gamma, beta, EPS)[1], rtol=0, atol=TOL)


@pytest.mark.parametrize("sizes", MANY_CHUNK_SPLITS, ids=_ids)
def test_input_gradient_many_chunks(sizes):
    x, dy, gamma, beta = make_batch(4, N)
    _, dx, _ = _run(x, dy, gamma, beta, sizes)
    assert dx.shape == x.shape
    np.testing.assert_allclose(dx, whole_batch(x, dy, gamma, beta, EPS)[1], rtol=0, atol=TOL)


def test_input_gradient_unit_scale_many_chunks():
    # gamma = 1, beta = 0: the plain normalisation's gradient, split into uneven chunks.
    x, dy, _, _ = make_batch(5, N)
    gamma, beta = np.ones(C), np.zeros(C)
    _, dx, _ = _run(x, dy, gamma, beta, (5, 1, 6))
    np.testing.assert_allclose(dx, whole_batch(x, dy, gamma, beta, EPS)[1], rtol=0, atol=TOL)


def test_apply_pass_may_use_another_split_and_order():
    x, dy, gamma, beta = make_batch(6, N)
    y, dx, _ = _run(x, dy, gamma, beta, (1, 4, 7), apply_sizes=(6, 5, 1), reverse_apply=True)
    want_y, want_dx, _, _ = whole_batch(x, dy, gamma, beta, EPS)
    np.testing.assert_allclose(y, want_y, rtol=0, atol=TOL)
    np.testing.assert_allclose(dx, want_dx, rtol=0, atol=TOL)


def test_input_gradient_independent_of_the_split():
    x, dy, gamma, beta = make_batch(7, 20)
    results = [_run(x, dy, gamma, beta, s)[1] for s in [(20,), (1, 19), (7, 1, 2, 10), (1,) * 20]]
    for dx in results[1:]:
        np.testing.assert_allclose(dx, results[0], rtol=0, atol=TOL)


def test_input_gradient_finite_differences():
    # Brute force, no autograd: central differences of L = sum(dy * y) on the whole batch,
    # computed through the same protocol. Step 1e-6 gives truncation ~1e-12 and rounding
    # ~1e-10 on O(1) values, so 1e-6 is a safe bound; wrong formulas miss by O(0.01) or more.
    x, dy, gamma, beta = make_batch(8, 7)
    _, dx, _ = _run(x, dy, gamma, beta, (2, 1, 4))

    def loss(xx):
        return float(np.sum(dy * _run(xx, dy, gamma, beta, (2, 1, 4))[0]))

    h = 1e-6
    fd = np.zeros_like(x)
    for i in range(x.shape[0]):
        for j in range(C):
            up, down = x.copy(), x.copy()
            up[i, j] += h
            down[i, j] -= h
            fd[i, j] = (loss(up) - loss(down)) / (2 * h)
    np.testing.assert_allclose(dx, fd, rtol=0, atol=1e-6)
