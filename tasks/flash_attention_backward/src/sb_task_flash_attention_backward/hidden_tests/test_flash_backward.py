"""Hidden tests for the blockwise attention backward.

Expected values come from _attention_oracle: plain masked softmax attention in
float64, differentiated by torch autograd (never from the reference solution).

Tolerance for float64 inputs: atol 1e-10, rtol 1e-8.  Both sides are float64 with
O(1) entries and sums over at most 24 keys, so roundoff is ~1e-14; every mistake
these tests target changes some gradient entry by far more than 1e-3.
"""
import pytest
import torch

from flash_backward import attention_backward, attention_backward_block
from sb.judge import probe

import _attention_oracle as oracle

# What the driver hands to the block function, and whether an input tensor was modified,
# are facts about live objects in the solution's process: the probe records them there.
PROBE = probe("_probe_flash.py")

F64 = dict(atol=1e-10, rtol=1e-8)  # see module docstring


def _three(result):
    """The (dq, dk, dv) a function returned, materialised: a handle's length and iteration
    need not agree, so the zip loops below must not run over it unmaterialised."""
    result = list(result)
    assert len(result) == 3, f"expected three tensors, got {len(result)}"
    return result


# (batch dims, n_q, n_k, q_offset, block_size): q_offset is the absolute position of
# the first query; keys always start at position 0.
BLOCK_CASES = {
    "prefill": ((2,), 12, 12, 0, 5),
    "decode_one_query": ((2, 2), 1, 17, 16, 6),
    "decode_few_queries": ((3,), 4, 19, 15, 7),
    "chunk_in_the_middle": ((), 6, 16, 5, 4),
}


def _block_results(case, seed):
    batch, n_q, n_k, q_offset, bs = BLOCK_CASES[case]
    q, k, v, do = oracle.make_inputs(batch, n_q, n_k, 8, 6, seed)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset)
    parts = []
    for a, b in oracle.blocks(n_k, bs):
        parts.append((a, b, attention_backward_block(
            q, k[..., a:b, :], v[..., a:b, :], o, lse, do, q_offset, a)))
    return parts, (dq, dk, dv)


@pytest.mark.parametrize("case", list(BLOCK_CASES))
def test_block_dv_matches_autograd(case):
    parts, (_, _, dv) = _block_results(case, seed=1)
    for a, b, (_, _, dv_block) in parts:
        torch.testing.assert_close(dv_block, dv[..., a:b, :], **F64,
                                   msg=lambda m: f"dv for keys {a}:{b}: {m}")


@pytest.mark.parametrize("case", list(BLOCK_CASES))
def test_block_dk_matches_autograd(case):
    parts, (_, dk, _) = _block_results(case, seed=2)
    for a, b, (_, dk_block, _) in parts:
        torch.testing.assert_close(dk_block, dk[..., a:b, :], **F64,
                                   msg=lambda m: f"dk for keys {a}:{b}: {m}")


@pytest.mark.parametrize("case", list(BLOCK_CASES))
def test_block_dq_parts_sum_to_autograd(case):
    parts, (dq, _, _) = _block_results(case, seed=3)
    total = sum(dq_part for _, _, (dq_part, _, _) in parts)
    torch.testing.assert_close(total, dq, **F64,
                               msg=lambda m: f"sum over key blocks of dq: {m}")


def test_block_entirely_in_the_future_gives_zero_gradients():
    q, k, v, do = oracle.make_inputs((2,), 4, 16, 8, 6, seed=4)
    o, lse, *_ = oracle.autograd_attention(q, k, v, do, q_offset=2)
    # Queries at positions 2..5 cannot see keys 8..15.
    dq_part, dk_block, dv_block = attention_backward_block(
        q, k[..., 8:, :], v[..., 8:, :], o, lse, do, 2, 8)
    for name, t in (("dq", dq_part), ("dk", dk_block), ("dv", dv_block)):
        assert torch.equal(t, torch.zeros_like(t)), f"{name} of a fully masked block must be 0"


