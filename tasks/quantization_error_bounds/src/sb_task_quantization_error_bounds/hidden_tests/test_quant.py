import numpy as np
import pytest

from sb.judge import observe_call
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
        out = np.asarray(fake_quantize(x, num_bits=6, symmetric=symmetric, signed=signed, axis=axis))
        assert out.shape == x.shape and np.all(out[:, ::3] == 0.0)


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
        scale = np.asarray(scale)
        assert scale.shape == (3,) and np.all(scale > 0)
        out = np.asarray(fake_quantize(x, num_bits=8, symmetric=symmetric, signed=signed, axis=0))
        assert out.shape == x.shape and not np.isnan(out).any()
        assert np.all(out[1] == 0.0)


# ---------------------------------------------------------------- the error bound

@pytest.mark.parametrize("num_bits", [2, 3, 8, 16])
@pytest.mark.parametrize("symmetric,signed", MODES)
@pytest.mark.parametrize("axis", [None, 1])
def test_round_trip_error_at_most_half_a_step(num_bits, symmetric, signed, axis):
    x = _data(100 + num_bits, (4, 6, 3), low=-2.0, high=7.0)
    out = np.asarray(fake_quantize(x, num_bits=num_bits, symmetric=symmetric, signed=signed, axis=axis))
    assert out.shape == x.shape
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


# ---------------------------------------------------------------- stated types

@pytest.mark.parametrize("num_bits,signed", [(2, True), (8, False), (16, True), (16, False)])
def test_quant_range_returns_python_ints(num_bits, signed):
    got = quant_range(num_bits, signed)
    assert len(got) == 2
    assert [type(v) for v in got] == [int, int]
    assert tuple(got) == _scalar.qrange(num_bits, signed)


@pytest.mark.parametrize("symmetric,signed", MODES)
def test_per_tensor_params_are_0d_float64_and_int64_arrays(symmetric, signed):
    x = _data(31, (4, 5))
    scale, zero_point = choose_qparams(x, num_bits=8, symmetric=symmetric, signed=signed)
    assert isinstance(scale, np.ndarray) and scale.shape == () and scale.dtype == np.float64
    assert isinstance(zero_point, np.ndarray) and zero_point.shape == () and zero_point.dtype == np.int64


@pytest.mark.parametrize("symmetric,signed", MODES)
def test_per_channel_params_are_1d_float64_and_int64_arrays(symmetric, signed):
    x = _data(32, (4, 5))
    scale, zero_point = choose_qparams(x, num_bits=8, symmetric=symmetric, signed=signed, axis=1)
    assert isinstance(scale, np.ndarray) and scale.shape == (5,) and scale.dtype == np.float64
    assert isinstance(zero_point, np.ndarray) and zero_point.shape == (5,) and zero_point.dtype == np.int64


@pytest.mark.parametrize("axis", [None, 0])
def test_quantize_returns_int64_of_the_input_shape(axis):
    x = _data(33, (3, 4, 2))
    scale, zero_point = choose_qparams(x, num_bits=16, symmetric=False, signed=False, axis=axis)
    q = quantize(x, scale, zero_point, num_bits=16, signed=False, axis=axis)
    assert isinstance(q, np.ndarray) and q.dtype == np.int64 and q.shape == x.shape
    assert q.max() > 60000  # 16-bit unsigned levels: a narrower integer type would wrap


# ---------------------------------------------------------------- num_bits validation

BAD_BITS = [1, 17, 0, -8, 8.0, 8.5, None, "8"]


@pytest.mark.parametrize("num_bits", BAD_BITS, ids=repr)
def test_bad_num_bits_raise_in_every_function(num_bits):
    x = np.array([0.5, -1.0, 2.0])
    calls = {
        "quant_range": lambda: quant_range(num_bits, True),
        "choose_qparams": lambda: choose_qparams(x, num_bits=num_bits, symmetric=False, signed=True),
        "quantize": lambda: quantize(x, 0.1, 0, num_bits=num_bits, signed=True),
        "fake_quantize": lambda: fake_quantize(x, num_bits=num_bits, symmetric=True, signed=False),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError):
            call()
            pytest.fail(f"{name} accepted num_bits={num_bits!r}")


