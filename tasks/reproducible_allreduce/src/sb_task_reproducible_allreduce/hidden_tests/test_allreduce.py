"""Hidden tests for reproducible_allreduce.

Every expected value comes from _oracle (Fractions rounded by bisection over float32 bit
patterns; Python integers for the large case), written from the statement of the task,
never from a solution. The results must be bit-exact: the task promises the unique
correctly rounded float32, so there is no tolerance anywhere (NaN matches any NaN).
"""
import math

import numpy as np
import pytest

from _cases import (FLT_MAX, F32, cancellation_columns, exact_split, midpoint_columns, to_shards,
                    wide_random_columns)
from _oracle import NEG_ZERO_BITS, POS_INF_BITS, assert_bits_equal, exact_sum_bits_large, exact_sum_bits_small
from allreduce import ExactAccumulator, reduce_sum

NAN = float("nan")
INF = float("inf")


def shards_of(*columns):
    """Shards from explicit columns of equal length: columns[j][i] is shard i, element j."""
    return [np.array(row, dtype=F32) for row in zip(*columns)]


def check(shards, shape=None):
    assert_bits_equal(reduce_sum(shards), exact_sum_bits_small(shards), shape)


# ---------------------------------------------------------------- correct rounding


def test_sum_just_above_a_midpoint_rounds_up():
    # 1 + 2**-24 is the midpoint between 1 and its successor; 2**-80 puts the exact sum above it.
    check(shards_of([1.0, 2.0**-24, 2.0**-80], [3.0, 2.0**-23, 2.0**-149], [-1.0, -(2.0**-24), -(2.0**-100)]))


def test_sum_just_below_a_midpoint_rounds_down():
    check(shards_of([1.0 + 2.0**-23, 2.0**-24, -(2.0**-80)], [-(2.0**30), -(2.0**6), 2.0**-60]))


@pytest.mark.parametrize("seed", range(4))
def test_sums_within_a_float64_ulp_of_a_midpoint(seed):
    rng = np.random.default_rng(100 + seed)
    check(to_shards(midpoint_columns(rng, 150), rng, n_shards=4 + seed))


def test_exact_midpoints_round_to_even():
    columns = [[1.0, 2.0**-24], [1.0 + 2.0**-23, 2.0**-24], [-3.0, -(2.0**-22)], [2.0**-126, 2.0**-149, 2.0**-150 * 0],
               [5.0, 2.0**-22, 2.0**-22 * 0], [-(1.0 + 2.0**-23), -(2.0**-24)]]
    rng = np.random.default_rng(7)
    check(to_shards(columns, rng))


@pytest.mark.parametrize("seed", range(4))
def test_huge_terms_cancel_exactly_leaving_small_ones(seed):
    rng = np.random.default_rng(200 + seed)
    check(to_shards(cancellation_columns(rng, 120), rng, n_shards=9))


def test_huge_and_tiny_terms_are_all_counted():
    check(shards_of([2.0**127, 1.0, -(2.0**127)], [2.0**100, 2.0**-149, -(2.0**100)], [2.0**90, 3.0, 2.0**-140],
                    [-(2.0**127), 2.0**-149, 2.0**127 - 2.0**104]))


@pytest.mark.parametrize("seed", range(6))
def test_random_wide_exponent_battery(seed):
    rng = np.random.default_rng(300 + seed)
    check(to_shards(wide_random_columns(rng, 200), rng))


@pytest.mark.parametrize("n_shards", [1, 2, 3, 17, 64])
def test_random_gradients_any_number_of_shards(n_shards):
    rng = np.random.default_rng(400 + n_shards)
    shards = [(rng.standard_normal(120) * np.exp2(rng.integers(-40, 20, 120))).astype(F32) for _ in range(n_shards)]
    check(shards)


def test_subnormal_results_are_exact():
    tiny = 2.0**-149
    check(shards_of([tiny, tiny, tiny], [2.0**-126, -tiny], [-(2.0**-126), 2.0**-127, 3 * tiny],
                    [1.0, -1.0, 5 * tiny], [2.0**-130, 2.0**-149, -(2.0**-131)], [-tiny, -tiny, 2.0**-148 * 0]))


