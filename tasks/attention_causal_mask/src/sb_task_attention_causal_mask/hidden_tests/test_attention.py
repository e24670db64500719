import math

import numpy as np
import pytest
import torch

from attention import attention, causal_mask
from sb.judge import observe_call

from _brute import brute_attention

# float64 end to end: the only differences from the loop are summation order and exp/log
# rounding, a few ulps on O(1) values; 1e-10 leaves five orders of magnitude of room.
F64_ATOL = 1e-10


def _qkv(seed, batch, heads, num_queries, num_keys, dim, value_dim=None, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    value_dim = dim if value_dim is None else value_dim
    q = torch.randn(batch, heads, num_queries, dim, generator=gen, dtype=torch.float64)
    k = torch.randn(batch, heads, num_keys, dim, generator=gen, dtype=torch.float64)
    v = torch.randn(batch, heads, num_keys, value_dim, generator=gen, dtype=torch.float64)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def _expected(q, k, v, causal=False, padding=None):
    pad = None if padding is None else padding.numpy()
    return brute_attention(q.double().numpy(), k.double().numpy(), v.double().numpy(),
                           causal=causal, padding=pad)


def _mask_by_loop(num_queries, num_keys):
    out = np.zeros((num_queries, num_keys))
    for i in range(num_queries):
        for j in range(num_keys):
            if j > num_keys - num_queries + i:
                out[i, j] = -np.inf
    return out


# ---------------------------------------------------------------- causal_mask

@pytest.mark.parametrize("size", [1, 2, 5])
def test_causal_mask_square_is_lower_triangular(size):
    mask = causal_mask(size, size)
    assert tuple(mask.shape) == (size, size)
    np.testing.assert_array_equal(mask.numpy(), _mask_by_loop(size, size))


@pytest.mark.parametrize("num_queries,num_keys", [(1, 6), (3, 7), (4, 5)])
def test_causal_mask_decode_is_end_aligned(num_queries, num_keys):
    mask = causal_mask(num_queries, num_keys)
    assert tuple(mask.shape) == (num_queries, num_keys)
    np.testing.assert_array_equal(mask.numpy(), _mask_by_loop(num_queries, num_keys))


def test_causal_mask_values_are_exact_zero_and_minus_inf():
    mask = causal_mask(3, 3)
    assert mask[0, 0].item() == 0.0
    assert mask[0, 1].item() == -math.inf
    assert mask[2, 0].item() == 0.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_causal_mask_dtype(dtype):
    assert causal_mask(2, 4, dtype=dtype).dtype == dtype
    assert causal_mask(2, 4).dtype == torch.float32


def test_causal_mask_more_queries_than_keys_raises():
    with pytest.raises(ValueError):
        causal_mask(5, 3)


@pytest.mark.parametrize("num_queries,num_keys", [(0, 3), (0, 0), (2, 0), (-1, 4), (1, -2)])
def test_causal_mask_sizes_below_one_raise(num_queries, num_keys):
    with pytest.raises(ValueError):
        causal_mask(num_queries, num_keys)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_causal_mask_half_precision_dtypes_hold_exact_zero_and_minus_inf(dtype):
    mask = causal_mask(3, 5, dtype=dtype)
    assert mask.dtype == dtype
    np.testing.assert_array_equal(mask.double().numpy(), _mask_by_loop(3, 5))


def test_causal_mask_one_query_one_key():
    mask = causal_mask(1, 1)
    assert tuple(mask.shape) == (1, 1) and mask.item() == 0.0


# ---------------------------------------------------------------- attention

def test_attention_unmasked_matches_float64_loop():
    q, k, v = _qkv(0, 2, 3, 5, 7, 4, value_dim=6)
    out = attention(q, k, v)
    assert tuple(out.shape) == (2, 3, 5, 6)
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v), atol=F64_ATOL, rtol=0)


def test_attention_scales_scores_by_inverse_sqrt_dim():
    # one query, two keys: weight on key 0 is sigmoid((s0 - s1) / sqrt(d)); checked in closed form
    dim = 16
    q = torch.zeros(1, 1, 1, dim, dtype=torch.float64)
    q[..., 0] = 1.0
    k = torch.zeros(1, 1, 2, dim, dtype=torch.float64)
    k[0, 0, 0, 0] = 8.0
    v = torch.tensor([[[[1.0], [0.0]]]], dtype=torch.float64)
    expected = 1.0 / (1.0 + math.exp(-8.0 / math.sqrt(dim)))
    assert attention(q, k, v).item() == pytest.approx(expected, abs=F64_ATOL)


def test_attention_causal_square_matches_float64_loop():
    q, k, v = _qkv(1, 2, 2, 6, 6, 5)
    out = attention(q, k, v, causal=True)
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, causal=True), atol=F64_ATOL, rtol=0)