@pytest.mark.parametrize("num_bits", [2, 16])
def test_bits_at_both_ends_of_the_range_are_accepted(num_bits):
    x = _data(34, (7,))
    out = fake_quantize(x, num_bits=num_bits, symmetric=False, signed=True)
    expected, _ = _scalar.fake_quantize(x, num_bits, False, True, None)
    # same float64 operations per element, as in test_fake_quantize_matches_scalar_model
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- float64 throughout

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8, np.int16, "list"], ids=str)
@pytest.mark.parametrize("symmetric,signed", MODES)
def test_input_of_any_numeric_type_is_converted_to_float64(dtype, symmetric, signed):
    # int8 holds -128, whose absolute value does not exist in int8; float16 halves round
    # differently from float64 ones. The oracle converts to float64 first, as stated.
    raw = np.array([[-128, 5, 100, -3], [7, -9, 0, 127]])
    if dtype in (np.float16, np.float32):
        raw = raw / 7.0
    x = raw.tolist() if dtype == "list" else raw.astype(dtype)
    x64 = np.asarray(x, dtype=np.float64)
    for axis in (None, 1):
        out = fake_quantize(x, num_bits=6, symmetric=symmetric, signed=signed, axis=axis)
        expected, _ = _scalar.fake_quantize(x64, 6, symmetric, signed, axis)
        assert out.dtype == np.float64
        # stated float64 operations per element, as in test_fake_quantize_matches_scalar_model
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
        scale, zero_point = choose_qparams(x, num_bits=6, symmetric=symmetric, signed=signed, axis=axis)
        assert np.asarray(scale).dtype == np.float64
        for c, indices in enumerate(_scalar.channel_slices(x64, axis)):
            exp_scale, exp_zp = _scalar.params([float(x64[i]) for i in indices], 6, symmetric, signed)
            np.testing.assert_allclose(float(np.ravel(scale)[c]), exp_scale, rtol=SCALE_RTOL)
            assert int(np.ravel(zero_point)[c]) == exp_zp


def test_quantize_of_float16_input_divides_in_float64():
    # these float16 values divided by 0.1 round to the other integer when the quotient is
    # itself a float16 (a float16 array divided by a Python float stays float16)
    x = np.array([-2.94921875, -1.94921875, -1.1494140625, 1.1494140625, 1.94921875], dtype=np.float16)
    q = quantize(x, 0.1, 0, num_bits=8, signed=True)
    expected = [round(float(v) / 0.1) for v in x]
    assert expected != np.rint(x / 0.1).astype(int).tolist()  # the values do separate the two
    assert q.tolist() == expected


# ---------------------------------------------------------------- the stated arithmetic

def test_quantize_divides_by_the_scale():
    # each x / 0.1 lands on a half-way tie (or one ulp from it) where x * (1 / 0.1) lands
    # on the other side; Python's float division and round() are the oracle
    x = np.array([0.15, 0.35, 0.95, 1.15, -0.15, -0.35, 0.45000000000000007, -1.15])
    q = quantize(x, 0.1, 0, num_bits=8, signed=True)
    expected = [round(float(v) / 0.1) for v in x]
    assert expected != [round(float(v) * (1 / 0.1)) for v in x]  # the values do separate the two
    assert q.tolist() == expected


@pytest.mark.parametrize("signed", [True, False])
def test_affine_zero_point_ties_round_half_to_even(signed):
    # 8-bit ranges of width 255: scale 1.0, lo / scale = -10.5 and -11.5 exactly; to even
    # gives -10 and -12 (half up: -10, -11; half away from zero: -11, -12)
    x = np.array([[-10.5, 244.5, 3.0], [-11.5, 243.5, 0.0]])
    qmin, _ = _scalar.qrange(8, signed)
    scale, zero_point = choose_qparams(x, num_bits=8, symmetric=False, signed=signed, axis=0)
    np.testing.assert_allclose(scale, [1.0, 1.0], rtol=SCALE_RTOL)
    assert zero_point.tolist() == [qmin + 10, qmin + 12]
    scale, zero_point = choose_qparams(x[1], num_bits=8, symmetric=False, signed=signed)
    assert int(zero_point) == qmin + 12


def test_dequantize_is_q_minus_zero_point_times_scale():
    q = np.array([[0, 3, 255], [17, 128, 1]], dtype=np.int64)
    scale, zero_point = np.array([0.1, 0.7]), np.array([3, 128])
    out = dequantize(q, scale, zero_point, axis=0)
    expected = np.array([[(int(v) - int(zero_point[r])) * float(scale[r]) for v in q[r]] for r in range(2)])
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("qdtype", ["uint8", "int8", "int16", "uint16", "int32"])
@pytest.mark.parametrize("axis", [None, 1])
def test_dequantize_is_exact_for_levels_stored_in_any_integer_type(qdtype, axis):
    # "(q - zero_point) * scale as float64" whatever integer type holds the levels (8-bit
    # storage is the usual one): q - zero_point spans up to twice the type's range, so it
    # must not be formed in q's own type. The parameters are the types choose_qparams returns.
    info = np.iinfo(qdtype)
    lo, hi = max(int(info.min), -2**15), min(int(info.max), 2**16 - 1)
    q = np.array([[lo, hi, 0, 3], [hi, lo + 1, 1, hi - 2], [lo, 2, hi, 5]], dtype=qdtype)
    mid = (lo + hi + 1) // 2
    if axis is None:
        scale, zero_point = np.array(0.37), np.array(mid, dtype=np.int64)
        params = [(0.37, mid)] * 4
    else:
        scale = np.array([0.37, 1.5, 0.01, 2.0])
        zero_point = np.array([mid, lo, hi, 0], dtype=np.int64)
        params = list(zip(scale.tolist(), zero_point.tolist()))
    out = dequantize(q, scale, zero_point, axis=axis)
    expected = np.array([[(int(q[r, c]) - params[c][1]) * params[c][0] for c in range(4)] for r in range(3)])
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    # one subtraction of integers (exact) and one float64 product, as the oracle does
    np.testing.assert_array_equal(out, expected)


