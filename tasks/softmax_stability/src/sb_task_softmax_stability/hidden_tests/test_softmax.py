"""Hidden tests for softmax_stability.

Expected values come from _oracle (50-digit decimal arithmetic, no shifting), never from
the reference solution.
"""
import numpy as np
import pytest

import _oracle
from sb.judge import observe_call
from softmax import log_softmax, logsumexp, softmax

AXES = [0, 1, 2, -1, -2, -3]
SHAPE = (3, 4, 5)

# float64 tolerances. Against a correctly rounded oracle, a stable float64 evaluation over
# at most 5 terms is off by a handful of ulps: relative ~1e-15 for sums and ratios, and
# absolute ~ulp(|x|) (2.3e-13 at |x| = 2000) for log-domain values. 1e-12 / 1e-13 leave
# two orders of magnitude of headroom while an unstable formula is off by O(1) or is inf/NaN.
RTOL64 = 1e-12
ATOL64 = 1e-13
# float32: eps is 1.2e-7; a few roundings over 5 terms stay under 1e-6 relative.
RTOL32 = 1e-5
ATOL32 = 1e-5


def _logits(seed, shape=SHAPE, scale=4.0):
    return np.random.default_rng(seed).normal(0.0, scale, size=shape)


def _assert_close64(actual, expected):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    assert not np.isnan(actual).any(), "NaN in the result"
    np.testing.assert_allclose(actual, expected, rtol=RTOL64, atol=ATOL64)


# ---------------------------------------------------------------- plain values, every axis


@pytest.mark.parametrize("axis", AXES)
def test_logsumexp_matches_high_precision_oracle(axis):
    x = _logits(1)
    _assert_close64(logsumexp(x, axis=axis), _oracle.logsumexp(x, axis))


@pytest.mark.parametrize("axis", AXES)
def test_softmax_matches_high_precision_oracle(axis):
    x = _logits(2)
    _assert_close64(softmax(x, axis=axis), _oracle.softmax(x, axis))


@pytest.mark.parametrize("axis", AXES)
def test_log_softmax_matches_high_precision_oracle(axis):
    x = _logits(3)
    _assert_close64(log_softmax(x, axis=axis), _oracle.log_softmax(x, axis))


@pytest.mark.parametrize("axis", AXES)
def test_softmax_sums_to_one_along_the_axis(axis):
    p = softmax(_logits(4), axis=axis)
    # 5 terms each within a few ulps of exact: the sum is within ~1e-15 of 1.
    np.testing.assert_allclose(np.sum(p, axis=axis), 1.0, rtol=0, atol=1e-13)


def test_default_axis_is_the_last():
    x = _logits(5)
    _assert_close64(logsumexp(x), _oracle.logsumexp(x, -1))
    _assert_close64(softmax(x), _oracle.softmax(x, -1))
    _assert_close64(log_softmax(x), _oracle.log_softmax(x, -1))


# ---------------------------------------------------------------- keepdims


@pytest.mark.parametrize("axis", AXES)
def test_logsumexp_keepdims_keeps_the_reduced_axis_in_place(axis):
    x = _logits(6)
    out = logsumexp(x, axis=axis, keepdims=True)
    expected = np.expand_dims(_oracle.logsumexp(x, axis), axis)
    assert out.shape == expected.shape
    _assert_close64(out, expected)


@pytest.mark.parametrize("axis", AXES)
def test_logsumexp_without_keepdims_drops_the_reduced_axis(axis):
    x = _logits(7)
    out = logsumexp(x, axis=axis)
    assert out.shape == tuple(n for i, n in enumerate(SHAPE) if i != axis % len(SHAPE))


@pytest.mark.parametrize("axis", [0, 2])
def test_keepdims_result_broadcasts_back_to_log_softmax(axis):
    x = _logits(8)
    _assert_close64(x - logsumexp(x, axis=axis, keepdims=True), _oracle.log_softmax(x, axis))


# ---------------------------------------------------------------- overflow and underflow


LARGE = np.array([[1000.0, 1001.0, 999.0, 1000.5], [-5.0, 710.0, 712.0, 0.0]])
VERY_NEGATIVE = np.array([[-1000.0, -1001.0, -1002.5, -999.0], [-3000.0, -2999.0, -3001.0, -3000.0]])


@pytest.mark.parametrize("axis", [0, 1])
def test_large_logits_do_not_overflow(axis):
    _assert_close64(logsumexp(LARGE, axis=axis), _oracle.logsumexp(LARGE, axis))
    _assert_close64(softmax(LARGE, axis=axis), _oracle.softmax(LARGE, axis))
    _assert_close64(log_softmax(LARGE, axis=axis), _oracle.log_softmax(LARGE, axis))


