"""Hidden tests for fixed_point_requantize.

Every expected value comes from _oracle.py, a brute-force model in Python integers and
Fractions that follows prompt.md's definitions one element at a time; nothing is compared
with the reference. All comparisons are bit-exact: the task is integer arithmetic with every
rounding defined, so there is no tolerance anywhere.
"""
import math

import numpy as np
import pytest

import _oracle as model
from requant import (multiply_by_quantized_multiplier, quantize_multiplier, requantized_matmul,
                     rounding_divide_by_power_of_two, saturating_rounding_doubling_high_mul)

INT32_MIN, INT32_MAX = model.INT32_MIN, model.INT32_MAX
BOUNDARY = [INT32_MIN, INT32_MIN + 1, INT32_MIN + 2, -(2 ** 30) - 1, -(2 ** 30), -(2 ** 30) + 1, -3 * 2 ** 28,
            -46341, -46340, -65536, -3, -2, -1, 0, 1, 2, 3, 65536, 46340, 46341, 3 * 2 ** 28, 2 ** 30 - 1, 2 ** 30,
            2 ** 30 + 1, INT32_MAX - 2, INT32_MAX - 1, INT32_MAX]


def assert_int32_equal(got, want, shape, inputs=()):
    """got (the solution's array) equals the model's list `want` element for element."""
    got = np.asarray(got)
    assert got.dtype == np.int32, f"result dtype {got.dtype}, not int32"
    assert got.shape == tuple(shape), f"result shape {got.shape}, not {tuple(shape)}"
    flat = got.ravel().tolist()
    wrong = [i for i, (g, w) in enumerate(zip(flat, want)) if g != w]
    if wrong:
        columns = [np.broadcast_to(np.asarray(x), shape).ravel() for x in inputs]
        examples = [(tuple(int(c[i]) for c in columns), flat[i], want[i]) for i in wrong[:5]]
        pytest.fail(f"{len(wrong)} of {len(flat)} elements wrong; (inputs, got, want): {examples}")


def log_uniform_int32(rng, n, low_bits=0, high_bits=31):
    """Signed int32 values whose magnitudes are spread over every bit length."""
    bits = rng.integers(low_bits, high_bits + 1, size=n)
    magnitude = np.array([int(rng.integers(0, 2 ** int(k))) if k else 0 for k in bits], dtype=np.int64)
    values = np.where(rng.random(n) < 0.5, -magnitude, magnitude)
    return np.clip(values, INT32_MIN, INT32_MAX).astype(np.int32)


# ---------------------------------------------------------------- quantize_multiplier


def assert_pair(real, want):
    got = quantize_multiplier(real)
    assert isinstance(got, (tuple, list)) and len(got) == 2, f"quantize_multiplier({real!r}) returned {got!r}"
    assert all(isinstance(v, (int, np.integer)) for v in got), f"quantize_multiplier({real!r}) -> {got!r}"
    assert (int(got[0]), int(got[1])) == want, f"quantize_multiplier({real.hex()}) = {got}, want {want}"


def test_quantize_multiplier_on_random_multipliers_across_the_range():
    rng = np.random.default_rng(101)
    reals = [float(2.0 ** x) for x in rng.uniform(-34.0, 33.0, size=150)]
    reals += [float(v) for v in rng.uniform(0.0, 1.0, size=30)] + [float(v) for v in rng.uniform(1.0, 64.0, size=20)]
    for real in reals:
        assert_pair(real, model.quantize_multiplier(real))


@pytest.mark.parametrize("exponent", [-31, -20, -1, 0, 1, 7, 30])
def test_quantize_multiplier_rounds_a_tie_in_the_significand_up(exponent):
    # f = (2**31 + 2j + 1) / 2**32 makes f * 2**31 = 2**30 + j + 1/2 exactly: a tie.
    for j in (0, 1, 2, 3, 1000, 1001, 2 ** 29 - 2, 2 ** 29 - 1):
        real = math.ldexp(2 ** 31 + 2 * j + 1, exponent - 32)
        want = model.quantize_multiplier(real)
        assert want == (2 ** 30 + j + 1, exponent)
        assert_pair(real, want)


