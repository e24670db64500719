"""Hidden tests for packed variable-length attention (forward and hand-written backward).

Every expected value comes from _oracle: dense masked attention over the whole packed
layout in float64, differentiated by torch autograd, with the visibility of every
(query row, key row) pair written down by Python loops from the prompt's definition.
Nothing is compared with the reference solution.

Tolerances. float64: atol 1e-10, rtol 1e-8. Both sides are float64 with O(1) inputs and
sums over at most a few dozen terms, so roundoff is ~1e-14; every mistake these tests
aim at moves some entry by more than 1e-3. float32: atol 1e-4, rtol 1e-4. The solution
works in float32 (eps 1.2e-7) and is handed lse rounded to float32 (|lse| < 20, so
exp(s - lse) carries a relative error ~3e-6); sums over at most a dozen keys and four
heads keep the total near 1e-5, a tenth of the bound.
"""
import ast

import pytest
import torch

from sb.judge import solution_source
from sb.source_checks import module_uses
from varlen_attention import varlen_attention_backward, varlen_attention_forward

import _oracle as oracle

F64 = dict(atol=1e-10, rtol=1e-8)  # see the module docstring
F32 = dict(atol=1e-4, rtol=1e-4)  # see the module docstring

# name: (lens_q, lens_k, n_heads, n_kv, d, dv, scale, causal, window)
CASES = {
    "prefill_causal": ([5, 3, 7], [5, 3, 7], 4, 2, 8, 6, 0.35, True, None),
    "decode_with_cache": ([1, 3, 2], [9, 6, 11], 6, 2, 8, 5, 0.3, True, None),
    "more_queries_than_keys": ([6, 4], [3, 1], 4, 1, 4, 3, 0.5, True, None),
    "sliding_window": ([7, 2, 9], [7, 8, 9], 4, 2, 5, 4, 0.4, True, 3),
    "window_of_one": ([4, 5], [6, 5], 3, 3, 4, 2, 0.6, True, 1),
    "window_without_causal": ([5, 3, 6], [5, 8, 4], 6, 3, 4, 5, 0.45, False, 2),
    "empty_sequences": ([0, 3, 2, 0, 4], [4, 0, 5, 0, 4], 4, 2, 6, 4, 0.4, True, None),
    "no_mask_gqa": ([3, 6], [8, 6], 8, 2, 4, 6, 0.5, False, None),
}


def _unpack(case):
    lens_q, lens_k, n_heads, n_kv, d, dv, scale, causal, window = case
    return dict(lens_q=lens_q, lens_k=lens_k, n_heads=n_heads, n_kv=n_kv, d=d, dv=dv,
                scale=scale, causal=causal, window=window)


class Problem:
    """One packing with its inputs and the oracle's answers (all float64)."""

    def __init__(self, spec, seed, dtype=torch.float64):
        self.spec = spec
        self.cu_q, self.cu_k = oracle.cu(spec["lens_q"]), oracle.cu(spec["lens_k"])
        self.q, self.k, self.v, self.dout = oracle.make_inputs(
            spec["lens_q"], spec["lens_k"], spec["n_heads"], spec["n_kv"], spec["d"], spec["dv"], seed, dtype)
        self.dtype = dtype
        self.out, self.lse, self.dq, self.dk, self.dv = oracle.attention(
            self.q, self.k, self.v, self.dout, self.cu_q, self.cu_k,
            spec["scale"], spec["causal"], spec["window"])

    @property
    def offsets(self):
        return (torch.tensor(self.cu_q, dtype=torch.int32), torch.tensor(self.cu_k, dtype=torch.int32))

    @property
    def mask_kwargs(self):
        """Unmasked problems rely on the defaults (causal=False, window=None)."""
        if not self.spec["causal"] and self.spec["window"] is None:
            return {}
        return dict(causal=self.spec["causal"], window=self.spec["window"])

    def forward(self):
        got = list(varlen_attention_forward(self.q, self.k, self.v, *self.offsets,
                                            self.spec["scale"], **self.mask_kwargs))
        assert len(got) == 2, f"the forward returns (out, lse), got {len(got)} values"
        return got

    def backward(self, start=0, stop=None):
        """The solution's backward over packed key rows start..stop-1."""
        whole = start == 0 and stop is None  # then k_start is left at its default, 0
        stop = self.k.shape[0] if stop is None else stop
        out, lse = self.out.to(self.dtype), self.lse.to(self.dtype)
        where = {} if whole else {"k_start": start}
        got = list(varlen_attention_backward(
            self.q, self.k[start:stop], self.v[start:stop], out, lse, self.dout, *self.offsets,
            self.spec["scale"], **self.mask_kwargs, **where))
        assert len(got) == 3, f"the backward returns (dq, dk, dv), got {len(got)} values"
        return got

    def backward_in_slices(self, cuts):
        """Sum of dq over the slices, and dk, dv reassembled from them."""
        dq = torch.zeros(self.q.shape, dtype=torch.float64)
        dk_parts, dv_parts = [], []
        for a, b in cuts:
            dq_part, dk_part, dv_part = self.backward(a, b)
            self.check_dtypes(dq_part, dk_part, dv_part)
            assert dq_part.shape == self.q.shape, f"dq share for keys {a}:{b}: shape {tuple(dq_part.shape)}"
            assert dk_part.shape == (b - a, *self.k.shape[1:]), f"dk for keys {a}:{b}: shape {tuple(dk_part.shape)}"
            assert dv_part.shape == (b - a, *self.v.shape[1:]), f"dv for keys {a}:{b}: shape {tuple(dv_part.shape)}"
            dq += dq_part.double()
            dk_parts.append(dk_part.double())
            dv_parts.append(dv_part.double())
        return dq, torch.cat(dk_parts), torch.cat(dv_parts)

    def check_dtypes(self, *tensors):
        for t in tensors:
            assert t.dtype == self.dtype, f"expected {self.dtype} results, got {t.dtype}"

    def tolerance(self):
        return F64 if self.dtype == torch.float64 else F32


