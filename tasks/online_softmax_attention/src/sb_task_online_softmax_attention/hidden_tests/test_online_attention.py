import math

import numpy as np
import pytest

from online_attention import attention, empty_state, finalize, merge, update
from sb.judge import probe

import _brute

# What attention() hands to update(), its memory peak, and aliasing are properties of the
# solution's live process: the probe records them there; every check is made here.
PROBE = probe("_probe_tiling.py")

# Everything is float64 and the brute force sums exactly (math.fsum) row by row: the
# tiled result differs only by reordered roundings, ~1e-15 relative on O(1)..O(1000)
# values. 1e-10 leaves five orders of margin; every mistake below moves results by O(0.01)+.
TOL = dict(rtol=1e-10, atol=1e-10)


def make_qkv(seed, n_q, n_k, d=8, d_v=5, spread=2.5):
    """spread makes scores range widely, so the running max keeps changing between blocks."""
    rng = np.random.default_rng(seed)
    q = spread * rng.standard_normal((n_q, d))
    k = rng.standard_normal((n_k, d))
    v = rng.standard_normal((n_k, d_v))
    return q, k, v


def materialised(value, n):
    """A tuple the solution returned (a state, or (out, lse)) as n numpy arrays made here:
    a handle's items, length and iteration need not agree, so checks read these instead."""
    items = tuple(np.asarray(a) for a in value)
    assert len(items) == n, f"expected {n} arrays, got {len(items)}"
    return items


def assert_matches(actual, expected):
    out, lse = actual
    exp_out, exp_lse = expected
    assert out.shape == exp_out.shape and lse.shape == exp_lse.shape
    assert out.dtype == np.float64 and lse.dtype == np.float64
    assert not np.isnan(out).any() and not np.isnan(lse).any()
    np.testing.assert_allclose(out, exp_out, **TOL)
    np.testing.assert_allclose(lse, exp_lse, **TOL)


BLOCKS = [(1, 1), (4, 3), (5, 16), (64, 64), (7, 100)]


@pytest.mark.parametrize("block_q,block_k", BLOCKS, ids=[f"{a}x{b}" for a, b in BLOCKS])
def test_matches_bruteforce(block_q, block_k):
    q, k, v = make_qkv(0, 13, 29)
    assert_matches(attention(q, k, v, block_q=block_q, block_k=block_k),
                   _brute.attention(q, k, v))


CAUSAL = [(21, 21, 0, 4, 4), (21, 21, 0, 8, 3), (21, 21, 0, 3, 8), (21, 21, 0, 32, 32),
          (6, 23, 17, 4, 5), (6, 23, 17, 1, 2), (9, 12, 3, 5, 4)]


@pytest.mark.parametrize("n_q,n_k,q_offset,block_q,block_k", CAUSAL,
                         ids=[f"q{a}-k{b}-off{c}-{d}x{e}" for a, b, c, d, e in CAUSAL])
def test_causal_matches_bruteforce(n_q, n_k, q_offset, block_q, block_k):
    q, k, v = make_qkv(1, n_q, n_k)
    assert_matches(attention(q, k, v, block_q=block_q, block_k=block_k, causal=True,
                             q_offset=q_offset),
                   _brute.attention(q, k, v, causal=True, q_offset=q_offset))


def test_result_is_independent_of_block_size():
    q, k, v = make_qkv(2, 17, 17)
    results = [attention(q, k, v, block_q=bq, block_k=bk, causal=True)
               for bq, bk in [(1, 1), (2, 7), (6, 5), (17, 17), (50, 3)]]
    for out, lse in results[1:]:
        np.testing.assert_allclose(out, results[0][0], **TOL)
        np.testing.assert_allclose(lse, results[0][1], **TOL)
    # q_offset left at its default: 0, queries and keys start at the same position.
    assert_matches(results[0], _brute.attention(q, k, v, causal=True, q_offset=0))