@pytest.mark.parametrize("axis", [0, 1])
def test_very_negative_logits_do_not_underflow(axis):
    _assert_close64(logsumexp(VERY_NEGATIVE, axis=axis), _oracle.logsumexp(VERY_NEGATIVE, axis))
    _assert_close64(softmax(VERY_NEGATIVE, axis=axis), _oracle.softmax(VERY_NEGATIVE, axis))
    _assert_close64(log_softmax(VERY_NEGATIVE, axis=axis), _oracle.log_softmax(VERY_NEGATIVE, axis))


def test_float32_logits_do_not_overflow():
    # exp(89) already overflows float32.
    x = np.array([[90.0, 95.0, 100.0], [1.0, 2.0, 3.0]], dtype=np.float32)
    for fn, oracle_fn in [(logsumexp, _oracle.logsumexp), (softmax, _oracle.softmax),
                          (log_softmax, _oracle.log_softmax)]:
        out = fn(x, axis=-1)
        assert np.isfinite(out).all()
        np.testing.assert_allclose(out, oracle_fn(x, -1), rtol=RTOL32, atol=ATOL32)


def test_slices_of_very_different_scale_are_each_shifted_by_their_own_max():
    x = np.array([[0.0, 1.0, 2.0], [1000.0, 1001.0, 1002.0], [-1000.0, -999.0, -998.0]])
    for axis, xx in [(1, x), (0, x.T)]:
        _assert_close64(logsumexp(xx, axis=axis), _oracle.logsumexp(xx, axis))
        _assert_close64(softmax(xx, axis=axis), _oracle.softmax(xx, axis))
        _assert_close64(log_softmax(xx, axis=axis), _oracle.log_softmax(xx, axis))


@pytest.mark.parametrize("axis", [0, -1])
def test_log_softmax_stays_exact_far_below_the_underflow_floor(axis):
    # exp(-800) is 0 in float64, so log(softmax) would give -inf here.
    x = np.array([[0.0, -800.0, -1500.0, -2000.25], [3.0, 2.0, -760.0, -9000.0]])
    x = x if axis == -1 else x.T
    out = log_softmax(x, axis=axis)
    assert np.isfinite(out).all()
    _assert_close64(out, _oracle.log_softmax(x, axis))


# ---------------------------------------------------------------- -inf as an additive mask


def _masked(seed, axis):
    """Logits with a partial -inf mask plus one slice along `axis` that is entirely -inf."""
    x = _logits(seed)
    rng = np.random.default_rng(seed + 100)
    x[rng.random(SHAPE) < 0.3] = -np.inf
    moved = np.moveaxis(x, axis, -1)          # a view: writes land in x
    moved[0, 0, :] = 0.0                      # a slice with nothing masked
    moved[1, 2, :] = -np.inf                  # a fully masked slice
    moved[2, 1, :] = -np.inf
    moved[2, 1, 1] = 7.0                      # a slice with one survivor
    return x


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_partially_masked_entries_get_exactly_zero_probability(axis):
    x = _masked(20, axis)
    p = np.asarray(softmax(x, axis=axis))
    _assert_close64(p, _oracle.softmax(x, axis))
    assert (p[np.isneginf(x)] == 0.0).all()


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_partially_masked_entries_get_minus_inf_log_probability(axis):
    x = _masked(21, axis)
    lp = np.asarray(log_softmax(x, axis=axis))
    assert np.isneginf(lp[np.isneginf(x)]).all()
    _assert_close64(lp, _oracle.log_softmax(x, axis))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_fully_masked_slice_logsumexp_is_minus_inf(axis):
    x = _masked(22, axis)
    out = logsumexp(x, axis=axis)
    expected = _oracle.logsumexp(x, axis)
    assert np.isneginf(expected).sum() >= 1
    _assert_close64(out, expected)
    kept = logsumexp(x, axis=axis, keepdims=True)
    _assert_close64(kept, np.expand_dims(expected, axis))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_fully_masked_slice_softmax_is_all_zeros(axis):
    x = _masked(23, axis)
    p = np.asarray(softmax(x, axis=axis))
    _assert_close64(p, _oracle.softmax(x, axis))
    sums = np.sum(p, axis=axis)
    fully_masked = np.all(np.isneginf(x), axis=axis)
    assert (sums[fully_masked] == 0.0).all()
    # Every other slice still sums to one (within float64 rounding of <= 5 terms).
    np.testing.assert_allclose(sums[~fully_masked], 1.0, rtol=0, atol=1e-13)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_fully_masked_slice_log_softmax_is_all_minus_inf(axis):
    x = _masked(24, axis)
    lp = log_softmax(x, axis=axis)
    _assert_close64(lp, _oracle.log_softmax(x, axis))