def _close(name, got, want, tol):
    assert not torch.isnan(got).any(), f"{name} has NaN entries"
    torch.testing.assert_close(got.double(), want, **tol, msg=lambda m: f"{name}: {m}")


def check_forward(problem):
    out, lse = problem.forward()
    problem.check_dtypes(out, lse)
    total_q, n_heads = problem.q.shape[:2]
    assert out.shape == (total_q, n_heads, problem.v.shape[2]), f"out shape {tuple(out.shape)}"
    assert lse.shape == (n_heads, total_q), f"lse must be (H, total_q), got {tuple(lse.shape)}"
    _close("out", out, problem.out, problem.tolerance())
    _close("lse", lse, problem.lse, problem.tolerance())


def check_whole_backward(problem):
    dq, dk, dv = problem.backward()
    problem.check_dtypes(dq, dk, dv)
    for name, got, want in (("dq", dq, problem.dq), ("dk", dk, problem.dk), ("dv", dv, problem.dv)):
        assert got.shape == want.shape, f"{name} shape {tuple(got.shape)}, expected {tuple(want.shape)}"
        _close(name, got, want, problem.tolerance())


def check_sliced_backward(problem, cuts):
    dq, dk, dv = problem.backward_in_slices(cuts)
    tol = problem.tolerance()
    _close(f"dq summed over key slices {cuts}", dq, problem.dq, tol)
    _close(f"dk assembled from key slices {cuts}", dk, problem.dk, tol)
    _close(f"dv assembled from key slices {cuts}", dv, problem.dv, tol)


# ---------------------------------------------------------------- named packings


@pytest.mark.parametrize("case", list(CASES))
def test_forward_matches_dense_oracle(case):
    check_forward(Problem(_unpack(CASES[case]), seed=1))


@pytest.mark.parametrize("case", list(CASES))
def test_backward_over_all_keys_matches_autograd(case):
    check_whole_backward(Problem(_unpack(CASES[case]), seed=2))


@pytest.mark.parametrize("case", list(CASES))
def test_backward_over_key_slices_matches_autograd(case):
    problem = Problem(_unpack(CASES[case]), seed=3)
    check_sliced_backward(problem, oracle.random_partition(problem.k.shape[0], seed=3, max_len=4))


@pytest.mark.parametrize("case", ["decode_with_cache", "sliding_window", "empty_sequences"])
def test_backward_over_single_key_rows(case):
    problem = Problem(_unpack(CASES[case]), seed=4)
    check_sliced_backward(problem, [(a, a + 1) for a in range(problem.k.shape[0])])


def test_key_slice_straddles_several_sequences():
    # Packed keys: seq0 rows 0..5, seq1 empty, seq2 rows 6..9, seq3 rows 10..16. The middle
    # slice 4..12 holds the tail of seq0, all of seq2 and the head of seq3.
    spec = _unpack(([2, 3, 4, 3], [6, 0, 4, 7], 4, 2, 5, 3, 0.4, True, 4))
    problem = Problem(spec, seed=5)
    check_sliced_backward(problem, [(0, 4), (4, 12), (12, 17)])


# ---------------------------------------------------------------- rows that see no key