def test_result_does_not_depend_on_shard_order():
    rng = np.random.default_rng(11)
    shards = to_shards(midpoint_columns(rng, 60) + cancellation_columns(rng, 60), rng, n_shards=9)
    expected = exact_sum_bits_small(shards)
    for _ in range(4):
        order = rng.permutation(len(shards))
        assert_bits_equal(reduce_sum([shards[i] for i in order]), expected)


def test_result_does_not_depend_on_how_the_gradient_was_split():
    rng = np.random.default_rng(12)
    shards = to_shards(midpoint_columns(rng, 60) + wide_random_columns(rng, 60), rng, n_shards=9)
    expected = exact_sum_bits_small(shards)
    resplit = []
    for shard in shards:
        resplit.extend(exact_split(shard))
    assert_bits_equal(reduce_sum(resplit), expected)
    # and merged back: two workers' shards whose exact sum is a float32
    high, low = exact_split(shards[0])
    assert_bits_equal(reduce_sum([high, low] + shards[1:]), expected)


def test_large_reduction_of_64_shards():
    rng = np.random.default_rng(13)
    n = 100_000
    shards = [(rng.standard_normal(n) * np.exp2(rng.integers(-60, 60, n))).astype(F32) for _ in range(64)]
    planted = to_shards(midpoint_columns(rng, 300) + cancellation_columns(rng, 300), rng, n_shards=64)
    at = rng.choice(n, 600, replace=False)
    for shard, column in zip(shards, planted):
        shard[at] = column
    got = reduce_sum(shards)
    assert got.dtype == np.float32 and got.shape == (n,)
    # the integer oracle is slow in Python: check the planted columns and 3000 others.
    checked = np.concatenate([at, rng.choice(n, 3000, replace=False)])
    assert_bits_equal(got[checked], exact_sum_bits_large([s[checked] for s in shards]))


# ---------------------------------------------------------------- special values


def test_nan_anywhere_gives_nan():
    check(shards_of([1.0, NAN], [NAN, INF], [NAN, -INF, INF], [-0.0, NAN], [FLT_MAX, FLT_MAX, NAN]))


def test_infinities():
    check(shards_of([INF, 1.0, -FLT_MAX], [-INF, -FLT_MAX, -FLT_MAX], [INF, -INF, 0.0], [INF, INF, -0.0],
                    [-INF, 2.0**-149, -INF], [FLT_MAX, FLT_MAX, INF]))


def test_overflow_is_decided_by_rounding_the_exact_sum():
    half_ulp = 2.0**103  # half the spacing of float32 at FLT_MAX
    check(shards_of([FLT_MAX, FLT_MAX, -FLT_MAX], [FLT_MAX, half_ulp], [FLT_MAX, half_ulp, -(2.0**50)],
                    [FLT_MAX, 2.0**102, 2.0**102], [FLT_MAX, 2.0**102, 2.0**101], [-FLT_MAX, -half_ulp, 2.0**-149],
                    [-FLT_MAX, -half_ulp, -(2.0**-149)], [FLT_MAX, FLT_MAX, FLT_MAX, -FLT_MAX, -FLT_MAX],
                    [2.0**127, 2.0**127, -(2.0**-149)]))


def test_sign_of_an_exact_zero_sum():
    check(shards_of([-0.0, -0.0, -0.0], [-0.0, 0.0, -0.0], [1.0, -1.0, -0.0], [-1.0, 1.0, -0.0],
                    [-(2.0**-149), 2.0**-149, -0.0], [0.0, 0.0, 0.0], [-FLT_MAX, FLT_MAX, -0.0]))


def test_a_single_shard_comes_back_bit_for_bit():
    x = np.array([-0.0, 0.0, 2.0**-149, -(2.0**-140), 1.5, FLT_MAX, -INF, INF, NAN], dtype=F32)
    check([x])


# ---------------------------------------------------------------- shapes and arguments


def test_shape_and_dtype_are_kept():
    rng = np.random.default_rng(14)
    shards = [rng.standard_normal((3, 4, 5)).astype(F32) for _ in range(3)]
    check(shards, shape=(3, 4, 5))
    check([np.array(2.5, dtype=F32), np.array(2.0**-30, dtype=F32)], shape=())
    got = reduce_sum([np.zeros(0, dtype=F32)] * 2)
    assert got.dtype == np.float32 and got.shape == (0,)


def test_no_shards_raises_value_error():
    with pytest.raises(ValueError):
        reduce_sum([])


