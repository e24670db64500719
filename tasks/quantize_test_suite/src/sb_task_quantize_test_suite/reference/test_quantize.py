import numpy as np
import pytest

from quantize import dequantize, quantize

# The random cases: every axis of a 3-D array is tried, positive and negative, so a channel
# axis in the middle is covered; every bit width kind (narrow, 8, just over 8, 16).
SHAPES = [(6,), (3, 5), (2, 3, 4)]
BITS = [2, 5, 8, 9, 16]


def model(x, axis, symmetric, bits):
    """The contract in float64, vectorised: (q, scale, zero_point)."""
    x64 = x.astype(np.float64)
    keep = tuple(d for d in range(x.ndim) if axis is None or d != axis % x.ndim)
    if symmetric:
        qmin, qmax = -(2 ** (bits - 1) - 1), 2 ** (bits - 1) - 1
        a = np.abs(x64).max(axis=keep, keepdims=True)
        scale = np.where(a > 0, a / qmax, 1.0)
        zp = np.zeros_like(scale)
    else:
        qmin, qmax = 0, 2**bits - 1
        lo = np.minimum(x64.min(axis=keep, keepdims=True), 0.0)
        hi = np.maximum(x64.max(axis=keep, keepdims=True), 0.0)
        scale = np.where(hi > lo, (hi - lo) / qmax, 1.0)
        zp = np.clip(np.rint(-lo / scale), 0, qmax)
    q = np.clip(np.rint(x64 / scale) + zp, qmin, qmax)
    dtype = {(True, True): np.int8, (True, False): np.int16, (False, True): np.uint8, (False, False): np.uint16}
    shape = () if axis is None else (x.shape[axis],)
    return (q.astype(dtype[symmetric, bits <= 8]), scale.reshape(shape), zp.reshape(shape).astype(np.int32))


def check_quantize(x, axis=None, symmetric=True, bits=8):
    """quantize(x) is exactly the model's (q, scale, zero_point): values, dtypes and shapes."""
    want = model(x, axis, symmetric, bits)
    got = quantize(x, axis=axis, symmetric=symmetric, bits=bits)
    assert len(got) == 3
    for g, w in zip(got, want):
        assert isinstance(g, np.ndarray) and g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w)
    return want


def random_case(rng, shape, dtype, axis):
    """Random channels, the first all positive and the last all negative."""
    x = rng.standard_normal(shape)
    if axis is not None:
        x = np.moveaxis(x, axis, 0)
        x[0] = np.abs(x[0])
        x[-1] = -np.abs(x[-1])
        x = np.moveaxis(x, 0, axis)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("symmetric", [True, False])
def test_matches_the_model_and_round_trips(dtype, symmetric):
    rng = np.random.default_rng(7)
    i = 0
    for shape in SHAPES:
        for axis in [None] + list(range(-len(shape), len(shape))):
            bits = BITS[i % len(BITS)]
            i += 1
            x = random_case(rng, shape, dtype, axis)
            q, scale, zp = check_quantize(x, axis, symmetric, bits)
            back = dequantize(q, scale, zp, axis=axis)
            b = (1,) * x.ndim if axis is None else [-1 if d == axis % x.ndim else 1 for d in range(x.ndim)]
            want = (q.astype(np.int64) - zp.reshape(b)) * scale.reshape(b)
            assert back.dtype == np.float64 and np.array_equal(back, want)
            # the promise: at most half a step from x, up to float64 rounding
            assert np.all(np.abs(back - x.astype(np.float64)) <= (0.5 + 1e-9) * scale.reshape(b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ties_round_half_to_even(dtype):
    # max |x| = 127 gives scale exactly 1, so x / scale is x: every tie from -126.5 to 126.5
    x = np.append(np.arange(-127, 127) + 0.5, 127.0).astype(dtype)
    q = check_quantize(x)[0]
    assert q[127] == 0 and q[128] == 2 and q[125] == -2  # 0.5 -> 0, 1.5 -> 2, -1.5 -> -2


@pytest.mark.parametrize("lo", [-100.0, -101.0, -2.5])
@pytest.mark.parametrize("axis", [None, 1])
def test_affine_ties_are_rounded_before_the_zero_point(lo, axis):
    # hi - lo = 255 gives scale exactly 1 at 8 bits; zero points 100, 101 (odd) and the tie 2.5
    row = np.append([lo, lo + 255], np.arange(lo + 0.5, lo + 255, 1.0))
    x = row if axis is None else np.stack([row, row[::-1]], axis=1)
    q, scale, zp = check_quantize(x, axis, False, 8)
    assert np.all(scale == 1.0) and np.all(zp == (2 if lo == -2.5 else -lo))


@pytest.mark.parametrize("bits", [8, 12, 16])
def test_float32_quotient_is_taken_in_float64(bits):
    # float32 values next to k + 1/2 steps: rounded in float32 the quotient would land on the tie
    qmax = 2 ** (bits - 1) - 1
    k = np.arange(1, qmax, max(1, qmax // 200))
    x = np.append(np.float32((k + 0.5) / qmax), np.float32(1.0))
    check_quantize(x, None, True, bits)


@pytest.mark.parametrize("symmetric", [True, False])
def test_all_zero_channel_and_tensor(symmetric):
    x = np.random.default_rng(3).standard_normal((4, 3))
    x[:, 1] = 0.0
    q, scale, zp = check_quantize(x, -1, symmetric, 8)
    assert scale[1] == 1.0 and zp[1] == 0 and np.all(q[:, 1] == 0)
    q, scale, zp = check_quantize(np.zeros((2, 2), np.float32), None, symmetric, 4)
    assert scale == 1.0 and zp == 0


def test_bit_widths():
    x = np.linspace(-1.0, 3.0, 9)
    for bits in (2, 16):
        for symmetric in (True, False):
            check_quantize(x, None, symmetric, bits)
    for bits in (1, 17, 0):
        for symmetric in (True, False):
            with pytest.raises(ValueError):
                quantize(x, symmetric=symmetric, bits=bits)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_raise(bad):
    for dtype in (np.float32, np.float64):
        x = np.ones((2, 3), dtype)
        x[1, 1] = bad
        for symmetric in (True, False):
            with pytest.raises(ValueError):
                quantize(x, symmetric=symmetric)


def test_axis_out_of_range_raises():
    x = np.ones((2, 3))
    for axis in (2, -3, 5):
        with pytest.raises(ValueError):
            quantize(x, axis=axis)
