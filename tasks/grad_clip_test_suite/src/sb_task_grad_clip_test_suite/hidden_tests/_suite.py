"""The judge's side of grading the solver's test_grad_clip.py: sb.solver_tests runs it once per
implementation of grad_clip.py (_good/NAME, _buggy/NAME), and a buggy version counts as caught
only when the run failed AND the judge's own record shows a call on which that version behaves
differently from the correct one. What is particular to this task: how alike two behaviours
must be (within twice the prompt's accuracy promise), an independent model of the contract,
and the battery of calls over the documented domain that the guards for the grader itself use."""
import functools
import math
import pathlib

import numpy as np

from sb.solver_tests import SolverTests, behaviour

# The prompt's promise. total_norm: relative 1e-12 of the exact norm (a float64 sum of at most
# 4096 non-negative terms errs by at most 4096 * 2**-53 ~ 4.5e-13 relative, and the root only
# shrinks that); exact for norm_type inf (a maximum rounds nothing).
NORM_PROMISE = 1e-12
# Each scaled entry within REL * |exact| + the dtype's smallest subnormal: float32 entries
# multiplied in float32 by a float32-rounded coefficient err by up to 2**-24 + 2**-24 ~ 1.19e-7
# relative, under 1.5e-7; float64 entries inherit the norm's 1e-12 plus a few roundings.
ENTRY_PROMISE = {np.dtype(np.float32): 1.5e-7, np.dtype(np.float64): 2e-12}
TINY = {np.dtype(np.float32): 2.0 ** -149, np.dtype(np.float64): 2.0 ** -1074}
# Two implementations "behave the same" within twice the promise: each may sit anywhere inside
# it, on either side of the exact value.
SAME = 2


def _norm_alike(a, b) -> bool:
    if not (isinstance(a, float) and isinstance(b, float)):
        return False
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return a == b or (math.isnan(a) and math.isnan(b))
    return abs(a - b) <= SAME * NORM_PROMISE * abs(b)