@pytest.mark.parametrize("num_queries,num_keys", [(1, 9), (3, 8)])
def test_attention_causal_decode_queries_at_end(num_queries, num_keys):
    q, k, v = _qkv(2, 2, 2, num_queries, num_keys, 4)
    out = attention(q, k, v, causal=True)
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, causal=True), atol=F64_ATOL, rtol=0)


def test_attention_causal_decode_equals_last_rows_of_full():
    # the last rows of a full causal pass are exactly what a decode pass over the same keys gives
    q, k, v = _qkv(3, 1, 2, 7, 7, 4)
    full = attention(q, k, v, causal=True)
    tail = attention(q[:, :, -2:], k, v, causal=True)
    np.testing.assert_allclose(tail.numpy(), full[:, :, -2:].numpy(), atol=F64_ATOL, rtol=0)


def test_attention_key_padding_matches_float64_loop():
    q, k, v = _qkv(4, 3, 2, 4, 6, 5)
    padding = torch.tensor([
        [False, False, False, False, True, True],
        [False, True, False, True, False, False],
        [False, False, False, False, False, False],
    ])
    out = attention(q, k, v, key_padding_mask=padding)
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, padding=padding),
                               atol=F64_ATOL, rtol=0)


def test_attention_key_padding_square_masks_keys_not_queries():
    # Lq == Lk, so a mask broadcast along the query axis would still have the right shape
    q, k, v = _qkv(5, 2, 2, 5, 5, 3)
    padding = torch.tensor([[False, False, False, True, True],
                            [True, False, False, False, False]])
    out = attention(q, k, v, key_padding_mask=padding)
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, padding=padding),
                               atol=F64_ATOL, rtol=0)


def test_padding_combines_with_causality():
    q, k, v = _qkv(6, 2, 3, 6, 6, 4)
    padding = torch.tensor([[False, False, False, False, True, True],
                            [False, True, False, False, False, True]])
    out = attention(q, k, v, causal=True, key_padding_mask=padding)
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, causal=True, padding=padding),
                               atol=F64_ATOL, rtol=0)


def test_padding_combines_with_causality_in_decode():
    q, k, v = _qkv(7, 2, 2, 3, 8, 4)
    padding = torch.tensor([[False] * 5 + [True] * 3, [True, True] + [False] * 6])
    out = attention(q, k, v, causal=True, key_padding_mask=padding)
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, causal=True, padding=padding),
                               atol=F64_ATOL, rtol=0)


def test_padded_keys_have_no_influence():
    q, k, v = _qkv(8, 1, 2, 4, 6, 3)
    padding = torch.tensor([[False, False, False, True, False, True]])
    base = attention(q, k, v, causal=True, key_padding_mask=padding)
    k2, v2 = k.clone(), v.clone()
    k2[:, :, [3, 5]] = 50.0
    v2[:, :, [3, 5]] = -1e6
    moved = attention(q, k2, v2, causal=True, key_padding_mask=padding)
    # identical arithmetic on the unpadded keys; the padded ones must contribute exactly nothing
    np.testing.assert_allclose(moved.numpy(), base.numpy(), atol=F64_ATOL, rtol=0)


def test_fully_padded_row_gives_zeros_not_nan():
    q, k, v = _qkv(9, 2, 2, 3, 4, 5)
    padding = torch.tensor([[True, True, True, True], [False, True, False, False]])
    out = attention(q, k, v, key_padding_mask=padding)
    assert not torch.isnan(out).any()
    assert torch.equal(out[0], torch.zeros_like(out[0]))
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, padding=padding),
                               atol=F64_ATOL, rtol=0)


def test_left_padding_under_causality_gives_zero_rows():
    # left padding: the first queries can only see padded keys, so their rows are empty
    q, k, v = _qkv(10, 1, 2, 5, 5, 3)
    padding = torch.tensor([[True, True, False, False, False]])
    out = attention(q, k, v, causal=True, key_padding_mask=padding)
    assert not torch.isnan(out).any()
    assert torch.equal(out[:, :, :2], torch.zeros_like(out[:, :, :2]))
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, causal=True, padding=padding),
                               atol=F64_ATOL, rtol=0)


def test_float32_inputs_stay_float32_and_close_to_float64():
    q, k, v = _qkv(11, 2, 2, 4, 6, 8, dtype=torch.float32)
    padding = torch.tensor([[False] * 6, [False, False, True, False, False, False]])
    out = attention(q, k, v, causal=True, key_padding_mask=padding)
    assert out.dtype == torch.float32
    # float32 has 2^-24 ~ 6e-8 relative precision; scores of size ~3 and sums over 6 keys
    # accumulate a few ulps, so 1e-5 absolute on O(1) outputs is generous but still tight
    # enough that any masking or scaling mistake (errors of order 0.1) cannot hide.
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, causal=True, padding=padding),
                               atol=1e-5, rtol=0)


