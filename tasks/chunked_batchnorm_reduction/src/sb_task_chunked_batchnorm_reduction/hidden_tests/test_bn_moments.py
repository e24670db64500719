import numpy as np
import pytest

from bn_moments import Moments, batch_moments, batchnorm_train_step, chunk_moments, merge_moments

from _exact import C, exact_mean_m2, make_rows, split

# Data sit on an offset of 1e8 (ulp 1.5e-8) with channel spreads 0.5-2. A stable method
# (deviations from a mean, Chan's merge) loses about ulp(offset)/spread per step: relative
# error below 1e-7 on M2 even after a dozen merges, so rtol 1e-6 is a safe bound. The
# E[x^2] - E[x]^2 formula cancels 16 digits there and misses by O(1) or more.
OFFSET = 1e8
M2_RTOL = 1e-6
# The mean of O(1e8) values is correct to a few ulps: rtol 1e-13 (ulp is 2.2e-16 relative).
MEAN_RTOL = 1e-13
# Unit-offset data in float64: stable formulas agree with fsum to ~1e-14 relative.
TIGHT = 1e-11

UNEQUAL_SPLITS = [(1, 40), (40, 1), (3, 1, 29, 1, 2), (1, 1, 1, 1, 1, 1, 1, 1, 1, 32)]


def _ids(sizes):
    return "chunks_" + "-".join(map(str, sizes))


def _assert_moments(m, rows, mean_rtol, m2_rtol):
    mean, m2 = exact_mean_m2(rows)
    assert int(m.count) == rows.shape[0]
    assert np.shape(m.mean) == (C,) and np.shape(m.m2) == (C,)
    np.testing.assert_allclose(m.mean, mean, rtol=mean_rtol, atol=0)
    np.testing.assert_allclose(m.m2, m2, rtol=m2_rtol, atol=0)


@pytest.mark.parametrize("n", [1, 2, 17])
def test_chunk_moments_match_exact_sums(n):
    rows = make_rows(n, n)
    m = chunk_moments(rows)
    assert isinstance(m, Moments)
    if n == 1:
        np.testing.assert_array_equal(m.m2, np.zeros(C))
    _assert_moments(m, rows, TIGHT, TIGHT if n > 1 else 0)


def test_chunk_moments_large_offset():
    rows = make_rows(4, 25, OFFSET)
    _assert_moments(chunk_moments(rows), rows, MEAN_RTOL, M2_RTOL)


@pytest.mark.parametrize("sizes", [(1, 40), (40, 1), (7, 9)], ids=_ids)
def test_merge_two_unequal_chunks(sizes):
    rows = make_rows(5, sum(sizes))
    a, b = (chunk_moments(c) for c in split(rows, sizes))
    _assert_moments(merge_moments(a, b), rows, TIGHT, TIGHT)


@pytest.mark.parametrize("sizes", [(1, 40), (12, 3)], ids=_ids)
def test_merge_two_unequal_chunks_large_offset(sizes):
    rows = make_rows(6, sum(sizes), OFFSET)
    a, b = (chunk_moments(c) for c in split(rows, sizes))
    _assert_moments(merge_moments(a, b), rows, MEAN_RTOL, M2_RTOL)


def test_merge_leaves_its_inputs_unchanged():
    rows = make_rows(7, 10)
    a, b = chunk_moments(rows[:3]), chunk_moments(rows[3:])
    before = [(x.count, x.mean.copy(), x.m2.copy()) for x in (a, b)]
    merge_moments(a, b)
    for x, (count, mean, m2) in zip((a, b), before):
        assert x.count == count
        np.testing.assert_array_equal(x.mean, mean)
        np.testing.assert_array_equal(x.m2, m2)


@pytest.mark.parametrize("sizes", UNEQUAL_SPLITS, ids=_ids)
def test_batch_moments_many_unequal_chunks_large_offset(sizes):
    rows = make_rows(8, sum(sizes), OFFSET)
    _assert_moments(batch_moments(split(rows, sizes)), rows, MEAN_RTOL, M2_RTOL)


def test_batch_moments_consumes_a_one_shot_iterator():
    rows = make_rows(9, 20)
    chunks = iter(split(rows, (1, 6, 13)))
    _assert_moments(batch_moments(chunks), rows, TIGHT, TIGHT)


