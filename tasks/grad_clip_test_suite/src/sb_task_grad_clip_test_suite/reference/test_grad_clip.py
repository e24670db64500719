import math

import numpy as np
import pytest

from grad_clip import clip_grad_norm

F32, F64 = np.float32, np.float64
INF = math.inf
# The promised accuracy: total_norm within 1e-12 relative (exact for norm_type inf); each scaled
# entry within REL * |exact| + the dtype's smallest subnormal.
NORM_REL = 1e-12
REL = {np.dtype(F32): 1.5e-7, np.dtype(F64): 2e-12}
TINY = {np.dtype(F32): 2.0 ** -149, np.dtype(F64): 2.0 ** -1074}
NORM_TYPES = [1, 2.0, 3.0, 1.5, 8.0, INF]
# Lists of (dtype, shape): several arrays, mixed dtypes, a 0-d array, zero-size arrays.
LAYOUTS = {
    "one_f64": [(F64, (9,))],
    "one_f32": [(F32, (3, 5))],
    "f32s": [(F32, (6,)), (F32, ()), (F32, (2, 4))],
    "mixed": [(F64, (5,)), (F32, (3, 3)), (F64, ())],
    "with_empty": [(F32, (0,)), (F64, (7,)), (F32, (2, 0, 3)), (F32, (4,))],
    "many_f32": [(F32, (600,)), (F32, (30, 40))],
}


def make(layout, seed, size=1.0):
    rng = np.random.default_rng(seed)
    return [np.asarray(rng.standard_normal(shape) * size).astype(dtype) for dtype, shape in layout]


def exact_norm(grads, norm_type):
    values = [float(x) for g in grads for x in np.asarray(g, dtype=F64).ravel()]
    if any(math.isnan(x) for x in values):
        return math.nan
    if any(math.isinf(x) for x in values):
        return INF
    if not values:
        return 0.0
    if norm_type == INF:
        return max(abs(x) for x in values)
    return math.fsum(abs(x) ** norm_type for x in values) ** (1.0 / norm_type)


def check(grads, max_norm, **kwargs):
    """One call against the float64 model of the contract."""
    given = [g.copy() for g in grads]
    clipped, total = clip_grad_norm(grads, max_norm, **kwargs)
    norm_type, eps = kwargs.get("norm_type", 2.0), kwargs.get("eps", 1e-6)
    exact = exact_norm(given, norm_type)
    assert type(total) is float
    if math.isnan(exact):
        assert math.isnan(total)
    elif norm_type == INF or math.isinf(exact):
        assert total == exact
    else:
        assert abs(total - exact) <= NORM_REL * exact
    assert type(clipped) is list and len(clipped) == len(given)
    scale = max_norm / (exact + eps) if math.isfinite(exact) and exact + eps > 0 else INF
    for got, g in zip(clipped, given):
        assert isinstance(got, np.ndarray) and got.dtype == g.dtype and got.shape == g.shape
        if scale >= 1:
            np.testing.assert_array_equal(got, g)
        else:
            want = g.astype(F64) * max_norm / (exact + eps)
            err = np.abs(got.astype(F64) - want)
            assert np.all(err <= REL[g.dtype] * np.abs(want) + TINY[g.dtype])
    return clipped, total


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("norm_type", NORM_TYPES)
def test_scaled_and_unchanged_against_the_model(layout, norm_type):
    grads = make(LAYOUTS[layout], seed=len(layout) * 10 + NORM_TYPES.index(norm_type))
    check(grads, 0.4 * exact_norm(grads, norm_type), norm_type=norm_type)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_below_max_norm_comes_back_unchanged(layout):
    grads = make(LAYOUTS[layout], seed=len(layout))
    for norm_type in (2.0, 3.0):
        check(grads, 1.0 + exact_norm(grads, norm_type), norm_type=norm_type)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_max_norm_at_the_norm_scales_through_eps(dtype):
    for seed in range(2):
        grads = make([(dtype, (4,)), (dtype, (2, 3))], seed, size=0.2)
        norm = exact_norm(grads, 2.0)
        check(grads, norm)
        check(grads, norm + 0.5e-6)
        check(grads, norm, eps=0.25)
        check(grads, norm, eps=0.25, norm_type=1)


