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

import _attention_oracle as oracle

F64 = dict(atol=1e-10, rtol=1e-8)  # see module docstring

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
    inputs = [t.clone() for t in (q, k, v, o, lse, do)]
    got = attention_backward(q, k, v, o, lse, do, bs)
    for name, g, want in zip(("dq", "dk", "dv"), got, (dq, dk, dv)):
        torch.testing.assert_close(g, want, **F64, msg=lambda m: f"{name}: {m}")
    for t, before in zip((q, k, v, o, lse, do), inputs):
        assert torch.equal(t, before), "inputs must not be modified"


def test_full_backward_without_causal_mask():
    q, k, v, do = oracle.make_inputs((2,), 7, 13, 8, 6, seed=30)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=0, causal=False)
    got = attention_backward(q, k, v, o, lse, do, 5, causal=False)
    for name, g, want in zip(("dq", "dk", "dv"), got, (dq, dk, dv)):
        torch.testing.assert_close(g, want, **F64, msg=lambda m: f"{name}: {m}")


def test_float32_inputs_give_float32_gradients():
    q, k, v, do = oracle.make_inputs((2,), 3, 14, 8, 6, seed=40, dtype=torch.float32)
    o, lse, dq, dk, dv = oracle.autograd_attention(q, k, v, do, q_offset=11)
    got = attention_backward(q, k, v, o.float(), lse.float(), do, 4)
    for name, g, want in zip(("dq", "dk", "dv"), got, (dq, dk, dv)):
        assert g.dtype == torch.float32, f"{name} must have the dtype of q (float32)"
        # float32 eps is 1.2e-7; O(1) values summed over <= 14 keys with an exp of
        # O(10) scores keep the error near 1e-6, so 1e-4 leaves ample margin.
        torch.testing.assert_close(g.double(), want, atol=1e-4, rtol=1e-4,
                                   msg=lambda m: f"{name}: {m}")
