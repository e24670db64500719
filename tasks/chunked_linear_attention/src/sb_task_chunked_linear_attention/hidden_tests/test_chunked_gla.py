"""Hidden tests for chunked gated linear attention.

Every expected value comes from _recurrence: the step-by-step recurrence in numpy
float64, applied to the inputs exactly as given (float32 inputs widened exactly). The
reference solution is never consulted.

Tolerance (the prompt's, per element of o and of final_state):
    |got - exact| <= RTOL * scale + ATOL
where scale is the same recurrence run on |q|, |k|, |v| and |initial_state|: the size
of the terms whose sum makes that element, so cancellation cannot shrink the bound.
    float64: RTOL 1e-8. Roundoff is about 1e-16 per operation over at most a few
             thousand accumulated terms; the mistakes targeted here are O(1) wrong.
    float32: RTOL 1e-3. Float32 arithmetic on exactly known decays errs by about 1e-6 of
             the scale; cumulative log-decays summed within one chunk of at most 64 steps
             (magnitude <= 64 * 40) in float32 err by about 1e-4 of it. A running sum over
             a 4096-step sequence (magnitude up to 1.6e5, spacing of float32 ~0.01)
             errs by percents, which is what the long-sequence test is there to see.
    ATOL 1e-20 in both: every scale in these tests is far above it (each output's own
             step has weight exp(0) = 1; where k = 0 the initial state has decayed over at
             most 21 steps of g >= -1), so it only absorbs underflow.
"""

import numpy as np
import pytest
import torch

from chunked_gla import chunked_gla
from sb.judge import probe

import _recurrence

# Operation counts and tensor sizes are facts about the solution's own process: the
# probe records them there, and the judge checks them against bounds computed here.
PROBE = probe("_probe_ops.py")

RTOL = {torch.float64: 1e-8, torch.float32: 1e-3}  # see module docstring
ATOL = 1e-20                                       # see module docstring
DTYPES = [torch.float64, torch.float32]
DTYPE_IDS = ["float64", "float32"]


def _decays(kind, shape, gen):
    """Log-decays (float64) in [-40, 0] of a named kind."""
    u = torch.rand(shape, generator=gen, dtype=torch.float64)
    if kind == "moderate":
        return -u
    if kind == "none":
        return torch.zeros(shape, dtype=torch.float64)
    if kind == "strong":
        # Half the steps near the floor, half almost free; some exactly -40 or 0.
        pick = torch.rand(shape, generator=gen, dtype=torch.float64)
        g = torch.where(pick < 0.5, -40.0 + 2.0 * u, -0.05 * u)
        g[pick < 0.05] = -40.0
        g[pick > 0.97] = 0.0
        return g
    if kind == "floor":
        return torch.full(shape, -40.0, dtype=torch.float64)
    raise ValueError(kind)


def _make(batch, heads, length, dk, dv, decay_kind, per_channel, with_state, dtype, seed,
          magnitude=1.0):
    gen = torch.Generator().manual_seed(seed)

    def entries(*shape):
        if magnitude == 1.0:
            return torch.randn(shape, generator=gen, dtype=torch.float64)
        return magnitude * (2 * torch.rand(shape, generator=gen, dtype=torch.float64) - 1)

    q = entries(batch, heads, length, dk)
    k = entries(batch, heads, length, dk)
    v = entries(batch, heads, length, dv)
    g_shape = (batch, heads, length, dk) if per_channel else (batch, heads, length)
    g = _decays(decay_kind, g_shape, gen)
    state = entries(batch, heads, dk, dv) if with_state else None
    cast = [t.to(dtype) for t in (q, k, v, g)]
    return cast + [None if state is None else state.to(dtype)]


def _call(q, k, v, g, chunk_size, state):
    if state is None:
        result = chunked_gla(q, k, v, g, chunk_size)
    else:
        result = chunked_gla(q, k, v, g, chunk_size, initial_state=state)
    result = list(result)
    assert len(result) == 2, f"expected (o, final_state), got {len(result)} values"
    return result


def _assert_close(got, exact, scale, dtype, what):
    assert isinstance(got, torch.Tensor), f"{what}: expected a tensor, got {type(got)}"
    assert got.dtype == dtype, f"{what}: dtype {got.dtype}, expected {dtype}"
    assert tuple(got.shape) == exact.shape, f"{what}: shape {tuple(got.shape)}, expected {exact.shape}"
    got = got.detach().to(torch.float64).numpy()
    bad = ~np.isfinite(got)
    assert not bad.any(), f"{what}: {int(bad.sum())} non-finite entries, first at {np.argwhere(bad)[0].tolist()}"
    excess = np.abs(got - exact) - (RTOL[dtype] * scale + ATOL)
    worst = np.unravel_index(np.argmax(excess), excess.shape)
    assert excess[worst] <= 0, (
        f"{what}: at index {list(worst)} got {got[worst]!r}, exact {exact[worst]!r}, "
        f"error {abs(got[worst] - exact[worst]):.3e} > {RTOL[dtype]:g} * scale {scale[worst]:.3e}")


def _check(inputs, chunk_size, dtype):
    q, k, v, g, state = inputs
    o, final = _call(q, k, v, g, chunk_size, state)
    exact_o, exact_state, o_scale, state_scale = _recurrence.recurrence(q, k, v, g, state)
    _assert_close(o, exact_o, o_scale, dtype, "o")
    _assert_close(final, exact_state, state_scale, dtype, "final_state")