@pytest.mark.parametrize("exponent", [-31, -5, 0, 1, 2, 29])
def test_quantize_multiplier_significand_rounding_to_one_moves_to_the_next_exponent(exponent):
    for fraction_bits in (33, 40, 52):
        real = math.ldexp(1.0 - 2.0 ** -fraction_bits, exponent)  # rounds to 2**31 / 2**31
        assert_pair(real, (2 ** 30, exponent + 1))
    real = math.ldexp(1.0 - 2.0 ** -31, exponent)  # f * 2**31 = 2**31 - 1 exactly, no carry
    assert_pair(real, (2 ** 31 - 1, exponent))


def test_quantize_multiplier_flushes_tiny_multipliers_on_the_final_exponent():
    cases = [
        (2.0 ** -32, (2 ** 30, -31)),                          # f = 1/2, e = -31: kept
        (math.ldexp(1.0 - 2.0 ** -34, -32), (2 ** 30, -31)),   # e = -32 before the carry, -31 after: kept
        (math.ldexp(1.0 - 2.0 ** -31, -32), (0, 0)),           # q = 2**31 - 1, e = -32: flushed
        (math.ldexp(1.0 - 2.0 ** -30, -32), (0, 0)),
        (2.0 ** -33, (0, 0)),
        (1e-10, (0, 0)),
        (1e-300, (0, 0)),
        (5e-324, (0, 0)),                                      # the smallest subnormal
        (math.ldexp(0.75, -31), (3 * 2 ** 29, -31)),
    ]
    for real, want in cases:
        assert model.quantize_multiplier(real) == want
        assert_pair(real, want)


def test_quantize_multiplier_saturates_large_multipliers():
    cases = [
        (2.0 ** 29, (2 ** 30, 30)),
        (math.ldexp(1.0 - 2.0 ** -20, 30), (2 ** 31 - 2 ** 11, 30)),
        (math.ldexp(1.0 - 2.0 ** -40, 30), (INT32_MAX, 30)),    # the carry makes e = 31
        (2.0 ** 30, (INT32_MAX, 30)),
        (3.0e9, (INT32_MAX, 30)),
        (1e300, (INT32_MAX, 30)),
    ]
    for real, want in cases:
        assert model.quantize_multiplier(real) == want
        assert_pair(real, want)


def test_quantize_multiplier_zero_and_exact_powers_of_two():
    for real, want in [(0.0, (0, 0)), (1.0, (2 ** 30, 1)), (0.5, (2 ** 30, 0)), (0.25, (2 ** 30, -1)),
                       (0.75, (3 * 2 ** 29, 0)), (3.0, (3 * 2 ** 29, 2))]:
        assert_pair(real, want)


# ---------------------------------------------------------------- saturating_rounding_doubling_high_mul


def high_mul_case(a, b):
    a, b = np.asarray(a, dtype=np.int32), np.asarray(b, dtype=np.int32)
    shape = np.broadcast_shapes(a.shape, b.shape)
    got = saturating_rounding_doubling_high_mul(a, b)
    assert_int32_equal(got, model.elementwise(model.high_mul, a, b), shape, (a, b))


def test_high_mul_on_every_pair_of_boundary_values():
    values = np.array(BOUNDARY, dtype=np.int32)
    high_mul_case(values[:, None], values[None, :])


def test_high_mul_exhaustively_over_every_fraction_of_a_small_grid():
    # b = 2**20 (and neighbours) makes a*b / 2**31 = a / 2**11: every residue, ties included.
    a = np.arange(-4096, 4097, dtype=np.int32)[:, None]
    b = np.array([2 ** 20, -(2 ** 20), 2 ** 20 + 1, -(2 ** 20) - 1, 3 * 2 ** 19, -(2 ** 21) + 1], dtype=np.int32)
    high_mul_case(a, b[None, :])