def test_explicit_scale_is_used():
    q, k, v = make_qkv(3, 7, 11)
    assert_matches(attention(q, k, v, block_q=3, block_k=4, scale=0.37),
                   _brute.attention(q, k, v, scale=0.37))


def test_lse_and_output_far_beyond_exp_overflow():
    # Scores of magnitude ~1e3 to 1e4: exp overflows float64 unless every exponent is
    # taken relative to the running max; lse is then in the thousands.
    q, k, v = make_qkv(4, 9, 20)
    got = materialised(attention(q, k, v, block_q=4, block_k=3, scale=400.0), 2)
    assert np.all(np.abs(got[1]) > 500.0)
    assert_matches(got, _brute.attention(q, k, v, scale=400.0))


def test_update_rescales_when_the_max_grows():
    rng = np.random.default_rng(5)
    low = rng.standard_normal((4, 6)) - 3.0
    high = rng.standard_normal((4, 5)) + 4.0
    v_low, v_high = rng.standard_normal((6, 3)), rng.standard_normal((5, 3))
    state = update(update(empty_state(4, 3), low, v_low), high, v_high)
    expected = _brute.softmax_rows(np.hstack([low, high]), np.vstack([v_low, v_high]))
    assert_matches(finalize(state), expected)


def test_state_holds_running_max_sum_and_unnormalised_output():
    rng = np.random.default_rng(6)
    s1, s2 = rng.standard_normal((3, 4)), 2.0 * rng.standard_normal((3, 5))
    v1, v2 = rng.standard_normal((4, 2)), rng.standard_normal((5, 2))
    m, l, acc = update(update(empty_state(3, 2), s1, v1), s2, v2)
    s, vv = np.hstack([s1, s2]), np.vstack([v1, v2])
    top = s.max(axis=1)
    w = np.exp(s - top[:, None])
    np.testing.assert_allclose(m, top, **TOL)
    np.testing.assert_allclose(l, w.sum(axis=1), **TOL)
    np.testing.assert_allclose(acc, w @ vv, **TOL)


def test_merge_of_disjoint_key_sets_matches_all_keys():
    rng = np.random.default_rng(7)
    scores = 3.0 * rng.standard_normal((5, 12))
    v = rng.standard_normal((12, 4))
    even, odd = np.arange(0, 12, 2), np.arange(1, 12, 2)
    a = update(empty_state(5, 4), scores[:, even], v[even])
    b = update(update(empty_state(5, 4), scores[:, odd[:3]], v[odd[:3]]),
               scores[:, odd[3:]], v[odd[3:]])
    expected = _brute.softmax_rows(scores, v)
    assert_matches(finalize(merge(a, b)), expected)
    assert_matches(finalize(merge(b, a)), expected)


def test_merge_with_an_empty_state_changes_nothing():
    rng = np.random.default_rng(8)
    state = materialised(update(empty_state(4, 3), rng.standard_normal((4, 6)), rng.standard_normal((6, 3))), 3)
    for merged in (merge(state, empty_state(4, 3)), merge(empty_state(4, 3), state)):
        for got, want in zip(materialised(merged, 3), state):
            np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)  # exact: weights 1 and 0; 1e-15 allows a few ulp


def assert_rows_saw_nothing(state, rows):
    m, l, acc = materialised(state, 3)
    np.testing.assert_array_equal(m[rows], -np.inf)
    np.testing.assert_array_equal(l[rows], 0.0)
    np.testing.assert_array_equal(acc[rows], 0.0)


def test_merging_two_empty_states_gives_zero_output_and_neg_inf_lse():
    merged = merge(empty_state(3, 2), empty_state(3, 2))
    assert_rows_saw_nothing(merged, [0, 1, 2])
    out, lse = finalize(merged)
    np.testing.assert_array_equal(out, np.zeros((3, 2)))
    np.testing.assert_array_equal(lse, np.full(3, -np.inf))