def test_single_fully_masked_vector():
    x = np.full(4, -np.inf)
    assert logsumexp(x) == -np.inf
    assert np.array_equal(softmax(x), np.zeros(4))
    lp = np.asarray(log_softmax(x))
    assert lp.shape == x.shape and np.isneginf(lp).all()


# ---------------------------------------------------------------- dtypes and purity


def test_float32_input_gives_float32_output():
    x = _logits(30).astype(np.float32)
    for fn, oracle_fn in [(logsumexp, _oracle.logsumexp), (softmax, _oracle.softmax),
                          (log_softmax, _oracle.log_softmax)]:
        out = fn(x, axis=1)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, oracle_fn(x, 1), rtol=RTOL32, atol=ATOL32)
    assert logsumexp(x, axis=1, keepdims=True).dtype == np.float32


def test_integer_and_list_input_gives_float64():
    x = [[1, 2, 3], [10, 10, 10]]
    for fn, oracle_fn in [(logsumexp, _oracle.logsumexp), (softmax, _oracle.softmax),
                          (log_softmax, _oracle.log_softmax)]:
        out = fn(x)
        assert out.dtype == np.float64
        _assert_close64(out, oracle_fn(np.array(x, dtype=np.float64), -1))
    assert logsumexp(np.array(x, dtype=np.int32), axis=0).dtype == np.float64


FUNCTIONS = [(logsumexp, _oracle.logsumexp), (softmax, _oracle.softmax), (log_softmax, _oracle.log_softmax)]


@pytest.mark.parametrize("name", ["logsumexp", "softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_input_array_is_not_modified(name, dtype):
    x = _masked(31, 1).astype(dtype)
    x[0, 0, 0] = 50.0                         # so the slice max is not 0
    # whether a function modified the caller's array is a fact about the solution's process
    # (arguments reach it as copies): observe_call calls it there and hands the array back
    after = observe_call("softmax", name, x, axis=1).args[0]
    np.testing.assert_array_equal(after, x)
    assert after.dtype == x.dtype


def test_float16_input_gives_float16_output():
    # exp(11.1) already overflows float16 (largest finite value 65504).
    x = np.array([[20.0, 25.0, 30.0], [1.0, 2.0, 3.0], [-20.0, -30.0, -40.0]], dtype=np.float16)
    for fn, oracle_fn in FUNCTIONS:
        out = fn(x, axis=-1)
        assert out.dtype == np.float16, f"{fn.__name__}: float16 in, {out.dtype} out"
        assert np.isfinite(out).all()
        # float16 eps is 9.8e-4; a handful of roundings over 3 terms stay within 4e-3 relative
        # (an lse near 30 has ulp 0.016, i.e. 5e-4 relative). atol 1e-4 covers tiny probabilities.
        np.testing.assert_allclose(out.astype(np.float64), oracle_fn(x, -1), rtol=4e-3, atol=1e-4)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "bool"])
def test_small_integer_and_bool_input_is_computed_in_float64(dtype):
    # Shifting by the max before converting would wrap around in these dtypes
    # (int8: -100 - 100 -> 56; uint8: 0 - 200 -> 56).
    values = {"int8": [[100, -100, 5], [-128, 127, 0]], "uint8": [[0, 200, 3], [255, 0, 1]],
              "int16": [[30000, -30000, 7], [1, 2, 3]], "bool": [[True, False, True], [False, False, True]]}
    x = np.array(values[dtype], dtype=dtype)
    for fn, oracle_fn in FUNCTIONS:
        out = fn(x, axis=-1)
        assert out.dtype == np.float64, f"{fn.__name__}: {dtype} in, {out.dtype} out"
        _assert_close64(out, oracle_fn(x.astype(np.float64), -1))


def test_lists_and_tuples_of_floats_and_ints():
    x = ([1, 2.5, float("-inf")], (1000, 1001, 999.5))
    for fn, oracle_fn in FUNCTIONS:
        out = fn(x)
        assert out.dtype == np.float64
        _assert_close64(out, oracle_fn(np.array(x, dtype=np.float64), -1))