def test_rows_that_see_no_key_give_zero_output_and_minus_inf_lse():
    # seq0: 5 queries, 2 keys, causal -> the first 3 queries sit before every key;
    # seq1: 2 queries and no key at all; seq2: an ordinary decode row.
    spec = _unpack(([5, 2, 1], [2, 0, 4], 4, 2, 4, 3, 0.5, True, None))
    problem = Problem(spec, seed=6)
    out, lse = problem.forward()
    blind = [0, 1, 2, 5, 6]
    assert torch.equal(out[blind], torch.zeros_like(out[blind])), "a row that sees no key has output 0"
    assert bool(torch.isneginf(lse[:, blind]).all()), "a row that sees no key has lse -inf"
    check_forward(problem)


def test_rows_that_see_no_key_get_zero_gradients():
    spec = _unpack(([5, 2, 1], [2, 0, 4], 4, 2, 4, 3, 0.5, True, None))
    problem = Problem(spec, seed=7)
    blind = [0, 1, 2, 5, 6]
    for cuts in ([(0, 6)], [(0, 1), (1, 3), (3, 6)]):
        dq, dk, dv = problem.backward_in_slices(cuts)
        assert not torch.isnan(dq).any() and not torch.isnan(dk).any() and not torch.isnan(dv).any(), \
            f"NaN in the gradients over key slices {cuts}"
        assert torch.equal(dq[blind], torch.zeros_like(dq[blind])), "dq of a row that sees no key is 0"
        check_sliced_backward(problem, cuts)


# ---------------------------------------------------------------- random packings (property)


@pytest.mark.parametrize("seed", range(16))
def test_random_packings_float64(seed):
    problem = Problem(oracle.random_case(seed), seed=100 + seed)
    check_forward(problem)
    check_whole_backward(problem)
    check_sliced_backward(problem, oracle.random_partition(problem.k.shape[0], seed=200 + seed))


@pytest.mark.parametrize("seed", range(6))
def test_random_packings_float32(seed):
    problem = Problem(oracle.random_case(50 + seed), seed=300 + seed, dtype=torch.float32)
    check_forward(problem)
    check_whole_backward(problem)
    check_sliced_backward(problem, oracle.random_partition(problem.k.shape[0], seed=400 + seed))


# ---------------------------------------------------------------- large scores


# dtype: (a, b). Setting q[..., 0] = a and k[..., 0] = b adds a * b * scale to every score:
# 900 overflows float64's exp (above 709), 95 overflows float32's (above 88.7); the spread
# between keys stays O(1). The key side is kept small (b = 2.5) because dq's and dk's
# first components are sums of b * dS and a * dS whose terms nearly cancel: rounding
# in the scores (|s| * eps) is multiplied by them. float64: ~900 * 1.1e-16 * 360, about
# 4e-11 absolute, inside F64. float32: ~95 * 6e-8 * a few ops gives exp(s - lse) a relative
# error near 2e-5, and the cancelling sums reach about a third of F32's 1e-4 (measured).
OVERFLOW = {"float64": (360.0, 2.5), "float32": (38.0, 2.5)}


@pytest.mark.parametrize("dtype", list(OVERFLOW))
def test_scores_far_beyond_exp_overflow(dtype):
    q_part, k_part = OVERFLOW[dtype]
    spec = _unpack(([3, 2], [6, 5], 4, 2, 4, 3, 1.0, True, None))
    problem = Problem(spec, seed=8, dtype=getattr(torch, dtype))
    problem.q[..., 0] = q_part
    problem.k[..., 0] = k_part
    problem = _with_inputs(problem)
    assert bool((problem.lse > q_part * k_part - 30).all())
    check_forward(problem)
    check_sliced_backward(problem, [(0, 4), (4, 11)])


def _with_inputs(problem):
    """Recompute the oracle after the test edited the inputs in place."""
    spec = problem.spec
    problem.out, problem.lse, problem.dq, problem.dk, problem.dv = oracle.attention(
        problem.q, problem.k, problem.v, problem.dout, problem.cu_q, problem.cu_k,
        spec["scale"], spec["causal"], spec["window"])
    return problem


# ---------------------------------------------------------------- written by hand

_AUTOGRAD_ATTRIBUTES = {"backward", "grad", "requires_grad", "requires_grad_", "enable_grad",
                        "set_grad_enabled", "vjp", "jvp"}


def test_backward_is_written_without_autograd():
    # The source check alone would pass an empty stub: the backward must also be right.
    check_sliced_backward(Problem(_unpack(CASES["decode_with_cache"]), seed=9), [(0, 13), (13, 26)])
    source = solution_source("varlen_attention.py")
    uses = []
    for module in ("torch.autograd", "torch.func", "functorch"):
        uses += module_uses(source, module, "varlen_attention.py")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in _AUTOGRAD_ATTRIBUTES:
            uses.append(f"varlen_attention.py:{node.lineno}: .{node.attr}")
    assert not uses, "the backward must not use autograd:\n" + "\n".join(uses)
