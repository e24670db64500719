"""The judge's side of grading the solver's test_layernorm.py: sb.solver_tests runs it once per
implementation of layer_norm and rms_norm (_good/NAME/layernorm.py, _buggy/NAME/layernorm.py),
and a buggy version counts as caught only when the run failed AND the judge's own record shows
a call, inside the documented domain, on which that version breaks the contract (an exception,
a result that is not a numpy array of x's shape and dtype, an entry outside the promised
accuracy of the exact value, an argument written to). What is particular to this task: the
accuracy is stated per element relative to the row's scale, so whether a result keeps the
contract is decided from the call itself, against the exact values of _exact.py, never by
likeness to another implementation; and the battery of calls over the documented domain that
the guards for the grader itself use."""
import functools
import inspect
import pathlib

import numpy as np

from _exact import exact_layer_norm, exact_rms_norm, promised_bound
from sb.solver_tests import SolverTests, behaviour

FUNCTIONS = ("layer_norm", "rms_norm")
# The documented domain (the prompt's "Arguments"): magnitudes per dtype, sizes, eps.
LARGEST = {np.dtype(np.float32): 1e4, np.dtype(np.float64): 1e8}
SMALLEST = 1e-6
MAX_ROW, MAX_SIZE = 1024, 65536
EPS_RANGE = (1e-12, 1.0)


def _signature(name: str) -> inspect.Signature:
    return inspect.signature(getattr(SUITE.load("good", SUITE.reference), name))


def _entries_allowed(a, dtype) -> bool:
    """A finite numpy array of `dtype` whose entries are 0 or of magnitude in [1e-6, LARGEST]."""
    if type(a) is not np.ndarray or a.dtype != dtype or not np.all(np.isfinite(a)):
        return False
    size = np.abs(a[a != 0])
    return bool(np.all((size >= SMALLEST) & (size <= LARGEST[a.dtype])))


def documented_arguments(call):
    """(name, arguments as a dict) when the call lies in the documented domain, else None: a
    call outside it (another dtype or kind of array, an empty axis, a bigger array, an eps out
    of range, a weight of another shape) decides nothing."""
    name, args, kwargs = call
    if name not in FUNCTIONS:
        return None
    try:
        bound = _signature(name).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    a = dict(bound.arguments)
    x = a["x"]
    if type(x) is not np.ndarray or x.dtype not in LARGEST or x.ndim < 1 or min(x.shape) < 1:
        return None
    if x.shape[-1] > MAX_ROW or x.size > MAX_SIZE or not _entries_allowed(x, x.dtype):
        return None
    for key in ("weight", "bias"):
        p = a.get(key)
        if p is not None and not (_entries_allowed(p, x.dtype) and p.shape == (x.shape[-1],)):
            return None
    eps = a["eps"]
    if type(eps) not in (float, np.float64) or not EPS_RANGE[0] <= eps <= EPS_RANGE[1]:
        return None
    return name, a


def exact(name: str, a: dict) -> tuple:
    if name == "layer_norm":
        return exact_layer_norm(a["x"], a["weight"], a["bias"], float(a["eps"]))
    return exact_rms_norm(a["x"], a["weight"], float(a["eps"]))


def keeps_the_contract(name: str, a: dict, seen: tuple) -> bool:
    """One behaviour on one documented call: a new numpy array of x's shape and dtype, every
    entry within the promise of the exact value, and no argument written to."""
    x = a["x"]
    if seen[0] != "returns" or seen[2]:
        return False
    got = seen[1]
    if type(got) is not np.ndarray or got.dtype != x.dtype or got.shape != x.shape:
        return False
    want, scale = exact(name, a)
    error = np.abs(got.astype(np.float64) - want)
    return bool(np.all(error <= promised_bound(want, scale, x.dtype)))  # a NaN is never within


def behaves_differently(call, buggy: tuple) -> bool:
    """On a documented call, `buggy` breaks the contract (every correct version keeps it there:
    test_passes_against_every_correct_module checks that over the battery)."""
    documented = documented_arguments(call)
    return documented is not None and not keeps_the_contract(*documented, buggy)


class LayerNormSolverTests(SolverTests):
    """SolverTests whose comparison reads the call: the promise is stated against the exact
    value and a per-row scale, which two results alone do not give."""

    def revealing_calls(self, name: str, run: dict) -> list:
        buggy = self.load("buggy", name)
        return [call for call in run.get("calls", []) if behaves_differently(call, behaviour(buggy, call))]

    def differs_somewhere(self, name: str, calls: list) -> bool:
        buggy = self.load("buggy", name)
        return any(behaves_differently(call, behaviour(buggy, call)) for call in calls)


SUITE = LayerNormSolverTests(pathlib.Path(__file__).parent, test_file="test_layernorm.py", module="layernorm",
                             functions=FUNCTIONS,
                             run_order_seed=0,  # chosen so that a buggy version runs first and the correct ones run far apart
                             max_calls=300,  # the prompt's budget of calls per run; the next call raises
                             standalone_correct="welford")