def test_results_are_numpy_arrays_or_scalars():
    for x in (np.array([1.0, 2.0, -np.inf]), np.array([1.0, 2.0], dtype=np.float32), [3, 4]):
        for fn, _ in FUNCTIONS:
            out = fn(x)
            assert isinstance(out, (np.ndarray, np.generic)), f"{fn.__name__} returned {type(out).__name__}"
            assert out.dtype == (np.float32 if getattr(x, "dtype", None) == np.float32 else np.float64)
    assert isinstance(logsumexp(np.ones((2, 3)), axis=0), np.ndarray)


@pytest.mark.parametrize("masked", [False, True])
def test_a_length_one_axis(masked):
    # softmax over one element is 1 (0 if it is -inf), log_softmax 0 (-inf), logsumexp the element.
    x = _logits(40, shape=(3, 1, 4))
    if masked:
        x[1, 0, 2] = -np.inf
    for axis in (1, -2):
        _assert_close64(logsumexp(x, axis=axis), x[:, 0, :])
        _assert_close64(logsumexp(x, axis=axis, keepdims=True), x)
        _assert_close64(softmax(x, axis=axis), np.where(np.isneginf(x), 0.0, 1.0))
        _assert_close64(log_softmax(x, axis=axis), np.where(np.isneginf(x), -np.inf, 0.0))
    _assert_close64(logsumexp(np.array([-7.5])), np.array(-7.5))


def test_numpy_integer_axis():
    x = _logits(41)
    axis = np.int64(1)  # "a single integer": a numpy integer counts
    _assert_close64(logsumexp(x, axis=axis), _oracle.logsumexp(x, 1))
    _assert_close64(softmax(x, axis=axis), _oracle.softmax(x, 1))
    _assert_close64(log_softmax(x, axis=axis), _oracle.log_softmax(x, 1))


def test_float32_log_softmax_stays_exact_below_its_underflow_floor():
    # exp(-104) is 0 in float32: log(softmax) would give -inf where the answer is -200.
    x = np.array([[0.0, -200.0, -150.5], [2.0, 1.0, -300.0]], dtype=np.float32)
    out = log_softmax(x)
    assert out.dtype == np.float32 and np.isfinite(out).all()
    np.testing.assert_allclose(out, _oracle.log_softmax(x, -1), rtol=RTOL32, atol=ATOL32)


# ---------------------------------------------------------------- a few ulps in every dtype

# "accurate to a few units in the last place of the input's dtype", for logits however large:
# each floating dtype at a large positive, a large negative and a unit offset. Errors are
# counted in ulps of the input's dtype: of the probability itself for softmax, and of
# max(|value|, 1) for the log-domain results (their error is absolute near zero: log(total)
# for total ~ 1 is off by ~eps whatever the size of the result). A stable evaluation stays
# within 8 ulps for softmax (a rounded exp of a shift up to ~10, a sum and a division) and 2
# for logsumexp/log_softmax over 20 seeds; 16 and 4 leave a factor of two. Exponentiating
# x - logsumexp(x) rounds that difference at the scale of the logits: ~500 ulps of each
# probability at 1000 in float64, ~60 at 100 in float32.
ULP_CASES = [("float64", 1000.0), ("float64", -3000.0), ("float64", 0.0),
             ("float32", 100.0), ("float32", -300.0), ("float32", 0.0),
             ("float16", 10.0), ("float16", -20.0), ("float16", 0.0)]
ULP_LIMIT = {"softmax": 16.0, "logsumexp": 4.0, "log_softmax": 4.0}


def _ulp_error(name, actual, expected, dtype):
    actual = np.asarray(actual).astype(np.float64)
    finite = np.isfinite(expected)
    magnitude = np.abs(expected) if name == "softmax" else np.maximum(np.abs(expected), 1.0)
    unit = np.spacing(magnitude.astype(dtype)).astype(np.float64)
    return float(np.max(np.abs(actual[finite] - expected[finite]) / unit[finite]))


@pytest.mark.parametrize("dtype,offset", ULP_CASES, ids=[f"{d}-{o:g}" for d, o in ULP_CASES])
def test_every_function_is_accurate_to_a_few_ulps_in_every_dtype(dtype, offset):
    x = (offset + np.random.default_rng(60).normal(0.0, 2.0, size=(6, 7))).astype(dtype)
    for fn, oracle_fn in FUNCTIONS:
        name = oracle_fn.__name__  # the judge's own function, named as the solution's
        out = np.asarray(fn(x, axis=-1))
        assert out.dtype == np.dtype(dtype)
        expected = oracle_fn(x, -1)
        assert not np.isnan(out).any() and np.array_equal(np.isfinite(out), np.isfinite(expected))
        err = _ulp_error(name, out, expected, dtype)
        assert err <= ULP_LIMIT[name], f"{name}: {err:.1f} ulps of {dtype} at logits near {offset:g}"