def test_fully_masked_rows_give_zero_output_and_neg_inf_lse():
    rng = np.random.default_rng(9)
    first = rng.standard_normal((4, 5))
    first[[1, 3]] = -np.inf           # rows 1 and 3 see nothing in this block
    v1 = rng.standard_normal((5, 2))
    state = update(empty_state(4, 2), first, v1)
    assert_rows_saw_nothing(state, [1, 3])
    out, lse = materialised(finalize(state), 2)
    assert not np.isnan(out).any() and not np.isnan(lse).any()
    np.testing.assert_array_equal(out[[1, 3]], 0.0)
    np.testing.assert_array_equal(lse[[1, 3]], -np.inf)
    assert_matches((out, lse), _brute.softmax_rows(first, v1))

    # The masked rows must stay usable: a later block with real scores counts in full.
    second = rng.standard_normal((4, 3))
    second[3] = -np.inf
    v2 = rng.standard_normal((3, 2))
    later = update(state, second, v2)
    expected = _brute.softmax_rows(np.hstack([first, second]), np.vstack([v1, v2]))
    assert_matches(finalize(later), expected)
    assert_matches(finalize(merge(later, update(empty_state(4, 2), second, v2))),
                   _brute.softmax_rows(np.hstack([first, second, second]),
                                       np.vstack([v1, v2, v2])))


def test_causal_queries_before_every_key():
    # Queries at positions -3..4: the first three attend to nothing at all.
    q, k, v = make_qkv(10, 8, 6)
    got = materialised(attention(q, k, v, block_q=2, block_k=2, causal=True, q_offset=-3), 2)
    np.testing.assert_array_equal(got[0][:3], 0.0)
    np.testing.assert_array_equal(got[1][:3], -np.inf)
    assert_matches(got, _brute.attention(q, k, v, causal=True, q_offset=-3))



# ---------------------------------------------------------------- conventions and edges


def test_empty_state_shapes_and_dtypes():
    m, l, acc = empty_state(4, 3)
    assert (m.shape, l.shape, acc.shape) == ((4,), (4,), (4, 3))
    assert m.dtype == l.dtype == acc.dtype == np.float64
    assert_rows_saw_nothing((m, l, acc), [0, 1, 2, 3])
    # np.dtype(...) travels by value; the bare class np.float32 would arrive as a handle.
    m32, l32, acc32 = empty_state(2, 5, dtype=np.dtype(np.float32))
    assert m32.dtype == l32.dtype == acc32.dtype == np.float32
    assert (m32.shape, l32.shape, acc32.shape) == ((2,), (2,), (2, 5))
    assert_rows_saw_nothing((m32, l32, acc32), [0, 1])


def test_update_returns_float64_state_of_the_right_shapes():
    rng = np.random.default_rng(20)
    m, l, acc = update(empty_state(3, 4), rng.standard_normal((3, 1)), rng.standard_normal((1, 4)))
    assert (m.shape, l.shape, acc.shape) == ((3,), (3,), (3, 4))
    assert m.dtype == l.dtype == acc.dtype == np.float64


def test_update_with_a_single_key():
    # b = 1: the state of one score s is (s, 1, v) exactly; then a second single key.
    rng = np.random.default_rng(21)
    s1, s2 = rng.standard_normal((4, 1)), rng.standard_normal((4, 1)) + 1.0
    v1, v2 = rng.standard_normal((1, 2)), rng.standard_normal((1, 2))
    m, l, acc = update(empty_state(4, 2), s1, v1)
    np.testing.assert_allclose(m, s1[:, 0], **TOL)
    np.testing.assert_allclose(l, np.ones(4), **TOL)
    np.testing.assert_allclose(acc, np.repeat(v1, 4, axis=0), **TOL)
    both = update((m, l, acc), s2, v2)
    assert_matches(finalize(both), _brute.softmax_rows(np.hstack([s1, s2]), np.vstack([v1, v2])))


