import math

import numpy as np
import pytest

from layernorm import layer_norm, rms_norm

FUNCTIONS = {"layer_norm": layer_norm, "rms_norm": rms_norm}
DTYPES = [np.float32, np.float64]
TOP = {np.float32: 1e4, np.float64: 1e8}  # the largest magnitude the contract allows


def exact(name, x, weight=None, bias=None, eps=None):
    """The formulas in float64 with correctly rounded sums, and the contract's scale
    S = |w| * max|x| / D + |b| of every entry."""
    rows = x.astype(np.float64).reshape(-1, x.shape[-1])
    if eps is None:
        eps = 1e-5 if name == "layer_norm" else 1e-6
    out, k = np.empty_like(rows), np.empty_like(rows)
    for i, row in enumerate(rows):
        centred = row
        if name == "layer_norm":
            mean = math.fsum(row) / len(row)
            centred = row - (mean + math.fsum(row - mean) / len(row))  # a second pass refines the mean
        root = math.sqrt(math.fsum(centred * centred) / len(row) + eps)
        out[i], k[i] = centred / root, np.abs(row).max() / root
    w = 1.0 if weight is None else weight.astype(np.float64)
    b = 0.0 if bias is None else bias.astype(np.float64)
    return (out * w + b).reshape(x.shape), (np.abs(w) * k + np.abs(b)).reshape(x.shape)


def check(name, x, **kwargs):
    """One call against the contract: the arguments unchanged, a new array of x's shape and
    dtype, every entry within 1e-12 * S, plus 2**-24 * |y| for float32, of the exact value y."""
    before = {key: a.copy() for key, a in dict(kwargs, x=x).items() if isinstance(a, np.ndarray)}
    got = FUNCTIONS[name](x, **kwargs)
    for key, a in before.items():
        assert np.array_equal(a, dict(kwargs, x=x)[key]), f"{key} was modified"
    assert isinstance(got, np.ndarray) and got.dtype == x.dtype and got.shape == x.shape
    want, scale = exact(name, x, **kwargs)
    bound = 1e-12 * scale + (2.0**-24 * np.abs(want) if x.dtype == np.float32 else 0)
    assert np.all(np.abs(got - want) <= bound)


def draw(rng, dtype, shape, offset=0.0, spread=1.0):
    """Normal draws inside the contract (no entry nonzero and below 1e-6 in magnitude)."""
    x = offset + spread * rng.standard_normal(shape)
    return np.where(np.abs(x) < 1e-6, 0, x).astype(dtype)


def options(rng, name, dtype, n, weight=True, bias=True):
    kwargs = {"weight": draw(rng, dtype, n, 1.0)} if weight else {}
    if bias and name == "layer_norm":
        kwargs["bias"] = draw(rng, dtype, n, 0.0, 3.0)
    return kwargs


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(9,), (4, 1), (2, 3, 7)])
@pytest.mark.parametrize("weight", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_matches_the_formula(name, dtype, shape, weight, bias):
    rng = np.random.default_rng(len(shape))
    check(name, draw(rng, dtype, shape, 0.5, 2.0), **options(rng, name, dtype, shape[-1], weight, bias))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_far_from_zero_each_at_its_own_offset(name, dtype):
    rng = np.random.default_rng(7)
    offsets = TOP[dtype] * np.array([[0.0], [0.9], [-1e-3], [0.1]])
    check(name, draw(rng, dtype, (4, 16), offsets, 1e-2), **options(rng, name, dtype, 16))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weight", [False, True])
def test_constant_and_nearly_constant_rows(name, dtype, weight):
    rng = np.random.default_rng(11)
    rows = np.array([[2.0], [0.1], [0.0], [-TOP[dtype]]], dtype=dtype).repeat(6, axis=1)
    check(name, rows, **options(rng, name, dtype, 6, weight))
    rows[:, 0] += np.asarray(1e-3, dtype=dtype)
    check(name, rows, **options(rng, name, dtype, 6, weight))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("eps", [1e-12, 1.0])
def test_explicit_eps(name, dtype, eps):
    rng = np.random.default_rng(13)
    check(name, draw(rng, dtype, (3, 8), 0.0, 1e-4), eps=eps, **options(rng, name, dtype, 8))