# ---------------------------------------------------------------- per-channel axes and shapes

@pytest.mark.parametrize("shape,axis", [((3, 4, 2), -1), ((3, 4, 2), -3), ((3, 4, 2), 2), ((2, 5), -2)])
def test_quantize_and_dequantize_apply_channel_params_along_axis(shape, axis):
    x = _data(35, shape)
    channels = shape[axis]
    scale = np.linspace(0.05, 0.4, channels)
    zero_point = np.arange(channels, dtype=np.int64) * 3 - 2
    q = quantize(x, scale, zero_point, num_bits=8, signed=True, axis=axis)
    out = dequantize(q, scale, zero_point, axis=axis)
    exp_q = np.zeros(shape, dtype=np.int64)
    exp_out = np.zeros(shape)
    for c, indices in enumerate(_scalar.channel_slices(x, axis)):
        for i in indices:
            exp_q[i] = _scalar.quantize_one(float(x[i]), float(scale[c]), int(zero_point[c]), 8, True)
            exp_out[i] = (int(exp_q[i]) - int(zero_point[c])) * float(scale[c])
    np.testing.assert_array_equal(q, exp_q)
    np.testing.assert_array_equal(out, exp_out)


@pytest.mark.parametrize("shape,axis", [((1, 6), 0), ((1, 6), 1), ((5, 1), 1), ((4, 1, 3), 1), ((4, 1, 3), 2),
                                        ((1,), 0), ((6,), 0)])
@pytest.mark.parametrize("symmetric,signed", MODES)
def test_size_one_dimensions_and_single_element_channels(shape, axis, symmetric, signed):
    x = _data(36, shape)
    scale, zero_point = choose_qparams(x, num_bits=5, symmetric=symmetric, signed=signed, axis=axis)
    assert np.shape(scale) == (shape[axis],) and np.shape(zero_point) == (shape[axis],)
    for c, indices in enumerate(_scalar.channel_slices(x, axis)):
        exp_scale, exp_zp = _scalar.params([float(x[i]) for i in indices], 5, symmetric, signed)
        np.testing.assert_allclose(float(scale[c]), exp_scale, rtol=SCALE_RTOL)
        assert int(zero_point[c]) == exp_zp
    out = fake_quantize(x, num_bits=5, symmetric=symmetric, signed=signed, axis=axis)
    expected, _ = _scalar.fake_quantize(x, 5, symmetric, signed, axis)
    assert out.shape == shape
    # stated float64 operations per element, as in test_fake_quantize_matches_scalar_model
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- arguments and results are separate arrays

@pytest.mark.parametrize("axis", [None, 1])
def test_no_function_modifies_its_arguments_or_returns_a_view_of_them(axis):
    # in the solution's process, with live arrays: observe_call reports the arguments as they
    # are after each call and whether a result shares memory with an argument
    x = _data(37, (3, 4))
    zeros = np.zeros((3, 4))
    scale, zero_point = choose_qparams(x, num_bits=8, symmetric=False, signed=False, axis=axis)
    q = quantize(x, scale, zero_point, num_bits=8, signed=False, axis=axis)
    mode = {"num_bits": 8, "signed": False, "axis": axis}
    calls = {
        "choose_qparams": ("choose_qparams", {"x": x}, {"symmetric": False, **mode}),
        "quantize": ("quantize", {"x": x, "scale": scale, "zero_point": zero_point}, mode),
        "dequantize": ("dequantize", {"q": q, "scale": scale, "zero_point": zero_point}, {"axis": axis}),
        "fake_quantize": ("fake_quantize", {"x": x}, {"symmetric": False, **mode}),
        "fake_quantize of zeros": ("fake_quantize", {"zeros": zeros}, {"symmetric": True, **mode}),
        "symmetric fake_quantize": ("fake_quantize", {"x": x}, {"symmetric": True, **mode}),
    }
    for name, (function, arrays, options) in calls.items():
        seen = observe_call("quant", function, *arrays.values(), **options)
        for (arg, original), after in zip(arrays.items(), seen.args):
            np.testing.assert_array_equal(after, original, err_msg=f"{name} modified its argument {arg}")
        assert not seen.shares_memory, f"{name} returned an array sharing memory with its arguments"


def test_the_stated_signatures_accept_every_argument_by_name():
    x = _data(38, (3, 4))
    scale, zero_point = choose_qparams(x=x, num_bits=8, symmetric=False, signed=True, axis=1)
    q = quantize(x=x, scale=scale, zero_point=zero_point, num_bits=8, signed=True, axis=1)
    out = dequantize(q=q, scale=scale, zero_point=zero_point, axis=1)
    fake = fake_quantize(x=x, num_bits=8, symmetric=False, signed=True, axis=1)
    assert quant_range(num_bits=8, signed=False) == (0, 255)
    expected, _ = _scalar.fake_quantize(x, 8, False, True, 1)
    # stated float64 operations per element, as in test_fake_quantize_matches_scalar_model
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fake, expected, rtol=1e-12, atol=1e-12)