def test_batch_moments_independent_of_the_split():
    rows = make_rows(10, 36, OFFSET)
    results = [batch_moments(split(rows, s)) for s in [(36,), (1, 35), (5, 1, 20, 10), (1,) * 36]]
    for m in results[1:]:
        np.testing.assert_allclose(m.mean, results[0].mean, rtol=MEAN_RTOL, atol=0)
        np.testing.assert_allclose(m.m2, results[0].m2, rtol=M2_RTOL, atol=0)


def _step_inputs(seed):
    rng = np.random.default_rng(seed)
    gamma = rng.uniform(0.5, 2.0, size=C)
    beta = rng.normal(size=C)
    running_mean = rng.normal(size=C)
    running_var = rng.uniform(0.5, 2.0, size=C)
    return gamma, beta, running_mean, running_var


@pytest.mark.parametrize("offset", [0.0, OFFSET], ids=["no_offset", "offset_1e8"])
def test_train_step_normalises_with_biased_variance(offset):
    sizes = (1, 4, 2, 9)
    rows = make_rows(11, sum(sizes), offset)
    gamma, beta, rm, rv = _step_inputs(11)
    eps = 1e-3
    outputs, _, _ = batchnorm_train_step(split(rows, sizes), gamma, beta, rm, rv, momentum=0.3, eps=eps)
    assert [o.shape for o in outputs] == [(s, C) for s in sizes]
    mean, m2 = exact_mean_m2(rows)
    expected = (rows - mean) / np.sqrt(m2 / rows.shape[0] + eps) * gamma + beta
    # Outputs are O(1); at offset 1e8, x - mean carries an absolute error of one ulp of the
    # data (1.5e-8), so 1e-6 absolute bounds the error of any stable method.
    np.testing.assert_allclose(np.concatenate(outputs), expected, rtol=0, atol=1e-6)


def test_running_mean_momentum_convention():
    sizes = (2, 7, 1, 5)
    rows = make_rows(12, sum(sizes))
    gamma, beta, rm, rv = _step_inputs(12)
    _, new_mean, _ = batchnorm_train_step(split(rows, sizes), gamma, beta, rm, rv, momentum=0.3)
    mean, _ = exact_mean_m2(rows)
    np.testing.assert_allclose(new_mean, 0.7 * rm + 0.3 * mean, rtol=TIGHT, atol=TIGHT)


@pytest.mark.parametrize("offset", [0.0, OFFSET], ids=["no_offset", "offset_1e8"])
def test_running_variance_is_unbiased(offset):
    sizes = (1, 3, 1, 6)
    rows = make_rows(13, sum(sizes), offset)
    gamma, beta, rm, rv = _step_inputs(13)
    _, _, new_var = batchnorm_train_step(split(rows, sizes), gamma, beta, rm, rv, momentum=0.3)
    _, m2 = exact_mean_m2(rows)
    np.testing.assert_allclose(new_var, 0.7 * rv + 0.3 * m2 / (rows.shape[0] - 1), rtol=M2_RTOL, atol=0)


def test_train_step_default_momentum_and_inputs_untouched():
    rows = make_rows(14, 8)
    gamma, beta, rm, rv = _step_inputs(14)
    rm0, rv0 = rm.copy(), rv.copy()
    _, new_mean, new_var = batchnorm_train_step(split(rows, (3, 5)), gamma, beta, rm, rv)
    mean, m2 = exact_mean_m2(rows)
    np.testing.assert_array_equal(rm, rm0)
    np.testing.assert_array_equal(rv, rv0)
    np.testing.assert_allclose(new_mean, 0.9 * rm0 + 0.1 * mean, rtol=TIGHT, atol=TIGHT)
    np.testing.assert_allclose(new_var, 0.9 * rv0 + 0.1 * m2 / 7, rtol=TIGHT, atol=TIGHT)


def test_single_row_batch_is_rejected():
    gamma, beta, rm, rv = _step_inputs(15)
    with pytest.raises(ValueError):
        batchnorm_train_step([make_rows(15, 1)], gamma, beta, rm, rv)