def test_block_returns_shapes_of_its_inputs():
    q, k, v, do = oracle.make_inputs((2, 3), 5, 9, 8, 6, seed=5)
    o, lse, *_ = oracle.autograd_attention(q, k, v, do, q_offset=4)
    dq_part, dk_block, dv_block = attention_backward_block(
        q, k[..., 3:7, :], v[..., 3:7, :], o, lse, do, 4, 3)
    assert dq_part.shape == q.shape
    assert dk_block.shape == (2, 3, 4, 8)
    assert dv_block.shape == (2, 3, 4, 6)


# (batch dims, n_q, n_k, block_size)
FULL_CASES = {
    "prefill_even_blocks": ((2,), 16, 16, 4),
    "prefill_ragged_last_block": ((2,), 11, 11, 4),
    "decode_one_query": ((2, 2), 1, 21, 8),
    "decode_ragged": ((), 5, 23, 6),
    "one_block_covers_all": ((1,), 6, 10, 32),
}


@pytest.mark.parametrize("case", list(FULL_CASES))
def test_full_backward_matches_autograd(case):
    batch, n_q, n_k, bs = FULL_CASES[case]
    q, k, v, do = oracle.make_inputs(batch, n_q, n_k, 8, 6, seed=10 + n_k)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=n_k - n_q)
    got = _three(attention_backward(q, k, v, o, lse, do, bs))
    for name, g, want in zip(("dq", "dk", "dv"), got, (dq, dk, dv)):
        torch.testing.assert_close(g, want, **F64, msg=lambda m: f"{name}: {m}")


def test_full_backward_without_causal_mask():
    q, k, v, do = oracle.make_inputs((2,), 7, 13, 8, 6, seed=30)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=0, causal=False)
    got = _three(attention_backward(q, k, v, o, lse, do, 5, causal=False))
    for name, g, want in zip(("dq", "dk", "dv"), got, (dq, dk, dv)):
        torch.testing.assert_close(g, want, **F64, msg=lambda m: f"{name}: {m}")


def test_float32_inputs_give_float32_gradients():
    q, k, v, do = oracle.make_inputs((2,), 3, 14, 8, 6, seed=40, dtype=torch.float32)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=11)
    got = _three(attention_backward(q, k, v, o.float(), lse.float(), do, 4))
    for name, g, want in zip(("dq", "dk", "dv"), got, (dq, dk, dv)):
        assert g.dtype == torch.float32, f"{name} must have the dtype of q (float32)"
        # float32 eps is 1.2e-7; O(1) values summed over <= 14 keys with an exp of
        # O(10) scores keep the error near 1e-6, so 1e-4 leaves ample margin.
        torch.testing.assert_close(g.double(), want, atol=1e-4, rtol=1e-4,
                                   msg=lambda m: f"{name}: {m}")


# ---------------------------------------------------------------- more of the block contract


def test_block_without_causal_ignores_offsets():
    # causal=False: every query sees every key, whatever q_offset and k_offset say.
    q, k, v, do = oracle.make_inputs((2,), 5, 12, 8, 6, seed=50)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=0, causal=False)
    total = torch.zeros_like(q)
    for a, b in oracle.blocks(12, 5):
        # offsets that, were they used, would hide most keys from most queries
        dq_part, dk_block, dv_block = attention_backward_block(
            q, k[..., a:b, :], v[..., a:b, :], o, lse, do, 0, 100 + a, causal=False)
        torch.testing.assert_close(dk_block, dk[..., a:b, :], **F64)
        torch.testing.assert_close(dv_block, dv[..., a:b, :], **F64)
        total = total + dq_part
    torch.testing.assert_close(total, dq, **F64)


def test_block_float32_gives_float32():
    q, k, v, do = oracle.make_inputs((3,), 4, 10, 8, 6, seed=51, dtype=torch.float32)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=6)
    total = None
    for a, b in oracle.blocks(10, 3):
        parts = _three(attention_backward_block(q, k[..., a:b, :], v[..., a:b, :], o.float(), lse.float(), do, 6, a))
        for name, got, want in zip(("dq", "dk", "dv"), parts, (None, dk[..., a:b, :], dv[..., a:b, :])):
            assert got.dtype == torch.float32, f"{name} must have the dtype of the inputs (float32)"
            if want is not None:
                # float32 roundoff (eps 1.2e-7) on O(1) terms over <= 10 keys: ~1e-6; 1e-4 is ample.
                torch.testing.assert_close(got.double(), want, atol=1e-4, rtol=1e-4)
        total = parts[0] if total is None else total + parts[0]
    torch.testing.assert_close(total.double(), dq, atol=1e-4, rtol=1e-4)  # same reasoning as above


