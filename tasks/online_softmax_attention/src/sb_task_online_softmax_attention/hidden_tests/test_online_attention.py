import numpy as np
import pytest

import online_attention
from online_attention import attention, empty_state, finalize, merge, update

import _brute

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


def assert_matches(actual, expected):
    out, lse = actual
    exp_out, exp_lse = expected
    assert out.shape == exp_out.shape and lse.shape == exp_lse.shape
    assert not np.isnan(out).any() and not np.isnan(lse).any()
    np.testing.assert_allclose(out, exp_out, **TOL)
    np.testing.assert_allclose(lse, exp_lse, **TOL)


def copy_state(state):
    return tuple(np.array(part, copy=True) for part in state)


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


def test_explicit_scale_is_used():
    q, k, v = make_qkv(3, 7, 11)
    assert_matches(attention(q, k, v, block_q=3, block_k=4, scale=0.37),
                   _brute.attention(q, k, v, scale=0.37))


def test_lse_and_output_far_beyond_exp_overflow():
    # Scores of magnitude ~1e3 to 1e4: exp overflows float64 unless every exponent is
    # taken relative to the running max; lse is then in the thousands.
    q, k, v = make_qkv(4, 9, 20)
    got = attention(q, k, v, block_q=4, block_k=3, scale=400.0)
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
    state = update(empty_state(4, 3), rng.standard_normal((4, 6)), rng.standard_normal((6, 3)))
    for merged in (merge(state, empty_state(4, 3)), merge(empty_state(4, 3), state)):
        for got, want in zip(merged, state):
            np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)  # exact: weights 1 and 0; 1e-15 allows a few ulp


def assert_rows_saw_nothing(state, rows):
    m, l, acc = state
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
    out, lse = finalize(state)
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
    got = attention(q, k, v, block_q=2, block_k=2, causal=True, q_offset=-3)
    np.testing.assert_array_equal(got[0][:3], 0.0)
    np.testing.assert_array_equal(got[1][:3], -np.inf)
    assert_matches(got, _brute.attention(q, k, v, causal=True, q_offset=-3))


def record_update_calls(monkeypatch):
    calls = []
    real_update = online_attention.update

    def recording_update(state, scores, v):
        calls.append(scores.shape)
        return real_update(state, scores, v)

    monkeypatch.setattr(online_attention, "update", recording_update)
    return calls


def test_blocks_wholly_in_the_future_are_never_folded(monkeypatch):
    calls = record_update_calls(monkeypatch)
    q, k, v = make_qkv(11, 20, 20)
    got = attention(q, k, v, block_q=6, block_k=4, causal=True)
    # Query tiles end at positions 5, 11, 17, 19: they need 2, 3, 5 and 5 key blocks.
    expected = ([(6, 4)] * 2 + [(6, 4)] * 3 + [(6, 4)] * 5 + [(2, 4)] * 5)
    assert sorted(calls) == sorted(expected)
    assert_matches(got, _brute.attention(q, k, v, causal=True))


def test_every_tile_and_block_is_folded_separately(monkeypatch):
    calls = record_update_calls(monkeypatch)
    q, k, v = make_qkv(12, 7, 10)
    attention(q, k, v, block_q=3, block_k=4)
    expected = [(rows, cols) for rows in (3, 3, 1) for cols in (4, 4, 2)]
    assert sorted(calls) == sorted(expected)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(13)
    a = update(empty_state(3, 2), rng.standard_normal((3, 4)), rng.standard_normal((4, 2)))
    b = update(empty_state(3, 2), rng.standard_normal((3, 5)) + 2.0, rng.standard_normal((5, 2)))
    a_before, b_before = copy_state(a), copy_state(b)
    update(a, rng.standard_normal((3, 2)) + 5.0, rng.standard_normal((2, 2)))
    merge(a, b)
    for got, want in zip(a + b, a_before + b_before):
        np.testing.assert_array_equal(got, want)