def test_attention_causal_more_queries_than_keys_raises():
    q, k, v = _qkv(12, 1, 1, 5, 3, 2)
    with pytest.raises(ValueError):
        attention(q, k, v, causal=True)


def test_more_queries_than_keys_is_fine_without_causal():
    # The Lq <= Lk rule belongs to the causal mask only.
    q, k, v = _qkv(13, 2, 1, 5, 3, 4)
    out = attention(q, k, v)
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v), atol=F64_ATOL, rtol=0)
    padding = torch.tensor([[False, True, False], [True, True, True]])
    out = attention(q, k, v, key_padding_mask=padding)
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, padding=padding), atol=F64_ATOL, rtol=0)


@pytest.mark.parametrize("causal", [False, True])
def test_size_one_dimensions(causal):
    # B = H = Lq = Lk = D = 1: a single allowed key gets weight exactly 1.
    q, k, v = _qkv(14, 1, 1, 1, 1, 1, value_dim=3)
    out = attention(q, k, v, causal=causal)
    assert tuple(out.shape) == (1, 1, 1, 3)
    np.testing.assert_allclose(out.numpy(), v.numpy(), atol=F64_ATOL, rtol=0)
    out = attention(q, k, v, causal=causal, key_padding_mask=torch.tensor([[True]]))
    assert torch.equal(out, torch.zeros(1, 1, 1, 3, dtype=torch.float64))


def test_disallowed_keys_contribute_nothing_even_with_huge_scores():
    # Padded and future keys get scores near +1e5: an additive "large negative" mask such as
    # -1e4 would let them win; a disallowed key must take no part whatever its score.
    q, k, v = _qkv(15, 2, 2, 3, 6, 4)
    q = q.abs()
    padding = torch.tensor([[False, True, False, False, False, False],
                            [False, False, False, True, False, False]])
    k2, v2 = k.clone(), v.clone()
    k2[0, :, 1], k2[1, :, 3] = 1e5, 1e5        # padded keys
    k2[:, :, 5] = 1e5                          # the last key: in the future of queries 0 and 1
    v2[0, :, 1], v2[1, :, 3] = 1e3, 1e3
    out = attention(q, k2, v2, causal=True, key_padding_mask=padding)
    expected = _expected(q, k2, v2, causal=True, padding=padding)
    # Query 2 sees key 5 (score ~1e5, weight ~1): O(1) outputs, float64 rounding ~1e-16.
    np.testing.assert_allclose(out.numpy(), expected, atol=F64_ATOL, rtol=0)


def test_causal_mask_added_to_scores_gives_causal_attention():
    # The additive mask is meant to be added to the scores before the softmax.
    q, k, v = _qkv(16, 1, 1, 3, 5, 4)
    scores = q @ k.transpose(-2, -1) / 2.0 + causal_mask(3, 5, dtype=torch.float64)
    manual = torch.softmax(scores, dim=-1) @ v
    np.testing.assert_allclose(manual.numpy(), _expected(q, k, v, causal=True), atol=F64_ATOL, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
def test_inputs_are_not_modified(dtype):
    q, k, v = _qkv(17, 2, 2, 3, 5, 4, dtype=dtype)
    padding = torch.tensor([[False, False, True, False, False], [True, False, False, False, False]])
    # whether attention() modifies a tensor in place is a fact about the solution's process
    # (arguments reach it as copies): observe_call calls it there and hands the tensors back
    seen = observe_call("attention", "attention", q, k, v, causal=True, key_padding_mask=padding)
    after = {"q": seen.args[0], "k": seen.args[1], "v": seen.args[2], "key_padding_mask": seen.kwargs["key_padding_mask"]}
    for name, before in (("q", q), ("k", k), ("v", v), ("key_padding_mask", padding)):
        assert torch.equal(after[name], before), f"attention() modified {name}"
    np.testing.assert_allclose(seen.result.double().numpy(), _expected(q, k, v, causal=True, padding=padding),
                               atol=1e-5, rtol=0)  # float32 case: see test_float32_inputs_stay_float32...


def test_arguments_can_be_passed_by_their_names():
    # The signatures name every parameter: callers may pass each one by name.
    mask = causal_mask(num_queries=2, num_keys=4, dtype=torch.float64)
    np.testing.assert_array_equal(mask.numpy(), _mask_by_loop(2, 4))
    q, k, v = _qkv(18, 1, 2, 2, 4, 3)
    padding = torch.tensor([[False, True, False, False]])
    out = attention(q=q, k=k, v=v, causal=True, key_padding_mask=padding)
    np.testing.assert_allclose(out.numpy(), _expected(q, k, v, causal=True, padding=padding),
                               atol=F64_ATOL, rtol=0)