def test_block_of_one_key_and_one_query_without_batch_dims():
    # No leading dims, M = 1, B = 1, d = 3 (so 1/sqrt(d) is irrational), e = 5 != d.
    q, k, v, do = oracle.make_inputs((), 1, 4, 3, 5, seed=52)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=3)
    total = torch.zeros_like(q)
    for a in range(4):
        dq_part, dk_block, dv_block = attention_backward_block(
            q, k[a:a + 1], v[a:a + 1], o, lse, do, 3, a)
        assert dk_block.shape == (1, 3) and dv_block.shape == (1, 5) and dq_part.shape == (1, 3)
        torch.testing.assert_close(dk_block, dk[a:a + 1], **F64)
        torch.testing.assert_close(dv_block, dv[a:a + 1], **F64)
        total = total + dq_part
    torch.testing.assert_close(total, dq, **F64)


def _large_score_inputs(seed):
    """Scores near 800 (exp overflows float64 above 709) with an O(1) spread between keys:
    one shared direction carries the large common part, the rest is ordinary noise."""
    q, k, v, do = oracle.make_inputs((2,), 4, 9, 4, 7, seed=seed)
    q[..., 0], k[..., 0] = 40.0, 40.0   # 40 * 40 / sqrt(4) = 800 added to every score
    return q, k, v, do


def test_scores_far_beyond_exp_overflow():
    q, k, v, do = _large_score_inputs(53)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=5)
    assert bool((lse > 750).all())
    got = _three(attention_backward(q, k, v, o, lse, do, 4))
    # Scores of ~800 carry an absolute rounding of ~800 * 1.1e-16 ~ 1e-13 into exp(S - lse):
    # far inside rtol 1e-8 / atol 1e-10 for O(1)..O(100) gradients.
    for name, g, want in zip(("dq", "dk", "dv"), got, (dq, dk, dv)):
        assert not torch.isnan(g).any(), f"{name} has NaN"
        torch.testing.assert_close(g, want, **F64, msg=lambda m: f"{name}: {m}")


# ---------------------------------------------------------------- the driver


@pytest.mark.parametrize("block_size", [1, 3, 40])
def test_driver_block_sizes_one_and_beyond_n(block_size):
    q, k, v, do = oracle.make_inputs((2,), 3, 7, 8, 6, seed=60 + block_size)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=4)
    got = _three(attention_backward(q, k, v, o, lse, do, block_size))
    for name, g, want in zip(("dq", "dk", "dv"), got, (dq, dk, dv)):
        torch.testing.assert_close(g, want, **F64, msg=lambda m: f"{name}: {m}")


def test_driver_single_query_single_key_without_batch_dims():
    q, k, v, do = oracle.make_inputs((), 1, 1, 3, 2, seed=64)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=0)
    got = _three(attention_backward(q, k, v, o, lse, do, 4))
    for name, g, want in zip(("dq", "dk", "dv"), got, (dq, dk, dv)):
        assert g.shape == want.shape
        torch.testing.assert_close(g, want, **F64, msg=lambda m: f"{name}: {m}")


DRIVER_CALLS = {
    "decode_ragged_causal": ((2,), 3, 11, 4, True),
    "prefill_no_mask": ((), 6, 6, 4, False),
    "one_block": ((1, 2), 2, 5, 8, True),
}