def test_update_keeps_a_row_whose_block_is_fully_masked():
    # Row 1 has seen real scores; this block is all -inf for it: its state must not move.
    rng = np.random.default_rng(22)
    first = rng.standard_normal((3, 4)) + 2.0
    v1 = rng.standard_normal((4, 2))
    state = materialised(update(empty_state(3, 2), first, v1), 3)
    second = rng.standard_normal((3, 3)) + 6.0
    second[1] = -np.inf
    v2 = rng.standard_normal((3, 2))
    after = materialised(update(state, second, v2), 3)
    for got, want in zip(after, state):
        np.testing.assert_allclose(got[1], want[1], **TOL)
    assert_matches(finalize(after), _brute.softmax_rows(np.hstack([first, second]), np.vstack([v1, v2])))


def test_merge_rows_empty_on_one_side_or_the_other():
    # Row 0 saw keys only in a, row 1 only in b, row 2 in both with EQUAL maxima, row 3 in neither.
    rng = np.random.default_rng(23)
    sa, sb = rng.standard_normal((4, 3)), rng.standard_normal((4, 5))
    sa[[1, 3]] = -np.inf
    sb[[0, 3]] = -np.inf
    sb[2, 0] = sa[2].max() + 0.0  # tie of the two running maxima in row 2
    sb[2, 1:] = np.minimum(sb[2, 1:], sa[2].max() - 0.5)
    va, vb = rng.standard_normal((3, 2)), rng.standard_normal((5, 2))
    a = update(empty_state(4, 2), sa, va)
    b = update(empty_state(4, 2), sb, vb)
    expected = _brute.softmax_rows(np.hstack([sa, sb]), np.vstack([va, vb]))
    for merged in (merge(a, b), merge(b, a)):
        assert_matches(finalize(merged), expected)
        assert_rows_saw_nothing(merged, [3])
        assert merged[0].dtype == merged[1].dtype == merged[2].dtype == np.float64


def test_finalize_of_a_given_state():
    # Independent arithmetic: out = acc / l and lse = m + log(l), with a row that saw nothing.
    m = np.array([1000.0, -np.inf, -5.0, 0.25])
    l = np.array([2.5, 0.0, 0.5, 1.0])
    acc = np.array([[5.0, -2.5], [0.0, 0.0], [1.0, 0.25], [3.0, 4.0]])
    out, lse = finalize((m, l, acc))
    np.testing.assert_allclose(out, [[2.0, -1.0], [0.0, 0.0], [2.0, 0.5], [3.0, 4.0]], **TOL)
    np.testing.assert_allclose(lse, [1000.0 + math.log(2.5), -np.inf, -5.0 + math.log(0.5), 0.25], **TOL)
    assert out.dtype == lse.dtype == np.float64 and out.shape == (4, 2) and lse.shape == (4,)


def test_scale_zero_is_used_not_replaced_by_the_default():
    # scale = 0: every score is 0, so out is the plain mean of the attended values and
    # lse = log(number of attended keys); the default 1/sqrt(d) would give other numbers.
    q, k, v = make_qkv(24, 5, 7)
    out, lse = attention(q, k, v, block_q=2, block_k=3, scale=0.0)
    np.testing.assert_allclose(out, np.tile(v.mean(axis=0), (5, 1)), **TOL)
    np.testing.assert_allclose(lse, np.full(5, math.log(7)), **TOL)
    out, lse = attention(q, k, v, block_q=2, block_k=3, scale=0.0, causal=True, q_offset=1)
    counts = np.minimum(np.arange(5) + 2, 7)
    np.testing.assert_allclose(lse, np.log(counts), **TOL)
    np.testing.assert_allclose(out, np.array([v[:c].mean(axis=0) for c in counts]), **TOL)


