import numpy as np
import pytest

from quant import choose_qparams, dequantize, fake_quantize, quant_range, quantize

import _scalar

# The scale may be computed with a different but equivalent order of float64 operations
# (e.g. dividing by a float instead of an int); that moves it by a few ulps at most, so
# scales are compared with rtol 1e-12, far below any formula mistake (>= 1e-3 relative).
SCALE_RTOL = 1e-12

MODES = [  # (symmetric, signed)
    (True, True), (True, False), (False, True), (False, False),
]


def _data(seed, shape, low=-3.0, high=5.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


# ---------------------------------------------------------------- ranges and parameters

@pytest.mark.parametrize("num_bits,signed,expected", [
    (2, True, (-2, 1)), (8, True, (-128, 127)), (8, False, (0, 255)), (16, False, (0, 65535)),
])
def test_quant_range(num_bits, signed, expected):
    assert tuple(int(v) for v in quant_range(num_bits, signed)) == expected


@pytest.mark.parametrize("num_bits", [1, 17])
def test_bits_outside_2_to_16_raise(num_bits):
    with pytest.raises(ValueError):
        choose_qparams(np.ones(3), num_bits=num_bits, symmetric=True, signed=True)


@pytest.mark.parametrize("symmetric,signed", MODES)
@pytest.mark.parametrize("num_bits", [2, 5, 8, 16])
def test_per_tensor_params_match_scalar_model(symmetric, signed, num_bits):
    x = _data(num_bits, (6, 7))
    scale, zero_point = choose_qparams(x, num_bits=num_bits, symmetric=symmetric, signed=signed)
    exp_scale, exp_zp = _scalar.params([float(v) for v in x.ravel()], num_bits, symmetric, signed)
    assert np.shape(scale) == () and np.shape(zero_point) == ()
    assert np.issubdtype(np.asarray(zero_point).dtype, np.integer)
    np.testing.assert_allclose(float(scale), exp_scale, rtol=SCALE_RTOL)
    assert int(zero_point) == exp_zp


def test_symmetric_signed_scale_uses_the_restricted_range():
    x = np.array([-2.54, 0.3, 1.0])
    scale, zero_point = choose_qparams(x, num_bits=8, symmetric=True, signed=True)
    np.testing.assert_allclose(float(scale), 2.54 / 127, rtol=SCALE_RTOL)
    assert int(zero_point) == 0


def test_symmetric_unsigned_zero_point_is_mid_range():
    x = np.array([-1.5, 0.25, 0.75])
    scale, zero_point = choose_qparams(x, num_bits=4, symmetric=True, signed=False)
    np.testing.assert_allclose(float(scale), 1.5 / 7, rtol=SCALE_RTOL)
    assert int(zero_point) == 8
    q = quantize(x, scale, zero_point, num_bits=4, signed=False)
    assert q.tolist() == [1, 9, 12]


@pytest.mark.parametrize("signed", [True, False])
def test_range_is_widened_to_include_zero(signed):
    qmin, qmax = _scalar.qrange(8, signed)
    positive = np.array([0.5, 1.0, 3.0, 2.0])
    scale, zero_point = choose_qparams(positive, num_bits=8, symmetric=False, signed=signed)
    np.testing.assert_allclose(float(scale), 3.0 / 255, rtol=SCALE_RTOL)
    assert int(zero_point) == qmin
    negative = -positive
    scale, zero_point = choose_qparams(negative, num_bits=8, symmetric=False, signed=signed)
    np.testing.assert_allclose(float(scale), 3.0 / 255, rtol=SCALE_RTOL)
    assert int(zero_point) == qmax


@pytest.mark.parametrize("signed,expected", [(False, 111), (True, -17)])
def test_affine_zero_point_is_rounded_not_truncated(signed, expected):
    # lo / scale = -0.77 / (1.77 / 255) = -110.93..., which rounds to -111 (truncation: -110)
    x = np.array([-0.77, 1.0])
    _, zero_point = choose_qparams(x, num_bits=8, symmetric=False, signed=signed)
    assert int(zero_point) == expected


@pytest.mark.parametrize("symmetric,signed", MODES)
def test_all_zero_tensor_gets_scale_one(symmetric, signed):
    x = np.zeros((3, 4))
    scale, zero_point = choose_qparams(x, num_bits=8, symmetric=symmetric, signed=signed)
    assert float(scale) == 1.0
    assert int(zero_point) == _scalar.params([0.0], 8, symmetric, signed)[1]
    out = fake_quantize(x, num_bits=8, symmetric=symmetric, signed=signed)
    assert np.array_equal(out, x)


# ---------------------------------------------------------------- quantize / dequantize

def test_quantize_rounds_half_to_even():
    x = np.array([-1.25, -0.75, -0.25, 0.25, 0.75, 1.25])  # x / 0.5 = -2.5 ... 2.5, exact
    q = quantize(x, 0.5, 0, num_bits=8, signed=True)
    assert q.tolist() == [-2, -2, 0, 0, 2, 2]


def test_quantize_rounds_before_adding_the_zero_point():
    # odd zero point: rounding x / scale + zp would move every tie to the other neighbour
    x = np.array([0.25, 0.75, 1.25, -0.25])  # x / 0.5 = 0.5, 1.5, 2.5, -0.5 exactly
    q = quantize(x, 0.5, 3, num_bits=8, signed=False)
    assert q.tolist() == [3, 5, 5, 3]


def test_quantize_clamps_to_the_integer_range():
    x = np.array([-5.0, -0.8, 0.3, 0.7, 5.0])
    q = quantize(x, 0.1, 0, num_bits=4, signed=True)
    assert q.tolist() == [-8, -8, 3, 7, 7]
    q = quantize(x, 0.1, 2, num_bits=3, signed=False)
    assert q.tolist() == [0, 0, 5, 7, 7]


def test_quantize_returns_integers_and_dequantize_float64():
    x = np.linspace(-1, 1, 9, dtype=np.float32)
    q = quantize(x, 0.25, 1, num_bits=4, signed=True)
    assert np.issubdtype(q.dtype, np.integer)
    out = dequantize(q, 0.25, 1)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, (q.astype(np.float64) - 1) * 0.25)