def tie_pairs(rng, count, offsets):
    """Pairs (a, b) with a*b = 2**30 + d (mod 2**31), d in offsets: ties and their
    neighbours, at products up to 2**62 in magnitude and of both signs."""
    pairs = []
    for _ in range(count):
        a = int(rng.integers(2 ** 20, 2 ** 31)) | 1
        a = -a if rng.random() < 0.5 else a
        inverse = pow(a, -1, 2 ** 31)
        for d in offsets:
            b = ((2 ** 30 + d) * inverse) % 2 ** 31  # in [0, 2**31); b - 2**31 is negative
            pairs += [(a, b), (a, b - 2 ** 31)]
    a, b = zip(*pairs)
    return np.array(a, dtype=np.int32), np.array(b, dtype=np.int32)


def test_high_mul_ties_and_their_neighbours_at_large_magnitudes():
    a, b = tie_pairs(np.random.default_rng(202), 150, (-1, 0, 1))
    products = a.astype(object) * b.astype(object)
    assert {int(p) % 2 ** 31 for p in products} == {2 ** 30 - 1, 2 ** 30, 2 ** 30 + 1}
    assert min(products) < -(2 ** 60) and max(products) > 2 ** 60
    high_mul_case(a, b)


def test_high_mul_on_random_pairs_over_the_whole_range():
    rng = np.random.default_rng(203)
    a = rng.integers(INT32_MIN, INT32_MAX, size=6000, endpoint=True, dtype=np.int64).astype(np.int32)
    b = rng.integers(INT32_MIN, INT32_MAX, size=6000, endpoint=True, dtype=np.int64).astype(np.int32)
    high_mul_case(np.concatenate([a, log_uniform_int32(rng, 4000)]), np.concatenate([b, log_uniform_int32(rng, 4000)]))


def test_high_mul_saturates_only_the_minimum_times_itself():
    a = np.array([INT32_MIN, INT32_MIN, INT32_MIN + 1, INT32_MIN, INT32_MAX], dtype=np.int32)
    b = np.array([INT32_MIN, INT32_MIN + 1, INT32_MIN, INT32_MAX, INT32_MIN], dtype=np.int32)
    got = saturating_rounding_doubling_high_mul(a, b)
    assert_int32_equal(got, [INT32_MAX, INT32_MAX, INT32_MAX, -(2 ** 31) + 1, -(2 ** 31) + 1], (5,), (a, b))


def test_high_mul_broadcasts_a_per_channel_row():
    rng = np.random.default_rng(204)
    high_mul_case(log_uniform_int32(rng, 28).reshape(7, 4), log_uniform_int32(rng, 4))


# ---------------------------------------------------------------- rounding_divide_by_power_of_two


def divide_case(x, exponent):
    x = np.asarray(x, dtype=np.int32)
    shape = np.broadcast_shapes(x.shape, np.shape(exponent))
    got = rounding_divide_by_power_of_two(x, exponent)
    assert_int32_equal(got, model.elementwise(model.divide_by_power_of_two, x, exponent), shape, (x, exponent))


def test_divide_exhaustively_over_small_values_and_exponents():
    divide_case(np.arange(-700, 701, dtype=np.int32)[:, None], np.arange(0, 12, dtype=np.int32)[None, :])


def test_divide_boundary_values_at_every_exponent():
    divide_case(np.array(BOUNDARY, dtype=np.int32)[:, None], np.arange(0, 32, dtype=np.int32)[None, :])