def test_shards_of_different_shapes_raise_value_error():
    with pytest.raises(ValueError):
        reduce_sum([np.zeros(3, dtype=F32), np.zeros(4, dtype=F32)])
    with pytest.raises(ValueError):
        reduce_sum([np.zeros((2, 3), dtype=F32), np.zeros((3, 2), dtype=F32)])


# ---------------------------------------------------------------- the streaming accumulator


def _assert_stream_matches(shards, groups=None):
    acc = ExactAccumulator()
    for i, shard in enumerate(shards, start=1):
        acc.add(shard)
        if groups is None or i in groups:
            assert_bits_equal(acc.result(), exact_sum_bits_small(shards[:i]))


@pytest.mark.parametrize("seed", range(3))
def test_accumulator_equals_the_one_shot_sum_after_every_add(seed):
    rng = np.random.default_rng(500 + seed)
    columns = midpoint_columns(rng, 40) + cancellation_columns(rng, 40) + wide_random_columns(rng, 40)
    _assert_stream_matches(to_shards(columns, rng, n_shards=10))


def test_accumulator_state_is_exact():
    seq = [[2.0**127, 2.0**-149, 1.0], [1.0, 2.0**-149, 2.0**-24], [-(2.0**127), 2.0**-149, 2.0**-90],
           [2.0**-149, -(2.0**-149), -(2.0**-24)], [FLT_MAX, 2.0**100, 2.0**-100]]
    _assert_stream_matches([np.array(row, dtype=F32) for row in seq])


def test_accumulator_does_not_overflow_on_a_partial_sum():
    rows = [np.array([FLT_MAX, 2.0**127, -FLT_MAX], dtype=F32)] * 40 + [np.array([-FLT_MAX, -(2.0**127), FLT_MAX],
                                                                                 dtype=F32)] * 39
    acc = ExactAccumulator()
    for row in rows:
        acc.add(row)
    assert_bits_equal(acc.result(), exact_sum_bits_small(rows))


def test_accumulator_special_values_across_adds():
    seq = [[INF, NAN, -0.0, 1.0, -0.0, -INF], [1.0, 2.0, -0.0, -1.0, 0.0, 5.0], [-INF, 3.0, -0.0, -0.0, -0.0, -INF]]
    _assert_stream_matches([np.array(row, dtype=F32) for row in seq])


def test_accumulator_result_can_be_read_many_times():
    rng = np.random.default_rng(15)
    shards = to_shards(midpoint_columns(rng, 30), rng, n_shards=4)
    acc = ExactAccumulator()
    acc.add(shards[0])
    acc.add(shards[1])
    first = acc.result()
    again = acc.result()
    assert_bits_equal(again, exact_sum_bits_small(shards[:2]))
    assert np.array_equal(first.view(np.uint32), again.view(np.uint32))
    acc.add(shards[2])
    acc.add(shards[3])
    assert_bits_equal(acc.result(), exact_sum_bits_small(shards))


def test_accumulator_in_large_pieces():
    rng = np.random.default_rng(16)
    n = 20_000
    shards = [(rng.standard_normal(n) * np.exp2(rng.integers(-120, 120, n))).astype(F32) for _ in range(12)]
    acc = ExactAccumulator()
    for shard in shards:
        acc.add(shard)
    got = acc.result()
    assert got.shape == (n,)
    checked = rng.choice(n, 2000, replace=False)
    assert_bits_equal(got[checked], exact_sum_bits_large([s[checked] for s in shards]))


def test_accumulator_keeps_the_shape():
    acc = ExactAccumulator()
    acc.add(np.ones((2, 3), dtype=F32))
    acc.add(np.full((2, 3), 2.0**-30, dtype=F32))
    assert_bits_equal(acc.result(), exact_sum_bits_small([np.ones((2, 3), F32), np.full((2, 3), 2.0**-30, F32)]),
                      shape=(2, 3))


def test_accumulator_rejects_a_different_shape_and_an_early_result():
    acc = ExactAccumulator()
    with pytest.raises(ValueError):
        acc.result()
    acc.add(np.ones(3, dtype=F32))
    with pytest.raises(ValueError):
        acc.add(np.ones(4, dtype=F32))
    assert_bits_equal(acc.result(), exact_sum_bits_small([np.ones(3, dtype=F32)]))