def _entries_alike(a, b) -> bool:
    """Two arrays of one type, dtype and shape; the same NaNs and infinities; finite entries
    within twice the promise."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype not in ENTRY_PROMISE:
        return False
    x, y = a.astype(np.float64), b.astype(np.float64)
    if not (np.array_equal(np.isnan(x), np.isnan(y)) and np.array_equal(np.isposinf(x), np.isposinf(y))
            and np.array_equal(np.isneginf(x), np.isneginf(y))):
        return False
    finite = np.isfinite(y)
    bound = SAME * (ENTRY_PROMISE[a.dtype] * np.abs(y[finite]) + TINY[a.dtype])
    return bool(np.all(np.abs(x[finite] - y[finite]) <= bound))


def _results_alike(a, b) -> bool:
    if not (type(a) is tuple and type(b) is tuple and len(a) == len(b) == 2):
        return False
    (clipped_a, norm_a), (clipped_b, norm_b) = a, b
    if type(clipped_a) is not type(clipped_b) or type(clipped_b) is not list or len(clipped_a) != len(clipped_b):
        return False
    return _norm_alike(norm_a, norm_b) and all(_entries_alike(x, y) for x, y in zip(clipped_a, clipped_b))


def alike(a: tuple, b: tuple) -> bool:
    """Two behaviours alike: the same exception type (its text is free), or results alike and
    the same arguments written (none: the only array argument sits inside a list)."""
    if a[0] != b[0]:
        return False
    if a[0] == "raises":
        return a[1] == b[1]
    if dict(a[2]).keys() != dict(b[2]).keys():
        return False
    return _results_alike(a[1], b[1])


SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_grad_clip.py", module="grad_clip",
                    functions=("clip_grad_norm",), alike=alike,
                    run_order_seed=0,  # checked by check_passes_on_every_correct_version: a buggy one first, the correct ones apart
                    max_calls=300,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="flat_linalg")
# The buggy version that must not depend on an earlier run: one that departs on very many calls.
STANDALONE_BUGGY = ("per_array_clip",)


# ---------------------------------------------------------------------------------------
# An independent model of the contract: Python floats, math.fsum (a correctly rounded sum of
# the float64 terms), so the model itself errs by a few units of 2**-53, far inside the promise.

def exact_norm(grads, norm_type) -> float:
    values = [float(x) for g in grads for x in np.asarray(g, dtype=np.float64).ravel()]
    if any(math.isnan(x) for x in values):
        return math.nan
    if any(math.isinf(x) for x in values):
        return math.inf
    if not values:
        return 0.0
    if norm_type == math.inf:
        return max(abs(x) for x in values)
    return math.fsum(abs(x) ** norm_type for x in values) ** (1.0 / norm_type)


def model(grads, max_norm, norm_type=2.0, eps=1e-6, error_if_nonfinite=False):
    """("raises",) or ("returns", [exact scaled entries as float64 arrays, or None where the
    array comes back unchanged], exact total norm)."""
    if not (max_norm > 0) or not (norm_type >= 1):
        return ("raises",)
    total = exact_norm(grads, norm_type)
    if not math.isfinite(total):
        return ("raises",) if error_if_nonfinite else ("returns", [None] * len(grads), total)
    coef = max_norm / (total + eps) if total + eps > 0 else math.inf
    if not coef < 1:
        return ("returns", [None] * len(grads), total)
    return ("returns", [np.asarray(g, dtype=np.float64) * max_norm / (total + eps) for g in grads], total)


def meets_the_contract(call: tuple, seen: tuple) -> bool:
    """One behaviour against the model: the exception, or every array of the input's dtype and
    shape, unchanged exactly or scaled within the promise, and total_norm within its promise."""
    _, args, kwargs = call
    want = model(*args, **kwargs)
    if want[0] == "raises":
        return seen[0] == "raises" and seen[1] == "ValueError"
    if seen[0] != "returns" or type(seen[1]) is not tuple or len(seen[1]) != 2:
        return False
    clipped, total = seen[1]
    grads = args[0]
    if type(clipped) is not list or len(clipped) != len(grads) or type(total) is not float:
        return False
    exact = want[2]
    if math.isfinite(exact):
        bound = 0.0 if kwargs.get("norm_type") == math.inf else NORM_PROMISE * exact
        if not abs(total - exact) <= bound:
            return False
    elif not (total == exact or (math.isnan(total) and math.isnan(exact))):
        return False
    for got, given, scaled in zip(clipped, grads, want[1]):
        if type(got) is not np.ndarray or got.dtype != given.dtype or got.shape != given.shape:
            return False
        if scaled is None:
            if not np.array_equal(got, given, equal_nan=True):
                return False
        elif not np.all(np.abs(got.astype(np.float64) - scaled)
                        <= ENTRY_PROMISE[got.dtype] * np.abs(scaled) + TINY[got.dtype]):
            return False
    return True


# ---------------------------------------------------------------------------------------
# The battery: seeded calls over the documented domain, for the guards below.

def _call(grads, max_norm, **kwargs) -> tuple:
    return ("clip_grad_norm", (grads, max_norm), kwargs)


@functools.lru_cache(maxsize=None)
def battery() -> list:
    rng = np.random.default_rng(20250101)
    f32, f64 = np.float32, np.float64

    def arrays(dtypes, shapes, size=1.0):
        return [np.asarray(rng.standard_normal(s) * size).astype(d) for d, s in zip(dtypes, shapes)]

    calls = []
    layouts = [([f64], [(7,)]), ([f32], [(3, 4)]), ([f32, f32, f32], [(5,), (), (2, 3)]),
               ([f64, f32], [(4,), (3, 2)]), ([f32, f64, f64], [(0,), (6,), (2, 0, 3)]),
               ([f64, f64], [(50,), (10, 10)])]
    for dtypes, shapes in layouts:
        for norm_type in (1.0, 2.0, 3.0, 1.5, 8.0, math.inf):
            for max_norm in (0.5, 100.0):
                calls.append(_call(arrays(dtypes, shapes), max_norm, norm_type=norm_type))
    # the threshold: max_norm equal to the norm, and a norm just below it
    for dtypes, shapes in layouts[:4]:
        grads = arrays(dtypes, shapes)
        norm = exact_norm(grads, 2.0)
        calls.append(_call(grads, norm))
        calls.append(_call(grads, norm + 0.5e-6))
        calls.append(_call(grads, norm, eps=0.25))
    # a small norm, where eps weighs most, and float32 arrays of many entries
    calls.append(_call(arrays([f32, f64], [(6,), (3,)], size=1e-3), 1e-3))
    calls.append(_call(arrays([f32, f32], [(1000,), (40, 50)]), 1.0))
    calls.append(_call(arrays([f32, f32], [(1000,), (40, 50)]), 1.0, norm_type=1.0))
    # empty lists, zero-size arrays and all-zero gradients, with eps 0 too
    for eps in (1e-6, 0.0):
        for norm_type in (2.0, math.inf, 1.0):
            calls.append(_call([], 1.0, norm_type=norm_type, eps=eps))
            calls.append(_call([np.zeros((0, 3), f32), np.zeros((2, 0), f64)], 1.0, norm_type=norm_type, eps=eps))
            calls.append(_call([np.zeros(3, f32), np.zeros((2, 2), f64)], 1.0, norm_type=norm_type, eps=eps))
    calls.append(_call([np.zeros(0, f32), np.array([3.0, -4.0], f32)], 1.0, norm_type=math.inf))
    calls.append(_call([np.array([-5.0, 2.0]), np.zeros((0, 2))], 1.0, norm_type=math.inf))
    # magnitudes: float32 entries whose squares overflow float32; tiny results
    calls.append(_call([np.full((3, 2), 1e30, f32), np.array([-2e29], f32)], 1.0))
    calls.append(_call([np.full((3, 2), 1e20, f32)], 1.0, norm_type=1.0))
    calls.append(_call([np.array([1e-30, -3e-30, 2e-30], f32)], 1e-40))
    # huge float32 entries clipped hard: a coefficient below float32's normal range (a
    # coefficient rounded to float32 first keeps only a few bits)
    calls.append(_call([np.array([5e29, -3e29, 1e-3], f32)], 1e-10))
    # non-finite entries, with and without error_if_nonfinite, in the first or a later array
    for flag in (False, True):
        for norm_type in (2.0, math.inf, 1.0):
            calls.append(_call([np.array([1.0, np.inf], f32), np.array([2.0])], 1.0, norm_type=norm_type,
                               error_if_nonfinite=flag))
            calls.append(_call([np.array([1.0, 2.0]), np.array([np.nan], f32)], 1.0, norm_type=norm_type,
                               error_if_nonfinite=flag))
            calls.append(_call([np.array([5.0, -7.0]), np.array([1.0, np.nan, 2.0])], 1.0, norm_type=norm_type,
                               error_if_nonfinite=flag))
            calls.append(_call([np.array([np.nan, 1.0]), np.array([-np.inf])], 1.0, norm_type=norm_type,
                               error_if_nonfinite=flag))
    # arguments outside the domain of values: ValueError
    grads = arrays([f64, f32], [(3,), (2,)])
    for max_norm in (0.0, -1.0, math.nan):
        calls.append(_call(grads, max_norm))
    for norm_type in (0.5, 0.0, -1.0, math.nan):
        calls.append(_call(grads, 1.0, norm_type=norm_type))
    calls.append(_call(grads, math.inf))
    return calls


@functools.lru_cache(maxsize=None)
def _battery_behaviour(kind: str, name: str, index: int) -> tuple:
    return behaviour(SUITE.load(kind, name), battery()[index])


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must behave differently from the correct one somewhere on the
    documented domain, or no test file could be asked to catch it."""
    return any(not alike(_battery_behaviour("buggy", name, i), _battery_behaviour("good", SUITE.reference, i))
               for i in range(len(battery())))


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> bool:
    return all(meets_the_contract(battery()[i], _battery_behaviour("good", name, i))
               for name in SUITE.good for i in range(len(battery())))