# name: (batch, heads, T, dk, dv, chunk_size, per-channel decay, initial state)
SHAPES = {
    "ragged_per_channel": (2, 2, 37, 5, 3, 8, True, True),
    "ragged_scalar_decay": (1, 3, 50, 4, 6, 16, False, True),
    "whole_chunks_only": (2, 1, 48, 4, 4, 16, True, False),
    "remainder_of_one": (1, 2, 33, 3, 5, 16, True, True),
    "chunk_longer_than_sequence": (1, 2, 7, 4, 3, 16, False, True),
    "chunk_of_one": (1, 1, 9, 3, 2, 1, True, True),
    "single_step": (2, 1, 1, 4, 4, 4, True, True),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(SHAPES))
def test_matches_the_recurrence(name, dtype):
    batch, heads, length, dk, dv, chunk, per_channel, with_state = SHAPES[name]
    inputs = _make(batch, heads, length, dk, dv, "moderate", per_channel, with_state, dtype,
                   seed=10 + list(SHAPES).index(name))
    _check(inputs, chunk, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("per_channel", [True, False], ids=["per_channel", "scalar"])
@pytest.mark.parametrize("chunk", [16, 64])
def test_strong_decays_stay_finite_and_exact(chunk, per_channel, dtype):
    inputs = _make(2, 2, 150, 6, 4, "strong", per_channel, True, dtype, seed=chunk + per_channel)
    _check(inputs, chunk, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_every_step_at_the_decay_floor(dtype):
    inputs = _make(1, 2, 40, 4, 4, "floor", True, True, dtype, seed=3)
    _check(inputs, 32, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_initial_state_alone(dtype):
    """With k = 0 every output comes from the initial state, decayed from step 1 on."""
    q, k, v, g, state = _make(1, 2, 21, 4, 3, "moderate", True, True, dtype, seed=4)
    _check((q, torch.zeros_like(k), v, g, state), 8, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("per_channel", [True, False], ids=["per_channel", "scalar"])
def test_longest_sequence(per_channel, dtype):
    """T = 4096: the first 3840 steps near the decay floor, then slow constant decays (one
    per head, or per head and key channel). The sum of all log-decays so far is huge
    (about -1.34e5, where float32 numbers are 1/64 apart) while the weights that matter
    depend on small differences of it. Entries are positive, so an output is as large as
    its scale and errors in its weights cannot cancel."""
    gen = torch.Generator().manual_seed(5)
    q, k = (torch.rand(2, 4, 4096, 2, generator=gen, dtype=torch.float64) for _ in range(2))
    v = torch.rand(2, 4, 4096, 3, generator=gen, dtype=torch.float64)
    state = torch.rand(2, 4, 2, 3, generator=gen, dtype=torch.float64)
    g_shape = tuple(q.shape) if per_channel else tuple(q.shape[:3])
    slow = -0.002 - 0.018 * torch.rand(g_shape[:2] + (1,) + g_shape[3:], generator=gen,
                                       dtype=torch.float64)
    g = slow.expand(g_shape).clone()
    g[:, :, :3840] = -30.0 - 10.0 * torch.rand(g[:, :, :3840].shape, generator=gen,
                                               dtype=torch.float64)
    _check([t.to(dtype) for t in (q, k, v, g, state)], 64, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_largest_entries_without_decay(dtype):
    inputs = _make(1, 1, 4096, 8, 8, "none", False, True, dtype, seed=7, magnitude=10.0)
    _check(inputs, 64, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_widest_heads_and_largest_chunk(dtype):
    inputs = _make(1, 1, 130, 64, 64, "strong", True, True, dtype, seed=8)
    _check(inputs, 64, dtype)


def test_without_initial_state_starts_from_zero():
    q, k, v, g, _ = _make(1, 2, 19, 3, 3, "moderate", True, False, torch.float64, seed=9)
    o_none, state_none = _call(q, k, v, g, 4, None)
    exact_o, exact_state, o_scale, state_scale = _recurrence.recurrence(q, k, v, g, None)
    _assert_close(o_none, exact_o, o_scale, torch.float64, "o")
    _assert_close(state_none, exact_state, state_scale, torch.float64, "final_state")


def _recorded(batch, heads, length, dk, dv, chunk, seed):
    q, k, v, g, state = _make(batch, heads, length, dk, dv, "moderate", True, True,
                              torch.float32, seed=seed)
    seen = PROBE.record((q, k, v, g, chunk), {"initial_state": state})
    exact_o, exact_state, o_scale, state_scale = _recurrence.recurrence(q, k, v, g, state)
    _assert_close(seen["o"], exact_o, o_scale, torch.float32, "o")
    _assert_close(seen["state"], exact_state, state_scale, torch.float32, "final_state")
    return seen


def test_work_grows_with_the_number_of_chunks_not_their_size():
    """16 chunks of 4 and 16 chunks of 32: a loop over positions does 8 times the work."""
    small = _recorded(1, 1, 64, 4, 4, 4, seed=11)["ops"]
    large = _recorded(1, 1, 512, 4, 4, 32, seed=12)["ops"]
    assert large <= 2 * small, (
        f"{large} tensor operations for 16 chunks of 32 against {small} for 16 chunks of 4")


def test_no_tensor_beyond_the_chunked_memory_bound():
    batch, heads, length, dk, dv, chunk = 1, 2, 1024, 4, 3, 8
    seen = _recorded(batch, heads, length, dk, dv, chunk, seed=13)
    bound = batch * heads * ((length + chunk) * chunk * max(dk, dv) + dk * dv)
    numel, shape, op = seen["largest"]
    assert numel <= bound, f"{op} made a tensor of shape {shape} ({numel} elements > {bound})"
