"""The judge's side of grading the solver's test_loss.py: sb.solver_tests runs it once per
implementation of token_loss (_good/NAME/loss.py, _buggy/NAME/loss.py), and a buggy version
counts as caught only when the run failed AND the judge's own record shows a call on which
that version behaves differently from the correct one (another exception type or none, a
result of another type, dtype or shape, a value outside rounding, a NaN or infinity where
the other has none, or an argument written to): a suite that fails for another reason
(over-tight tolerances, state carried between runs, randomness) catches nothing. What is
particular to this task: how alike two results must be, and the battery of calls over the
documented domain that the guards for the grader itself use."""
import functools
import math
import pathlib

import numpy as np

from sb.solver_tests import SolverTests, behaviour

# The promise of the prompt, |got - exact| <= tol * (1 + |exact|), per dtype.
PROMISED = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-10}
# Two implementations "behave the same" on a call within ten times the promise: each may sit
# anywhere inside it, and every buggy version departs by far more somewhere on the battery
# below (version_really_differs); the closest, float64 computed in float32, departs by about
# 1e-7 relative, a hundred times this bound.
SAME = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-9}


def _kind(value) -> tuple:
    """What a result is, apart from its values: its type, dtype and shape."""
    if isinstance(value, (np.ndarray, np.generic)):
        return (type(value).__name__, value.dtype, np.shape(value))
    return (type(value).__name__,)


