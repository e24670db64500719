"""The judge's side of grading the solver's test_attention.py: sb.solver_tests runs it once
per implementation of attention (_good/NAME/attention.py, _buggy/NAME/attention.py), and a
buggy version counts as caught only when the run failed AND the judge's own record shows a
call on which that version behaves differently from the correct one (a result of another
kind, dtype or shape, a value outside rounding, a NaN or infinity where the other has none,
an exception, or an argument written to): a suite that fails for another reason (over-tight
tolerances, state carried between runs, randomness) catches nothing. What is particular to
this task: how alike two results must be, and the battery of calls over the documented
domain that the guards for the grader itself use."""
import functools
import math
import pathlib

import numpy as np
import torch

from sb.solver_tests import SolverTests, behaviour

# The promise of the prompt, |got - exact| <= tol * (1 + |exact|), per dtype.
PROMISED = {torch.float32: 1e-4, torch.float64: 1e-9}
# Two implementations "behave the same" on a call within ten times the promise: each may sit
# anywhere inside it, and every buggy version departs by orders of magnitude more (checked
# over the battery below by version_really_differs).
SAME = {torch.float32: 1e-3, torch.float64: 1e-8}


def _as_numpy(value) -> np.ndarray:
    return value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


def _array_kind(value):
    if isinstance(value, torch.Tensor):
        return ("torch", value.dtype, tuple(value.shape))
    if isinstance(value, np.ndarray):
        return ("numpy", torch.from_numpy(np.zeros(0, value.dtype)).dtype if value.dtype.kind == "f"
                else str(value.dtype), value.shape)
    return (type(value).__name__,)


def values_close(got, want, tol: float) -> bool:
    """Same NaNs, same infinities (with sign), finite values within tol * (1 + |want|)."""
    got, want = _as_numpy(got).astype(np.float64), _as_numpy(want).astype(np.float64)
    if got.shape != want.shape:
        return False
    if not (np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(np.isposinf(got), np.isposinf(want))
            and np.array_equal(np.isneginf(got), np.isneginf(want))):
        return False
    finite = np.isfinite(want)
    return bool(np.all(np.abs(got[finite] - want[finite]) <= tol * (1 + np.abs(want[finite]))))


def _results_same(a, b) -> bool:
    """Two results alike: pairs of arrays of one kind, dtype and shape, values alike."""
    if not (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 2):
        return False
    for x, y in zip(a, b):
        kind = _array_kind(y)
        if _array_kind(x) != kind or kind[0] not in ("torch", "numpy"):
            return False
        if not values_close(x, y, SAME.get(kind[1], 0.0)):
            return False
    return True


def alike(a: tuple, b: tuple) -> bool:
    """Two behaviours alike: the same exception type (its text is free), or results alike
    and exactly the same arguments written."""
    if a[0] != b[0]:
        return False
    if a[0] == "raises":
        return a[1] == b[1]
    written_a, written_b = dict(a[2]), dict(b[2])
    if written_a.keys() != written_b.keys():
        return False
    if any(not values_close(written_a[key], written_b[key], 0.0) for key in written_a):
        return False
    return _results_same(a[1], b[1])


SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_attention.py", module="attention",
                    functions=("attention",), alike=alike,
                    run_order_seed=6,  # chosen so that a buggy version runs first and the correct ones run far apart
                    max_calls=300,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="row_loop")
# The buggy version that must not depend on an earlier run: the one that departs on every
# call (it writes to q), so that what a run records differs.
STANDALONE_BUGGY = ("query_scaled_in_place",)


# ---------------------------------------------------------------------------------------
# Guards for the grader itself, over a battery of calls on the documented domain.

def exact(q, k, v, mask=None, causal=False, scale=None):
    """The contract by brute force in Python floats (float64): (out, lse) as numpy float64."""
    qa, ka, va = (_as_numpy(x).astype(np.float64) for x in (q, k, v))
    batch, heads, q_len, d = qa.shape
    key_heads, k_len, dv = ka.shape[1], ka.shape[2], va.shape[3]
    scale = 1 / math.sqrt(d) if scale is None else scale
    m = None if mask is None else _as_numpy(mask)
    additive = None if m is None or m.dtype == np.bool_ else np.broadcast_to(m.astype(np.float64),
                                                                            (batch, heads, q_len, k_len))
    out, lse = np.zeros((batch, heads, q_len, dv)), np.full((batch, heads, q_len), -math.inf)
    for b in range(batch):
        for h in range(heads):
            kv = h * key_heads // heads
            for i in range(q_len):
                terms = []
                for j in range(k_len):
                    if (causal and j - (k_len - q_len) > i) or (m is not None and m.dtype == np.bool_ and not m[b, j]):
                        continue
                    logit = scale * math.fsum(qa[b, h, i, t] * ka[b, kv, j, t] for t in range(d))
                    logit += 0.0 if additive is None else additive[b, h, i, j]
                    if logit > -math.inf:
                        terms.append((j, logit))
                if terms:
                    top = max(t for _, t in terms)
                    weights = [(j, math.exp(t - top)) for j, t in terms]
                    total = math.fsum(w for _, w in weights)
                    lse[b, h, i] = top + math.log(total)
                    for c in range(dv):
                        out[b, h, i, c] = math.fsum(w * va[b, kv, j, c] for j, w in weights) / total
    return out, lse