def test_negative_scale_and_unit_dimensions():
    # d = 1 and d_v = 1 (size-1 trailing dims), a negative explicit scale.
    q, k, v = make_qkv(25, 6, 9, d=1, d_v=1)
    assert_matches(attention(q, k, v, block_q=4, block_k=2, scale=-0.8),
                   _brute.attention(q, k, v, scale=-0.8))
    assert_matches(attention(q, k, v, block_q=4, block_k=2, causal=True, q_offset=2),
                   _brute.attention(q, k, v, causal=True, q_offset=2))


def test_single_query_single_key():
    q, k, v = make_qkv(26, 1, 1, d=3, d_v=2)
    out, lse = attention(q, k, v)
    np.testing.assert_allclose(out, v, **TOL)
    np.testing.assert_allclose(lse, [math.fsum(q[0] * k[0]) / math.sqrt(3)], **TOL)


def test_decode_queries_at_the_end_of_the_keys():
    # One and then three new queries against 23 cached keys: q_offset = n_k - n_q.
    for n_q in (1, 3):
        q, k, v = make_qkv(27 + n_q, n_q, 23)
        assert_matches(attention(q, k, v, block_q=2, block_k=5, causal=True, q_offset=23 - n_q),
                       _brute.attention(q, k, v, causal=True, q_offset=23 - n_q))


def test_q_offset_past_every_key_sees_every_key():
    q, k, v = make_qkv(30, 5, 9)
    assert_matches(attention(q, k, v, block_q=2, block_k=4, causal=True, q_offset=40),
                   _brute.attention(q, k, v))


def test_q_offset_is_ignored_without_causal():
    q, k, v = make_qkv(31, 6, 10)
    for offset in (-4, 3):
        assert_matches(attention(q, k, v, block_q=4, block_k=3, q_offset=offset),
                       _brute.attention(q, k, v))


def test_default_block_sizes_are_64():
    q, k, v = make_qkv(32, 130, 70, d=4, d_v=2)
    record = PROBE.record_attention(q, k, v, {})
    shapes = sorted(c["scores"].shape for c in record["calls"])
    assert shapes == sorted((r, c) for r in (64, 64, 2) for c in (64, 6))


# ---------------------------------------------------------------- how the work is split


def expected_pairs(q, k, v, block_q, block_k, causal, q_offset, scale):
    """{(tile, block): (row range, scores with -inf where masked, values)} of every pair that
    must reach update(), computed here in float64 from the prompt's definition."""
    n_q, n_k = q.shape[0], k.shape[0]
    scale = 1.0 / math.sqrt(q.shape[1]) if scale is None else scale
    pairs, tiles = {}, []
    for t, q_start in enumerate(range(0, n_q, block_q)):
        q_end = min(q_start + block_q, n_q)
        tiles.append((q_start, q_end))
        last_query = q_offset + q_end - 1
        for u, k_start in enumerate(range(0, n_k, block_k)):
            k_end = min(k_start + block_k, n_k)
            if causal and k_start > last_query:
                continue  # every key of the block is after every query of the tile
            s = np.array([[scale * math.fsum(q[i] * k[j]) for j in range(k_start, k_end)]
                          for i in range(q_start, q_end)])
            if causal:
                allowed = np.arange(k_start, k_end)[None, :] <= q_offset + np.arange(q_start, q_end)[:, None]
                s = np.where(allowed, s, -np.inf)
            pairs[(t, u)] = (s, v[k_start:k_end])
    return pairs, tiles


def same_scores(got, want):
    """Same shape, -inf exactly where masked, the rest equal up to rounding (see TOL)."""
    if got.shape != want.shape or not np.array_equal(np.isneginf(got), np.isneginf(want)):
        return False
    finite = np.isfinite(want)
    return bool(np.all(np.isfinite(got[finite]))
                and np.allclose(got[finite], want[finite], **TOL))


def is_empty_state(state, rows, d_v):
    m, l, acc = state
    return (m.shape == (rows,) and l.shape == (rows,) and acc.shape == (rows, d_v)
            and bool(np.all(np.isneginf(m))) and not l.any() and not acc.any())