def test_divide_ties_and_their_neighbours_at_large_magnitudes():
    rng = np.random.default_rng(301)
    exponents = rng.integers(1, 32, size=3000)
    odd = np.array([int(rng.integers(0, 2 ** (32 - int(e)) // 2)) * 2 + 1 for e in exponents], dtype=np.int64)
    ties = odd * (2 ** (exponents - 1))  # (2k + 1) * 2**(e - 1): exactly k + 1/2 after the division
    ties = np.where(rng.random(3000) < 0.5, -ties, ties)
    x, e = [], []
    for d in (-1, 0, 1):
        values = ties + d
        keep = (values >= INT32_MIN) & (values <= INT32_MAX)
        x.append(values[keep]), e.append(exponents[keep])
    divide_case(np.concatenate(x).astype(np.int32), np.concatenate(e).astype(np.int32))


@pytest.mark.parametrize("exponent", [0, 1, 2, 5, 17, 30, 31])
def test_divide_random_values_by_a_scalar_exponent(exponent):
    rng = np.random.default_rng(302 + exponent)
    x = np.concatenate([rng.integers(INT32_MIN, INT32_MAX, size=1500, endpoint=True, dtype=np.int64).astype(np.int32),
                        log_uniform_int32(rng, 1500)]).reshape(50, 60)
    divide_case(x, exponent)


# ---------------------------------------------------------------- multiply_by_quantized_multiplier


def requantize_case(x, q, shift):
    x = np.asarray(x, dtype=np.int32)
    q, shift = np.asarray(q, dtype=np.int32), np.asarray(shift, dtype=np.int32)
    shape = np.broadcast_shapes(x.shape, q.shape, shift.shape)
    got = multiply_by_quantized_multiplier(x, q, shift)
    want = model.elementwise(model.multiply_by_quantized_multiplier, x, q, shift)
    assert_int32_equal(got, want, shape, (x, q, shift))


def random_pairs(rng, n, low=-34.0, high=12.0):
    pairs = [model.quantize_multiplier(float(2.0 ** v)) for v in rng.uniform(low, high, size=n)]
    return np.array([p[0] for p in pairs], dtype=np.int32), np.array([p[1] for p in pairs], dtype=np.int32)


def test_requantize_random_values_and_multipliers():
    rng = np.random.default_rng(401)
    q, shift = random_pairs(rng, 8000)
    requantize_case(log_uniform_int32(rng, 8000), q, shift)


def test_requantize_rounds_twice_exhaustively_on_a_small_grid():
    x = np.arange(-1500, 1501, dtype=np.int32)[:, None]
    q = np.array([2 ** 30, 2 ** 30 + 1, 3 * 2 ** 29, INT32_MAX, 1518500250, 2 ** 30, 2 ** 30, 1876499845, 2 ** 30],
                 dtype=np.int32)
    shift = np.array([-1, -1, -2, -3, -5, -2, 0, 1, -31], dtype=np.int32)
    requantize_case(x, q[None, :], shift[None, :])


def test_requantize_left_shift_saturates_before_the_high_mul():
    rng = np.random.default_rng(402)
    q, shift = random_pairs(rng, 4000, low=0.5, high=29.0)
    assert shift.min() >= 1
    x = log_uniform_int32(rng, 4000, low_bits=20)
    x[:50], x[50:100] = INT32_MIN, INT32_MAX
    requantize_case(x, q, shift)


def test_requantize_per_channel_multipliers_broadcast_over_rows():
    rng = np.random.default_rng(403)
    q, shift = random_pairs(rng, 9, low=-33.0, high=6.0)
    requantize_case(log_uniform_int32(rng, 11 * 9).reshape(11, 9), q, shift)


# ---------------------------------------------------------------- requantized_matmul


def random_operand(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.int64).astype(dtype)


def zero_point(rng, dtype):
    info = np.iinfo(dtype)
    return int(rng.choice([info.min, info.max, int(rng.integers(info.min, info.max + 1))]))


def spreading_multipliers(acc, rng, n):
    """Per-channel real multipliers that map each channel's accumulators onto about +-150."""
    peak = [max(1, max(abs(row[j]) for row in acc)) for j in range(n)]
    return [float(150.0 / p * rng.uniform(0.7, 1.3)) for p in peak]


def centring_bias(acc, rng):
    """A bias that centres each channel's accumulators near zero (plus noise), so that the
    outputs spread across the output range whatever the zero points make of the sums."""
    n = len(acc[0])
    return np.array([-round(sum(row[j] for row in acc) / len(acc)) + int(rng.integers(-500, 500)) for j in range(n)],
                    dtype=np.int32)


def matmul_case(a, za, b, zb, bias, multiplier, out_zp, out_dtype, activation=(None, None)):
    info = np.iinfo(out_dtype)
    low = info.min if activation[0] is None else activation[0]
    high = info.max if activation[1] is None else activation[1]
    acc = model.accumulators(a.tolist(), za, b.tolist(), zb if isinstance(zb, int) else zb.tolist(),
                             None if bias is None else bias.tolist())
    assert all(INT32_MIN <= v <= INT32_MAX for row in acc for v in row), "test inputs break the int32 promise"
    want = model.requantized_matmul(a.tolist(), za, b.tolist(), zb if isinstance(zb, int) else zb.tolist(),
                                    None if bias is None else bias.tolist(), multiplier, out_zp, low, high)
    kwargs = {} if activation == (None, None) else {"activation_min": activation[0], "activation_max": activation[1]}
    got = np.asarray(requantized_matmul(a, za, b, zb, bias, multiplier if isinstance(multiplier, float)
                                        else np.array(multiplier, dtype=np.float64), out_zp, np.dtype(out_dtype),
                                        **kwargs))
    assert got.dtype == np.dtype(out_dtype), f"result dtype {got.dtype}, not {np.dtype(out_dtype)}"
    assert got.shape == (a.shape[0], b.shape[1])
    wrong = [(i, j, int(got[i, j]), want[i][j]) for i in range(a.shape[0]) for j in range(b.shape[1])
             if int(got[i, j]) != want[i][j]]
    assert not wrong, f"{len(wrong)} outputs wrong; (row, column, got, want): {wrong[:6]}"
    return want


@pytest.mark.parametrize("a_dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("b_dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("out_dtype", [np.int8, np.uint8])
def test_matmul_per_tensor_against_the_model(a_dtype, b_dtype, out_dtype):
    rng = np.random.default_rng([501, np.dtype(a_dtype).num, np.dtype(b_dtype).num, np.dtype(out_dtype).num])
    a, b = random_operand(rng, (9, 37), a_dtype), random_operand(rng, (37, 6), b_dtype)
    za, zb = zero_point(rng, a_dtype), zero_point(rng, b_dtype)
    bias = centring_bias(model.accumulators(a.tolist(), za, b.tolist(), zb, None), rng)
    acc = model.accumulators(a.tolist(), za, b.tolist(), zb, bias.tolist())
    multiplier = float(np.median(spreading_multipliers(acc, rng, 6)))
    out_zp = zero_point(rng, out_dtype)
    want = matmul_case(a, za, b, zb, bias, multiplier, out_zp, out_dtype)
    info = np.iinfo(out_dtype)
    assert len({v for row in want for v in row}) > 20 and any(info.min < v < info.max for row in want for v in row)


@pytest.mark.parametrize("a_dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("out_dtype", [np.int8, np.uint8])
def test_matmul_per_channel_zero_points_and_multipliers(a_dtype, out_dtype):
    rng = np.random.default_rng([502, np.dtype(a_dtype).num, np.dtype(out_dtype).num])
    a, b = random_operand(rng, (8, 45), a_dtype), random_operand(rng, (45, 7), np.int8)
    za = zero_point(rng, a_dtype)
    zb = np.array([-128, 127, 0, -5, 77, -100, 3], dtype=np.int32)
    bias = rng.integers(-(2 ** 20), 2 ** 20, size=7).astype(np.int32)
    acc = model.accumulators(a.tolist(), za, b.tolist(), zb.tolist(), bias.tolist())
    multipliers = spreading_multipliers(acc, rng, 7)
    multipliers[3] *= 2.0 ** 20   # far above one: the left shift saturates
    multipliers[5] = 2.0 ** -40   # flushed to zero: the channel is the output zero point
    matmul_case(a, za, b, zb, bias, multipliers, zero_point(rng, out_dtype), out_dtype)


def test_matmul_multipliers_above_one_small_and_zero():
    rng = np.random.default_rng(503)
    a, b = random_operand(rng, (6, 5), np.int8) // 16, random_operand(rng, (5, 8), np.int8) // 16
    multipliers = [3.0, 1.5, 1.0, 17.25, 0.0, 2.0 ** -32, 2.0 ** -33, 0.3]
    matmul_case(a, 3, b, np.arange(8, dtype=np.int32) - 4, None, multipliers, -7, np.int8)


@pytest.mark.parametrize("out_dtype, out_zp, activation", [(np.int8, -20, (-20, 70)), (np.uint8, 128, (128, 255)),
                                                            (np.uint8, 10, (0, 40)), (np.int8, 5, (-128, -100))])
def test_matmul_clamps_to_the_activation_range(out_dtype, out_zp, activation):
    rng = np.random.default_rng([504, out_zp + 1000])
    a, b = random_operand(rng, (10, 30), np.uint8), random_operand(rng, (30, 6), np.int8)
    bias = rng.integers(-(2 ** 16), 2 ** 16, size=6).astype(np.int32)
    acc = model.accumulators(a.tolist(), 128, b.tolist(), 0, bias.tolist())
    want = matmul_case(a, 128, b, 0, bias, spreading_multipliers(acc, rng, 6), out_zp, out_dtype, activation)
    values = {v for row in want for v in row}
    assert activation[0] in values and activation[1] in values


@pytest.mark.parametrize("out_dtype, out_zp", [(np.int8, 100), (np.int8, -100), (np.uint8, 255), (np.uint8, 0)])
def test_matmul_adds_the_output_zero_point_exactly_to_extreme_results(out_dtype, out_zp):
    rng = np.random.default_rng(505)
    a, b = random_operand(rng, (4, 6), np.int8) // 32, random_operand(rng, (6, 6), np.int8) // 32
    bias = np.array([2 ** 31 - 300, -(2 ** 31) + 300, 2 ** 30, -(2 ** 30), 2 ** 29, -(2 ** 29)], dtype=np.int32)
    # q = 2**31 - 2 at shift 0 and q = 2**31 - 1 at shift 2: results within a few units of
    # the int32 limits, where adding the zero point in int32 would wrap.
    multipliers = [1.0 - 2.0 ** -30, 1.0 - 2.0 ** -30, 4.0 - 2.0 ** -29, 4.0 - 2.0 ** -29, 2.0 ** 10, 2.0 ** 10]
    matmul_case(a, -1, b, 2, bias, multipliers, out_zp, out_dtype)


@pytest.mark.parametrize("b_dtype", [np.int8, np.uint8])
def test_matmul_larger_shapes_per_channel(b_dtype):
    rng = np.random.default_rng([506, np.dtype(b_dtype).num])
    a, b = random_operand(rng, (12, 300), np.uint8), random_operand(rng, (300, 10), b_dtype)
    info = np.iinfo(b_dtype)
    zb = rng.integers(info.min, info.max, size=10, endpoint=True).astype(np.int32)
    bias = rng.integers(-(2 ** 24), 2 ** 24, size=10).astype(np.int32)
    acc = model.accumulators(a.tolist(), 131, b.tolist(), zb.tolist(), bias.tolist())
    matmul_case(a, 131, b, zb, bias, spreading_multipliers(acc, rng, 10), 3, np.int8)


@pytest.mark.parametrize("multiplier", [0.5, 0.125, 2.0 ** -9])
def test_matmul_power_of_two_multipliers_round_exact_ties_as_defined(multiplier):
    # acc * multiplier is exactly halfway between integers for many outputs of both signs:
    # the high multiply sends a tie up, the final shift sends it away from zero.
    rng = np.random.default_rng([507, int(1 / multiplier)])
    a, b = random_operand(rng, (16, 3), np.int8) // 8, random_operand(rng, (3, 12), np.int8) // 8
    # The bias puts one output of each column (row j % 16) exactly on a tie, of either sign.
    plain = model.accumulators(a.tolist(), 1, b.tolist(), -1, None)
    period = int(1 / multiplier)
    bias = np.array([(2 * int(rng.integers(-60, 60)) + 1) * period // 2 - plain[j % 16][j] for j in range(12)],
                    dtype=np.int32)
    acc = model.accumulators(a.tolist(), 1, b.tolist(), -1, bias.tolist())
    ties = [v for row in acc for v in row if (v * multiplier) % 1 == 0.5]
    assert min(ties) < 0 < max(ties)
    matmul_case(a, 1, b, -1, bias, multiplier, 0, np.int8)