@pytest.mark.parametrize("case", list(DRIVER_CALLS))
def test_driver_calls_the_block_function_once_per_block(case):
    batch, n_q, n_k, bs, causal = DRIVER_CALLS[case]
    q, k, v, do = oracle.make_inputs(batch, n_q, n_k, 8, 6, seed=70)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=n_k - n_q, causal=causal)
    record = PROBE.record_driver([q, k, v, o, lse, do, bs], {"causal": causal})
    calls = record["calls"]
    spans = oracle.blocks(n_k, bs)
    assert len(calls) == len(spans), f"{len(calls)} calls to attention_backward_block for {len(spans)} blocks"
    # The blocks partition the keys; the order the driver visits them in is not prescribed.
    calls = sorted(calls, key=lambda call: [a for a, b in spans if torch.equal(call["k_block"], k[..., a:b, :])])
    for call, (a, b) in zip(calls, spans):
        assert call["causal"] is causal
        if causal:  # without the mask the offsets do not matter
            assert call["k_offset"] == a and call["q_offset"] == n_k - n_q
            assert call["offset_types"] == ["int", "int"], "offsets must be Python ints"
        assert torch.equal(call["k_block"], k[..., a:b, :]) and torch.equal(call["v_block"], v[..., a:b, :])
        for name, want in (("q", q), ("o", o), ("lse", lse), ("do", do)):
            assert torch.equal(call[name], want), f"the driver must hand every block the whole {name}"
    for name, g, want in zip(("dq", "dk", "dv"), record["result"], (dq, dk, dv)):
        torch.testing.assert_close(g, want, **F64, msg=lambda m: f"{name}: {m}")


# ---------------------------------------------------------------- no whole row of weights

# (batch dims, n_q, n_k, d, e, block_size, causal): the sequence is many blocks long, and
# n_q, d, e and the batch sizes are distinct numbers, so a tensor's shape tells its axes apart.
MEMORY_CASES = {
    "decode_causal": ((2,), 3, 96, 4, 5, 12, True),
    "no_batch_no_mask": ((), 2, 80, 4, 5, 10, False),
}
FLOAT_DTYPES = {str(t) for t in (torch.float16, torch.bfloat16, torch.float32, torch.float64)}


@pytest.mark.parametrize("case", list(MEMORY_CASES))
def test_no_step_holds_a_whole_row_of_attention_weights(case):
    # The probe lists the shape of every tensor an ATen operation produced while the driver
    # ran (the block calls and any autograd included); the check is made here.
    batch, n_q, n_k, d, e, bs, causal = MEMORY_CASES[case]
    q, k, v, do = oracle.make_inputs(batch, n_q, n_k, d, e, seed=90)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=n_k - n_q, causal=causal)
    record = PROBE.record_tensor_shapes([q, k, v, o, lse, do, bs], {"causal": causal})
    # Sums over at most 96 keys of O(1) float64 terms: roundoff ~1e-14, inside F64.
    for name, g, want in zip(("dq", "dk", "dv"), _three(record["result"]), (dq, dk, dv)):
        torch.testing.assert_close(g, want, **F64, msg=lambda m: f"{name}: {m}")
    # The fewest keys any query sees: a weights tensor with a dimension this long holds at
    # least one query's whole row. The blocks are far shorter.
    row = n_k - n_q + 1 if causal else n_k
    assert bs < row
    tensors = [(op, dtype, tuple(shape)) for op, dtype, shape in list(record["tensors"])]
    assert any(dtype in FLOAT_DTYPES for _, dtype, _ in tensors), "the probe saw no floating-point operation"

    def key_side(shape):
        # k, v, dk, dv and their copies or transposes: a d- or e-wide axis and no query axis.
        return (d in shape or e in shape) and n_q not in shape

    whole_rows = [(op, dtype, shape) for op, dtype, shape in tensors
                  if dtype in FLOAT_DTYPES and max(shape, default=0) >= row and not key_side(shape)]
    assert not whole_rows, (
        f"with {n_q} queries, {n_k} keys and blocks of {bs}, these tensors span a whole row "
        f"of {row}+ keys: {whole_rows[:5]}")


# ---------------------------------------------------------------- inputs are never modified


def test_inputs_are_not_modified():
    q, k, v, do = oracle.make_inputs((2,), 4, 10, 8, 6, seed=80)
    o, lse, *_ = oracle.autograd_attention(q, k, v, do, q_offset=6)
    for name, args in (("attention_backward", [q, k, v, o, lse, do, 3]),
                       ("attention_backward_block", [q, k[..., 2:7, :], v[..., 2:7, :], o, lse, do, 6, 2])):
        before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        seen = PROBE.call_and_return_inputs(name, args, {})
        for position, (after, want) in enumerate(zip(seen["args_after"], before)):
            if isinstance(want, torch.Tensor):
                assert after.shape == want.shape and torch.equal(after, want), \
                    f"{name} modified its argument {position}"