# The buggy version that must not depend on an earlier run: one that departs on almost every
# layer_norm call (n - 1 for n), so that what a run records differs.
STANDALONE_BUGGY = ("unbiased_variance",)


# ---------------------------------------------------------------------------------------
# Guards for the grader itself, over a battery of calls on the documented domain.

def _array(rng, dtype, shape, offset=0.0, spread=1.0):
    """Normal draws of the given spread around `offset` (a scalar or one offset per row), kept
    inside the domain: no entry is nonzero and below 1e-6 in magnitude."""
    x = np.asarray(offset, dtype=np.float64) + spread * rng.standard_normal(shape)
    x[np.abs(x) < SMALLEST] = 0.0
    return x.astype(dtype)


def _affine(rng, dtype, n, weight, bias):
    kwargs = {}
    if weight:
        kwargs["weight"] = _array(rng, dtype, (n,), 1.0, 0.5)
    if bias:
        kwargs["bias"] = _array(rng, dtype, (n,), 0.0, 2.0)
    return kwargs


@functools.lru_cache(maxsize=None)
def battery() -> list:
    """Seeded calls covering every rule for both functions and dtypes: ranks 1 to 4, rows of
    length 1 to 1024, weight and bias each given or not, explicit eps from 1e-12 to 1, rows
    far from zero (alike and unlike offsets in one call, at the edge of the range), nearly
    constant and exactly constant rows, zero rows, tiny and huge spreads."""
    rng = np.random.default_rng(20261207)
    calls = []
    for dtype in (np.float32, np.float64):
        top = LARGEST[np.dtype(dtype)]
        for shape in [(7,), (1,), (4, 6), (3, 1), (2, 3, 5), (2, 2, 3, 4), (2, 1024), (33, 2)]:
            n = shape[-1]
            for weight in (False, True):
                for bias in (False, True):
                    x = _array(rng, dtype, shape, 0.3, 1.5)
                    calls.append(("layer_norm", (x,), _affine(rng, dtype, n, weight, bias)))
                x = _array(rng, dtype, shape, 0.3, 1.5)
                calls.append(("rms_norm", (x,), _affine(rng, dtype, n, weight, False)))
        for eps in (1e-12, 1e-3, 1.0):
            x = _array(rng, dtype, (3, 8), 0.0, 0.05)
            calls.append(("layer_norm", (x,), {"eps": eps, **_affine(rng, dtype, 8, True, True)}))
            calls.append(("rms_norm", (x,), {"eps": eps, **_affine(rng, dtype, 8, True, False)}))
        # rows far from zero: one offset for all rows, and one offset per row
        small = 1e-2 if dtype == np.float32 else 1.0
        for offset in (top * 0.9, top / 100, np.array([[0.0], [top * 0.9], [-top / 10], [top / 1000]])):
            x = _array(rng, dtype, (4, 16), offset, small)
            calls.append(("layer_norm", (x,), _affine(rng, dtype, 16, True, True)))
            calls.append(("rms_norm", (x,), {}))
        # constant rows (exact and inexact means), zero rows, a nearly constant row
        const = np.array([[3.0] * 8, [0.1] * 8, [0.0] * 8, [-top] * 8], dtype=dtype)
        near = const.copy()
        near[:, 0] = near[:, 0] + np.asarray(1e-2 if dtype == np.float32 else 1e-6, dtype=dtype)
        near[2, 0] = 1e-3
        for x in (const, near):
            calls.append(("layer_norm", (x,), _affine(rng, dtype, 8, False, True)))
            calls.append(("layer_norm", (x,), _affine(rng, dtype, 8, True, True)))
            calls.append(("rms_norm", (x,), _affine(rng, dtype, 8, True, False)))
        # tiny and huge spreads around zero, long rows
        for spread in (1e-5, top / 10):
            x = _array(rng, dtype, (3, 64), 0.0, spread)
            calls.append(("layer_norm", (x,), _affine(rng, dtype, 64, True, True)))
            calls.append(("rms_norm", (x,), _affine(rng, dtype, 64, True, False)))
    return calls


@functools.lru_cache(maxsize=None)
def _battery_behaviour(kind: str, name: str, index: int) -> tuple:
    return behaviour(SUITE.load(kind, name), battery()[index])


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must break the contract somewhere on the documented domain, or no test
    file could be asked to catch it."""
    return any(behaves_differently(battery()[i], _battery_behaviour("buggy", name, i))
               for i in range(len(battery())))


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> bool:
    assert all(documented_arguments(call) is not None for call in battery())
    return all(keeps_the_contract(*documented_arguments(battery()[i]), _battery_behaviour("good", name, i))
               for name in SUITE.good for i in range(len(battery())))