def _case(rng, as_torch, dtype, batch, heads, key_heads, q_len, k_len, d, dv, mask, causal, scale, size=1.0):
    def make(*shape):
        x = (rng.standard_normal(shape) * size).astype(dtype)
        return torch.from_numpy(x) if as_torch else x
    kwargs = {"causal": causal}
    if scale is not None:
        kwargs["scale"] = scale
    if mask == "padding":
        keep = rng.random((batch, k_len)) < 0.6
        keep[0, :] = False  # one batch row sees no key at all
        kwargs["mask"] = torch.from_numpy(keep) if as_torch else keep
    elif mask == "additive":
        add = rng.standard_normal((batch, 1, q_len, k_len)) * 2
        add[rng.random(add.shape) < 0.3] = -np.inf
        add[..., 0, :] = -np.inf  # the first query of every head sees no key
        add = add.astype(dtype)
        kwargs["mask"] = torch.from_numpy(add) if as_torch else add
    return ("attention", (make(batch, heads, q_len, d), make(batch, key_heads, k_len, d),
                          make(batch, key_heads, k_len, dv)), kwargs)


@functools.lru_cache(maxsize=None)
def battery() -> list:
    """Seeded calls covering every rule: both array kinds and dtypes, grouped heads, every
    mask kind with and without causality, fewer and more queries than keys, one query, large
    logits, a value size unlike the key size, and an explicit scale."""
    rng = np.random.default_rng(20240611)
    shapes = [(2, 4, 2, 3, 5, 4, 4), (1, 6, 3, 1, 7, 8, 8), (2, 2, 2, 5, 5, 3, 6), (1, 4, 1, 6, 4, 5, 2),
              (2, 4, 4, 2, 2, 1, 3), (1, 1, 1, 4, 9, 4, 4)]
    calls = []
    for as_torch in (False, True):
        for dtype in (np.float32, np.float64):
            for shape in shapes:
                for mask in (None, "padding", "additive"):
                    for causal in (False, True):
                        calls.append(_case(rng, as_torch, dtype, *shape, mask, causal, None))
            calls.append(_case(rng, as_torch, dtype, 1, 2, 1, 3, 5, 4, 4, "additive", False, 0.7))
            big = 7.0 if dtype == np.float32 else 20.0  # logits past exp's overflow (88 and 709)
            calls.append(_case(rng, as_torch, dtype, 1, 2, 1, 3, 5, 16, 4, None, True, None, size=big))
    return calls


@functools.lru_cache(maxsize=None)
def _battery_behaviour(kind: str, name: str, index: int) -> tuple:
    return behaviour(SUITE.load(kind, name), battery()[index])


@functools.lru_cache(maxsize=None)
def _battery_exact(index: int) -> tuple:
    _, args, kwargs = battery()[index]
    return exact(*args, **kwargs)


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must behave differently from the correct one somewhere on the
    documented domain, or no test file could be asked to catch it."""
    return any(not alike(_battery_behaviour("buggy", name, i), _battery_behaviour("good", SUITE.reference, i))
               for i in range(len(battery())))


def meets_the_contract(name: str, index: int) -> bool:
    """One correct implementation on one battery call: the kind and dtype of the inputs,
    within the promise of the exact values, and no argument written to."""
    kind = _array_kind(battery()[index][1][0])
    seen = _battery_behaviour("good", name, index)
    if seen[0] != "returns" or seen[2] or not isinstance(seen[1], tuple) or len(seen[1]) != 2:
        return False
    return all(_array_kind(got)[:2] == kind[:2] and values_close(got, want, PROMISED[kind[1]])
               for got, want in zip(seen[1], _battery_exact(index)))


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> bool:
    return all(meets_the_contract(name, i) for name in SUITE.good for i in range(len(battery())))
