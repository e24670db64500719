import numpy as np
import pytest
import torch

from kv_attention import CachedSelfAttention, apply_rotary

import _naive

D_MODEL = 32
N_HEADS = 4
HEAD_DIM = D_MODEL // N_HEADS
BATCH = 2
LENGTH = 10

# float64 layer against the float64 numpy model: both sides round at ~1e-16 relative and
# the outputs are O(10), so 1e-9 leaves five orders of margin while any wrong position,
# mask or scale moves outputs by O(0.1) or more.
F64 = dict(rtol=1e-9, atol=1e-9)


def make_layer(seed, dtype=torch.float64, rope_base=None):
    torch.manual_seed(seed)
    kwargs = {} if rope_base is None else {"rope_base": rope_base}
    layer = CachedSelfAttention(D_MODEL, N_HEADS, **kwargs)
    gen = torch.Generator().manual_seed(seed + 1000)
    with torch.no_grad():
        # Larger than the default init so attention is sharp and every mistake is visible.
        for lin in (layer.q_proj, layer.k_proj, layer.v_proj, layer.o_proj):
            lin.weight.copy_(0.3 * torch.randn(D_MODEL, D_MODEL, generator=gen))
    return layer.to(dtype).eval()


def make_input(seed, length=LENGTH, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(BATCH, length, D_MODEL, generator=gen).to(dtype)


def naive(layer, x, base=10000.0):
    weights = {name: getattr(layer, f"{name}_proj").weight.detach().double().numpy()
               for name in "qkvo"}
    return _naive.full_forward(weights, x.detach().double().numpy(), N_HEADS, base)


def run_chunks(layer, x, sizes, cache=None):
    outs, start = [], 0
    with torch.no_grad():
        for size in sizes:
            out, cache = layer(x[:, start:start + size], cache)
            outs.append(out)
            start += size
    return torch.cat(outs, dim=1), cache


def assert_close(actual, expected, **tol):
    np.testing.assert_allclose(actual.detach().double().numpy(), expected, **tol)


def test_apply_rotary_matches_complex_rotation():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 6, 8, generator=gen, dtype=torch.float64)
    positions = torch.tensor([0, 1, 5, 17, 2, 300])
    expected = _naive.rotate(x.numpy(), positions.numpy(), 10000.0)
    # Pure float64 elementwise rotation on both sides: 1e-12 is rounding only.
    assert_close(apply_rotary(x, positions), expected, rtol=1e-12, atol=1e-12)
    assert_close(apply_rotary(x, positions, base=50.0),
                 _naive.rotate(x.numpy(), positions.numpy(), 50.0), rtol=1e-12, atol=1e-12)


def test_full_forward_matches_independent_float64():
    layer, x = make_layer(1), make_input(2)
    expected_out, expected_k, expected_v = naive(layer, x)
    with torch.no_grad():
        out, cache = layer(x)
    assert out.shape == (BATCH, LENGTH, D_MODEL)
    assert_close(out, expected_out, **F64)
    assert cache["k"].shape == (BATCH, N_HEADS, LENGTH, HEAD_DIM)
    assert_close(cache["k"], expected_k, **F64)
    assert_close(cache["v"], expected_v, **F64)


def test_rope_base_is_honoured():
    layer, x = make_layer(3, rope_base=64.0), make_input(4)
    with torch.no_grad():
        out, _ = layer(x)
    assert_close(out, naive(layer, x, base=64.0)[0], **F64)


def test_float32_layer_keeps_dtype_and_matches_float64():
    layer, x = make_layer(5, torch.float32), make_input(6, dtype=torch.float32)
    with torch.no_grad():
        out, cache = layer(x)
        step, cache = layer(make_input(7, length=2, dtype=torch.float32), cache)
    assert out.dtype == torch.float32 and step.dtype == torch.float32
    assert cache["k"].dtype == torch.float32 and cache["v"].dtype == torch.float32
    # float32 rounding (~6e-8 relative) through the projections, softmax and o_proj
    # leaves ~2e-6 absolute error on these O(10) outputs; 2e-4 is 100x that margin and
    # still far below the O(0.1) changes a wrong position, mask or scale makes.
    assert_close(out, naive(layer, x)[0], rtol=2e-4, atol=2e-4)


def test_token_by_token_decoding_equals_full_forward():
    layer, x = make_layer(8), make_input(9)
    with torch.no_grad():
        full, full_cache = layer(x)
    stepped, cache = run_chunks(layer, x, [1] * LENGTH)
    assert_close(stepped, full.numpy(), **F64)
    assert_close(cache["k"], full_cache["k"].numpy(), **F64)


CHUNKINGS = [(4, 1, 3, 2), (1, 5, 4), (6, 4), (2, 2, 2, 2, 2), (3, 7)]


@pytest.mark.parametrize("sizes", CHUNKINGS, ids=["-".join(map(str, s)) for s in CHUNKINGS])
def test_multi_token_chunks_equal_full_forward(sizes):
    layer, x = make_layer(10), make_input(11)
    with torch.no_grad():
        full, _ = layer(x)
    chunked, cache = run_chunks(layer, x, sizes)
    assert_close(chunked, full.numpy(), **F64)
    assert cache["k"].shape == (BATCH, N_HEADS, LENGTH, HEAD_DIM)


def test_prefill_then_decode_matches_independent_float64():
    layer, x = make_layer(12), make_input(13)
    expected_out, expected_k, expected_v = naive(layer, x)
    decoded, cache = run_chunks(layer, x, [6, 1, 1, 1, 1])
    assert_close(decoded, expected_out, **F64)
    assert_close(cache["k"], expected_k, **F64)
    assert_close(cache["v"], expected_v, **F64)


def test_cache_holds_keys_rotated_at_absolute_positions():
    layer, x = make_layer(14), make_input(15)
    _, expected_k, _ = naive(layer, x)
    _, cache = run_chunks(layer, x, [3, 4, 3])
    assert_close(cache["k"], expected_k, **F64)


def test_incoming_cache_is_not_mutated():
    layer, x = make_layer(16), make_input(17)
    with torch.no_grad():
        _, cache = layer(x[:, :5])
        before = {name: cache[name].clone() for name in ("k", "v")}
        _, new_cache = layer(x[:, 5:8], cache)
    assert new_cache["k"].shape[2] == 8
    for name in ("k", "v"):
        assert cache[name].shape == before[name].shape, f"cache[{name!r}] changed shape"
        assert torch.equal(cache[name], before[name]), f"cache[{name!r}] changed values"


def test_one_cache_feeds_two_continuations():
    layer, x = make_layer(18), make_input(19)
    other = make_input(20, length=3)
    with torch.no_grad():
        _, prefix_cache = layer(x[:, :4])
        first, _ = layer(x[:, 4:7], prefix_cache)
        second, _ = layer(other, prefix_cache)
    assert_close(first, naive(layer, x[:, :7])[0][:, 4:], **F64)
    branch = torch.cat([x[:, :4], other], dim=1)
    assert_close(second, naive(layer, branch)[0][:, 4:], **F64)