def check_tiling(q, k, v, block_q=64, block_k=64, causal=False, q_offset=0, scale=None):
    kwargs = dict(block_q=block_q, block_k=block_k, causal=causal, q_offset=q_offset, scale=scale)
    record = PROBE.record_attention(q, k, v, kwargs)
    pairs, tiles = expected_pairs(q, k, v, block_q, block_k, causal, q_offset, scale)
    # 1. every call is one (tile, block) pair with that pair's scores and values, each pair once
    per_tile = {t: [] for t in range(len(tiles))}
    unmatched = dict(pairs)
    for call in record["calls"]:
        found = [key for key, (s, vb) in unmatched.items()
                 if same_scores(call["scores"], s) and call["v"].shape == vb.shape
                 and np.array_equal(call["v"], vb)]
        assert found, (f"update() got scores of shape {call['scores'].shape} that are no remaining "
                       "(query tile, key block) pair's masked scores with its values")
        per_tile[found[0][0]].append(call)
        del unmatched[found[0]]
    assert not unmatched, f"pairs never passed to update(): {sorted(unmatched)}"
    # 2. each tile starts from the empty state and threads its state from call to call
    out, lse = record["result"]
    d_v = v.shape[1]
    for t, (q_start, q_end) in enumerate(tiles):
        calls = per_tile[t]
        if not calls:
            np.testing.assert_array_equal(out[q_start:q_end], 0.0)
            np.testing.assert_array_equal(lse[q_start:q_end], -np.inf)
            continue
        starts = [c for c in calls if is_empty_state(c["state_in"], q_end - q_start, d_v)]
        assert len(starts) == 1, f"tile {t}: {len(starts)} update() calls start from the empty state"
        current, remaining = starts[0], [c for c in calls if c is not starts[0]]
        while remaining:
            nxt = [c for c in remaining
                   if all(np.array_equal(a, b) for a, b in zip(c["state_in"], current["state_out"]))]
            assert nxt, f"tile {t}: a call to update() did not get the state the previous call returned"
            current = nxt[0]
            remaining = [c for c in remaining if c is not current]
        # 3. the tile's result is finalize of its final state
        final_out, final_lse = finalize(tuple(current["state_out"]))
        np.testing.assert_allclose(out[q_start:q_end], final_out, **TOL)
        np.testing.assert_allclose(lse[q_start:q_end], final_lse, **TOL)
    assert_matches(tuple(record["result"]),
                   _brute.attention(q, k, v, causal=causal, q_offset=q_offset, scale=scale))
    return record


def test_blocks_wholly_in_the_future_are_never_folded():
    q, k, v = make_qkv(11, 20, 20)
    record = check_tiling(q, k, v, block_q=6, block_k=4, causal=True)
    # Query tiles end at positions 5, 11, 17, 19: they need 2, 3, 5 and 5 key blocks.
    assert len(record["calls"]) == 15


def test_every_tile_and_block_is_folded_separately():
    q, k, v = make_qkv(12, 7, 10)
    record = check_tiling(q, k, v, block_q=3, block_k=4)
    assert len(record["calls"]) == 9


TILINGS = {
    "tile_before_every_key": (8, 6, 2, 2, -3),    # the first tile attends to nothing at all
    "decode": (3, 23, 2, 5, 20),                  # the last tile's block 4 is wholly future
    "offset_past_every_key": (5, 9, 2, 4, 100),   # nothing is skipped
    "ragged_both": (11, 13, 4, 5, 1),             # last tile and last block short
}


@pytest.mark.parametrize("case", list(TILINGS))
def test_causal_tiling_hands_update_the_masked_pair_scores(case):
    n_q, n_k, block_q, block_k, q_offset = TILINGS[case]
    q, k, v = make_qkv(33, n_q, n_k)
    check_tiling(q, k, v, block_q=block_q, block_k=block_k, causal=True, q_offset=q_offset)