def values_close(got, want, tol: float) -> bool:
    """Same NaNs, same infinities (with sign), finite values within tol * (1 + |want|)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return False
    for test in (np.isnan, np.isposinf, np.isneginf):
        if not np.array_equal(test(got), test(want)):
            return False
    finite = np.isfinite(want)
    return bool(np.all(np.abs(got[finite] - want[finite]) <= tol * (1 + np.abs(want[finite]))))


def _results_same(a, b) -> bool:
    kind = _kind(b)
    if _kind(a) != kind or kind[0] not in ("ndarray", "float32", "float64"):
        return False
    return values_close(a, b, SAME.get(kind[1], 0.0))


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
    if any(not np.array_equal(written_a[key], written_b[key], equal_nan=True) for key in written_a):
        return False
    return _results_same(a[1], b[1])


SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_loss.py", module="loss",
                    functions=("token_loss",), alike=alike,
                    run_order_seed=56,  # chosen so that a buggy version runs first and the correct ones run far apart
                    max_calls=300,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="row_loop")
# The buggy version that must not depend on an earlier run: one that departs on every
# float32 call, so that what a run records differs.
STANDALONE_BUGGY = ("result_always_float64",)


# ---------------------------------------------------------------------------------------
# Guards for the grader itself, over a battery of calls on the documented domain.

def exact(logits, labels, ignore_index=-100, label_smoothing=0.0, reduction="mean", z_loss=0.0):
    """The contract by brute force in Python floats: ("raises", "ValueError") or the
    per-position losses and the reduced value, in float64."""
    vocab = logits.shape[1]
    if reduction not in ("mean", "sum", "none"):
        return ("raises", "ValueError")
    labels = [int(y) for y in labels]
    if any(y != ignore_index and not 0 <= y < vocab for y in labels):
        return ("raises", "ValueError")
    per = []
    for row, y in zip(logits.astype(np.float64).tolist(), labels):
        if y == ignore_index:
            per.append(0.0)
            continue
        top = max(row)
        lse_shift = math.log(math.fsum(math.exp(v - top) for v in row))
        target = [label_smoothing / vocab + (1 - label_smoothing) * (c == y) for c in range(vocab)]
        cross = math.fsum(t * ((top - v) + lse_shift) for t, v in zip(target, row))
        lse = top + lse_shift
        per.append(cross + z_loss * lse * lse)
    counted = sum(y != ignore_index for y in labels)
    reduced = {"none": np.array(per), "sum": math.fsum(per),
               "mean": math.fsum(per) / counted if counted else 0.0}[reduction]
    return ("returns", reduced)


def _call(logits, labels, **options):
    return ("token_loss", (logits, np.asarray(labels)), options)


def _logits(rng, dtype, n, vocab, scale=3.0):
    return (rng.standard_normal((n, vocab)) * scale).astype(dtype)


def _labels(rng, n, vocab, ignore_index=-100, ignored=0.3):
    labels = rng.integers(0, vocab, n)
    labels[rng.random(n) < ignored] = ignore_index
    return labels


@functools.lru_cache(maxsize=None)
def battery() -> list:
    """Seeded calls covering every rule: both dtypes, every reduction, smoothing and z-loss
    alone and together, ignored positions (none, some, all) under several ignore_index values
    (negative, a class, at and beyond V), labels of two integer dtypes, one class, large and
    mixed-scale logits up to the stated bounds, rows tied at large magnitudes, a label far
    below its row's max, invalid
    labels and reductions."""
    rng = np.random.default_rng(20240611)
    calls = []
    for dtype in (np.float32, np.float64):
        for n, vocab in ((6, 5), (9, 11), (4, 1)):
            for reduction in ("mean", "sum", "none"):
                for eps, z in ((0.0, 0.0), (0.1, 0.0), (0.0, 1e-3), (0.25, 2e-3), (1.0, 0.0)):
                    calls.append(_call(_logits(rng, dtype, n, vocab), _labels(rng, n, vocab),
                                       label_smoothing=eps, reduction=reduction, z_loss=z))
        for reduction in ("mean", "sum", "none"):
            for ignore_index in (-1, 0, 5, 1000):
                labels = _labels(rng, 8, 5, ignore_index=ignore_index, ignored=0.4).astype(np.int32)
                calls.append(_call(_logits(rng, dtype, 8, 5), labels, ignore_index=ignore_index,
                                   label_smoothing=0.1, z_loss=1e-3, reduction=reduction))
            calls.append(_call(_logits(rng, dtype, 5, 4), np.full(5, -100), label_smoothing=0.2,
                               z_loss=1e-3, reduction=reduction))
            calls.append(_call(_logits(rng, dtype, 5, 4), _labels(rng, 5, 4, ignored=0.0), reduction=reduction))
            big = 1e38 if dtype == np.float32 else 1e300  # the stated bounds of the logits
            for scale in (1e3, 1e4, big / 8):
                # clipped to the bound; the sum of the losses (each below 2 * big) stays finite
                logits = np.clip(_logits(rng, np.float64, 6, 7, scale), -big, big).astype(dtype)
                calls.append(_call(logits, _labels(rng, 6, 7), label_smoothing=0.1, reduction=reduction))
            mixed = _logits(rng, np.float64, 4, 6)
            mixed[0] *= 1e4
            mixed[1] -= 2e3
            calls.append(_call(mixed.astype(dtype), np.array([1, 2, 3, -100]), reduction=reduction))
            far = np.array([[0.0, 900.0, 1.0], [5.0, -800.0, 4.0]], dtype=dtype)  # the label 900 below the max
            calls.append(_call(far, np.array([0, 1]), reduction=reduction))
            # rows tied (or nearly) at large magnitudes: a small exact loss beside a huge logsumexp
            tied = np.array([[big] * 4, [-big] * 4, [1e20] * 4, [-1e12] * 4], dtype=dtype)
            calls.append(_call(tied, np.array([1, 2, 0, 2]), label_smoothing=0.1, reduction=reduction))
        for labels, ignore_index in (([0, 5, 1], -100), ([0, -1, 1], -100), ([0, -7, 1], -100),
                                     ([0, -100, 1], -1), ([2, 1, 1], 1000)):
            calls.append(_call(_logits(rng, dtype, 3, 5), np.array(labels), ignore_index=ignore_index))
        for reduction in ("avg", "MEAN", None):
            calls.append(_call(_logits(rng, dtype, 3, 5), np.array([0, 1, 2]), reduction=reduction))
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
    """One correct implementation on one battery call: the exception the contract names, or
    a result of the stated type and dtype within the promise of the exact value, and no
    argument written to."""
    seen, want = _battery_behaviour("good", name, index), _battery_exact(index)
    if want[0] == "raises":
        return seen[:2] == want
    dtype = battery()[index][1][0].dtype
    if not np.all(np.abs(want[1]) <= np.finfo(dtype).max):
        return False  # the battery stays where the contract is defined
    if seen[0] != "returns" or seen[2]:
        return False
    got = seen[1]
    if isinstance(want[1], np.ndarray):
        shape_ok = type(got) is np.ndarray and got.shape == want[1].shape
    else:
        shape_ok = type(got) is dtype.type
    return shape_ok and got.dtype == dtype and values_close(got, want[1], PROMISED[dtype])


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> bool:
    return all(meets_the_contract(name, i) for name in SUITE.good for i in range(len(battery())))