@pytest.mark.parametrize("symmetric,signed", MODES)
def test_zero_is_exact(symmetric, signed):
    x = _data(3, (5, 8), low=0.2, high=4.0)
    x[:, ::3] = 0.0
    for axis in (None, 0):
        out = fake_quantize(x, num_bits=6, symmetric=symmetric, signed=signed, axis=axis)
        assert np.all(out[:, ::3] == 0.0)


# ---------------------------------------------------------------- per channel

@pytest.mark.parametrize("shape,axis", [((4, 6), 0), ((4, 6), 1), ((3, 5, 2), 1), ((3, 5, 2), -1)])
@pytest.mark.parametrize("symmetric,signed", MODES)
def test_per_channel_params_match_each_slice(shape, axis, symmetric, signed):
    x = _data(7, shape)
    x *= np.arange(1, shape[axis] + 1).reshape([-1 if a == axis % len(shape) else 1
                                                for a in range(len(shape))])
    scale, zero_point = choose_qparams(x, num_bits=8, symmetric=symmetric, signed=signed, axis=axis)
    assert np.shape(scale) == (shape[axis],) and np.shape(zero_point) == (shape[axis],)
    for c, indices in enumerate(_scalar.channel_slices(x, axis)):
        exp_scale, exp_zp = _scalar.params([float(x[i]) for i in indices], 8, symmetric, signed)
        np.testing.assert_allclose(float(scale[c]), exp_scale, rtol=SCALE_RTOL)
        assert int(zero_point[c]) == exp_zp


@pytest.mark.parametrize("axis", [0, 1])
def test_per_channel_square_tensor_broadcasts_along_the_channel_axis(axis):
    # square, so parameters applied along the wrong axis still broadcast without error
    x = _data(8, (5, 5)) * np.array([0.01, 0.1, 1.0, 10.0, 100.0]).reshape((-1, 1) if axis == 0 else (1, -1))
    expected, _ = _scalar.fake_quantize(x, 4, False, True, axis)
    out = fake_quantize(x, num_bits=4, symmetric=False, signed=True, axis=axis)
    # the scalar model does the stated float64 operations one element at a time; an
    # equivalent reordering (q * scale - zp * scale) moves a result by a few ulps, while
    # any real mistake moves it by a whole step (>= 1e-4 relative here)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_per_channel_all_zero_channel_gets_scale_one():
    x = _data(9, (3, 4))
    x[1] = 0.0
    for symmetric, signed in MODES:
        scale, zero_point = choose_qparams(x, num_bits=8, symmetric=symmetric, signed=signed, axis=0)
        assert float(scale[1]) == 1.0
        assert np.all(np.asarray(scale) > 0)
        out = fake_quantize(x, num_bits=8, symmetric=symmetric, signed=signed, axis=0)
        assert not np.isnan(out).any()
        assert np.all(out[1] == 0.0)


# ---------------------------------------------------------------- the error bound

@pytest.mark.parametrize("num_bits", [2, 3, 8, 16])
@pytest.mark.parametrize("symmetric,signed", MODES)
@pytest.mark.parametrize("axis", [None, 1])
def test_round_trip_error_at_most_half_a_step(num_bits, symmetric, signed, axis):
    x = _data(100 + num_bits, (4, 6, 3), low=-2.0, high=7.0)
    out = fake_quantize(x, num_bits=num_bits, symmetric=symmetric, signed=signed, axis=axis)
    scale, _ = choose_qparams(x, num_bits=num_bits, symmetric=symmetric, signed=signed, axis=axis)
    step = np.asarray(scale) if axis is None else np.asarray(scale).reshape(1, -1, 1)
    # x / scale and (q - zp) * scale each round once in float64: the error can exceed
    # scale / 2 by at most ~|q| * 2^-53 steps, below 1e-11 steps even at 16 bits; 1e-9 covers it.
    assert np.all(np.abs(out - x) <= step * (0.5 + 1e-9))


@pytest.mark.parametrize("num_bits", [2, 4, 8])
@pytest.mark.parametrize("symmetric,signed", MODES)
def test_fake_quantize_matches_scalar_model(num_bits, symmetric, signed):
    x = _data(200 + num_bits, (3, 4, 5))
    for axis in (None, 2):
        expected, _ = _scalar.fake_quantize(x, num_bits, symmetric, signed, axis)
        out = fake_quantize(x, num_bits=num_bits, symmetric=symmetric, signed=signed, axis=axis)
        assert out.dtype == np.float64
        # stated float64 operations per element, as above: ulps for a reordering, a whole
        # step (>= 1e-3 relative at these bit widths) for a mistake
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