def test_tiling_with_an_explicit_scale():
    q, k, v = make_qkv(34, 5, 7)
    check_tiling(q, k, v, block_q=2, block_k=3, scale=0.37)


def test_the_full_score_matrix_is_never_built():
    # 768 x 768 float64 scores would take 4.7 MB. Tiled with 64 x 64 blocks the work needs
    # a few 64 x 64 blocks at a time (the reference peaks near 0.15 MB of traced memory);
    # a quarter of the full matrix (1.2 MB) is an 8x margin over that and still far below
    # any full score matrix (float32 would be 2.4 MB).
    n = 768
    q, k, v = make_qkv(35, n, n)
    peak = PROBE.peak_memory(q, k, v, dict(block_q=64, block_k=64))
    assert peak < n * n * 8 / 4, f"attention() peaked at {peak} bytes: a full score matrix?"


@pytest.mark.parametrize("causal", [False, True])
def test_no_full_score_matrix_when_one_tile_spans_every_query(causal):
    # "never built" whatever the block sizes: with block_q >= n_q the single query tile is
    # every query, so scoring the tile against all keys at once is the full matrix. 512 x 4096
    # float64 scores take 16.8 MB; the work of one 512 x 64 pair at a time peaks near 0.95 MB
    # of traced memory in the reference. A quarter of the full matrix (4.2 MB) is a 4x margin
    # over that, and any full (or tile x all keys) score matrix is 4x over the bound.
    # Under causal, q_offset = n_k - n_q puts every key in the tile's past (no block skipped).
    n_q, n_k = 512, 4096
    q, k, v = make_qkv(37, n_q, n_k)
    kwargs = dict(block_q=512, block_k=64, causal=causal, q_offset=n_k - n_q)
    peak = PROBE.peak_memory(q, k, v, kwargs)
    assert peak < n_q * n_k * 8 / 4, f"attention() peaked at {peak} bytes: a full score matrix?"


# ---------------------------------------------------------------- no modification, no aliasing


def flat_arrays(value):
    if isinstance(value, np.ndarray):
        return [value]
    return [a for part in value for a in flat_arrays(part)]


def assert_untouched_and_new(name, args, kwargs=None):
    before = [a.copy() for a in flat_arrays(args)]
    seen = PROBE.call_and_inspect(name, args, kwargs or {})
    for got, want in zip(flat_arrays(seen["args_after"]), before):
        np.testing.assert_array_equal(got, want, err_msg=f"{name}() modified an argument")
    assert not any(seen["shares_memory"]), f"{name}() returned an array that shares memory with an argument"
    return seen["result"]


def test_inputs_are_not_modified_and_results_are_new_arrays():
    rng = np.random.default_rng(13)
    a = materialised(update(empty_state(3, 2), rng.standard_normal((3, 4)), rng.standard_normal((4, 2))), 3)
    b = materialised(update(empty_state(3, 2), rng.standard_normal((3, 5)) + 2.0, rng.standard_normal((5, 2))), 3)
    scores = rng.standard_normal((3, 2)) + 5.0
    scores[0, 1] = -np.inf
    assert_untouched_and_new("update", [a, scores, rng.standard_normal((2, 2))])
    assert_untouched_and_new("update", [empty_state(3, 2), np.full((3, 2), -np.inf), rng.standard_normal((2, 2))])
    assert_untouched_and_new("merge", [a, b])
    assert_untouched_and_new("merge", [a, empty_state(3, 2)])
    assert_untouched_and_new("merge", [empty_state(3, 2), b])
    assert_untouched_and_new("finalize", [a])
    assert_untouched_and_new("finalize", [empty_state(3, 2)])
    q, k, v = make_qkv(36, 5, 6)
    assert_untouched_and_new("attention", [q, k, v], dict(block_q=2, block_k=4, causal=True, q_offset=1))
    assert_untouched_and_new("attention", [q, k, v], dict(block_q=8, block_k=8, scale=0.5))