@pytest.mark.parametrize("eps", [1e-6, 0.0])
def test_small_norms_where_eps_weighs(eps):
    grads = make([(F32, (5,)), (F64, (3,))], seed=7, size=1e-4)
    for max_norm in (1e-5, 1e-3):
        for norm_type in (2.0, INF):
            check(grads, max_norm, eps=eps, norm_type=norm_type)


@pytest.mark.parametrize("norm_type", [1, 2.0, INF])
@pytest.mark.parametrize("eps", [1e-6, 0.0])
def test_empty_zero_size_and_zero(norm_type, eps):
    cases = [[], [np.zeros((3, 0), F64), np.zeros(0, F32)], [np.zeros(3, F32), np.zeros((), F64)]]
    for grads in cases:
        clipped, total = check(grads, 1.0, norm_type=norm_type, eps=eps)
        assert total == 0.0
    grads = [np.zeros(0, F32), np.array([3.0, -4.0], F32), np.zeros((2, 0), F64)]
    check(grads, 1.0, norm_type=norm_type, eps=eps)


def test_inf_norm_takes_the_largest_magnitude():
    grads = [np.array([1.0, -6.0, 2.0]), np.array([[5.0, -0.5]], F32)]
    clipped, total = check(grads, 1.0, norm_type=INF)
    assert total == 6.0


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.0, INF])
def test_float32_entries_beyond_float32_squares(norm_type):
    grads = [np.full((3, 2), 1e30, F32), np.array([-2e29, 5e29], F32)]
    clipped, total = check(grads, 1.0, norm_type=norm_type)
    assert math.isfinite(total)


def test_tiny_results_round_to_subnormals():
    check([np.array([1e-30, -3e-30, 2e-30], F32)], 1e-40)
    check([np.array([1e-30, -3e-30, 2e-30], F32), np.array([4e-30])], 1e-300)


@pytest.mark.parametrize("norm_type", [2.0, INF])
@pytest.mark.parametrize("where", [0, 2])
@pytest.mark.parametrize("bad", [math.nan, -INF])
def test_non_finite_entries(norm_type, where, bad):
    grads = [np.array([5.0, -7.0], F32), np.array([1.0, 2.0, 3.0]), np.array([[0.5], [-9.0]], F32)]
    grads[where][1] = bad
    clipped, total = check(grads, 1.0, norm_type=norm_type)
    assert math.isnan(total) if math.isnan(bad) else total == INF
    with pytest.raises(ValueError):
        clip_grad_norm(grads, 1.0, norm_type=norm_type, error_if_nonfinite=True)


def test_error_flag_leaves_finite_norms_alone():
    grads = make(LAYOUTS["mixed"], seed=3)
    check(grads, 0.5, error_if_nonfinite=True)
    check(grads, 50.0, error_if_nonfinite=True, norm_type=INF)


@pytest.mark.parametrize("max_norm", [0.0, -1.0, -INF, math.nan])
def test_max_norm_must_be_positive(max_norm):
    with pytest.raises(ValueError):
        clip_grad_norm(make(LAYOUTS["mixed"], seed=4), max_norm)


@pytest.mark.parametrize("norm_type", [0.5, 0.999, 0, -2.0, math.nan])
def test_norm_type_below_one(norm_type):
    with pytest.raises(ValueError):
        clip_grad_norm(make(LAYOUTS["mixed"], seed=5), 1.0, norm_type=norm_type)


def test_infinite_max_norm_never_clips():
    grads = make(LAYOUTS["mixed"], seed=6, size=1e20)
    check(grads, INF)
