"""The judge's side of grading the solver's test_attention.py.

The solver's tests are solution code, so they run in the worker (_probe_pytest.py), once per
implementation of attention. The implementations are hidden-test code and stay HERE: each run
gets one neutral callable (the same for every implementation) that runs one implementation in
this process on copies of the arguments, records every call, answers the result and the
arguments the implementation wrote to, and re-raises what it raises as a fresh exception of
the same type and arguments (so no traceback of an implementation file crosses). Runs go in a
fixed shuffled order, one probe call each, so at any run the worker has never seen a later
implementation and is never told which runs are correct. After them, a few more runs share a
workspace two by two (runs_after_another), so that a file which leaves something for a later
run to find is caught whatever the shuffled order happened to be.

A buggy implementation counts as caught only when the run failed AND this file's own record
shows that the run called that implementation with arguments on which it behaves differently
from the correct one (a result of another kind, dtype or shape, a value outside rounding, a
NaN or infinity where the other has none, an exception, or an argument written to): a suite
that fails for another reason (over-tight tolerances, state carried between runs, randomness)
catches nothing."""
import ast
import functools
import importlib.util
import math
import pathlib
import random
from operator import getitem

import numpy as np
import torch

from sb.judge import probe, solution_source

HERE = pathlib.Path(__file__).parent
SOLVER_TESTS = "test_attention.py"
GOOD_VERSIONS = sorted(p.name for p in (HERE / "_good").iterdir() if p.is_dir())
BUGGY_VERSIONS = sorted(p.name for p in (HERE / "_buggy").iterdir() if p.is_dir())
REFERENCE_VERSION = "as_shown"  # the correct implementation the solver is shown, as the oracle for calls
RUN_ORDER_SEED = 6  # chosen so that a buggy version runs first and the correct ones run far apart
MAX_CALLS = 300  # the prompt's budget of calls per run; the next call raises
# The promise of the prompt, |got - exact| <= tol * (1 + |exact|), per dtype.
PROMISED = {torch.float32: 1e-4, torch.float64: 1e-9}
# Two implementations "behave the same" on a call within ten times the promise: each may sit
# anywhere inside it, and every buggy version departs by orders of magnitude more (checked
# over the battery below by version_really_differs).
SAME = {torch.float32: 1e-3, torch.float64: 1e-8}
# The runs that must not depend on an earlier one: a correct version, and the buggy version
# that departs on every call (it writes to q), so that what a run records differs.
STANDALONE_CORRECT = "row_loop"
STANDALONE_BUGGY = ("query_scaled_in_place",)


def solver_test_source() -> str:
    try:
        return solution_source(SOLVER_TESTS)
    except OSError:
        return ""


@functools.lru_cache(maxsize=None)
def load(kind: str, name: str):
    """One implementation, executed HERE: it is hidden-test code, never the solver's."""
    path = HERE / f"_{kind}" / name / "attention.py"
    spec = importlib.util.spec_from_file_location(f"_attention_{kind}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fresh(exc: Exception) -> Exception:
    try:
        return type(exc)(*exc.args) if type(exc).__module__ == "builtins" else RuntimeError(str(exc))
    except Exception:  # an exception type whose constructor wants other arguments
        return RuntimeError(str(exc))


def _is_array(value) -> bool:
    return isinstance(value, (np.ndarray, torch.Tensor))


def _is_data(value) -> bool:
    return value is None or type(value) in (bool, int, float) or _is_array(value)


def _copy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _as_numpy(value) -> np.ndarray:
    return value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


def _same_bits(a, b) -> bool:
    a, b = _as_numpy(a), _as_numpy(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _written(before: tuple, after: tuple) -> list:
    """(position, new contents) of every argument an implementation wrote to."""
    (args0, kwargs0), (args1, kwargs1) = before, after
    changed = [(i, a) for i, (a, b) in enumerate(zip(args1, args0)) if _is_array(a) and not _same_bits(a, b)]
    return changed + [(key, a) for key, a in kwargs1.items() if _is_array(a) and not _same_bits(a, kwargs0[key])]


def invoke(module, args, kwargs):
    """Run one implementation on (args, kwargs) in place: (result, written arguments)."""
    before = (tuple(_copy(a) for a in args), {key: _copy(a) for key, a in kwargs.items()})
    result = module.attention(*args, **kwargs)
    return result, _written(before, (args, kwargs))


def neutral(module, record: list, is_open):
    """The callable one run receives: identical for every implementation. It answers only
    while its run is in progress (`is_open()`), so a later run cannot reach back to an
    earlier implementation, neither to learn from it nor to add calls to its record."""
    def call(args, kwargs):
        if not is_open():
            raise RuntimeError("this implementation's run is over")
        if len(record) >= MAX_CALLS:
            raise RuntimeError(f"more than {MAX_CALLS} calls to attention in one run")
        args, kwargs = tuple(args), dict(kwargs)
        data = all(_is_data(a) for a in args) and all(_is_data(a) for a in kwargs.values())
        record.append((tuple(_copy(a) for a in args), {k: _copy(a) for k, a in kwargs.items()}) if data else None)
        try:
            return invoke(module, args, kwargs)
        except Exception as exc:
            raise _fresh(exc) from None

    return call


def run_order() -> list:
    versions = [("good", name) for name in GOOD_VERSIONS] + [("buggy", name) for name in BUGGY_VERSIONS]
    random.Random(RUN_ORDER_SEED).shuffle(versions)
    return versions


def run_once(source: str, kind: str, name: str, workspace=None) -> dict:
    """One probe run of the solver's file against one implementation, with this file's own
    record of the calls it made ("calls"); `workspace` as in _probe_pytest.run."""
    record, running = [], [True]
    try:
        is_open = functools.partial(getitem, running, 0)  # bound to THIS run's flag
        run = dict(probe("_probe_pytest.py").run(source, neutral(load(kind, name), record, is_open),
                                                 workspace=workspace))
    except Exception as exc:  # the suite broke the worker or the probe: this run proves nothing
        run = {"code": -1, "passed": 0, "failed": 0, "output": f"{type(exc).__name__}: {exc}"}
    finally:
        running[0] = False
    run["calls"] = [call for call in record if call is not None]
    return run


@functools.lru_cache(maxsize=None)
def results() -> dict:
    """{(kind, name): {"code", "passed", "failed", "output", "calls"}} for every implementation;
    {} when there is no test file."""
    source = solver_test_source()
    if not source.strip():
        return {}
    found = {}
    for kind, name in run_order():
        run = found[(kind, name)] = run_once(source, kind, name)
        if kind == "good" and (run["code"] != 0 or run["failed"]):
            break  # every verdict already fails on this run; the remaining runs would prove nothing
    return found


def run_in_one_workspace(source: str, versions: list) -> list:
    """The file run against each of `versions` in turn, every run in the same fresh
    workspace (test file folder, temp dir, home), so each finds what the earlier ones left."""
    try:
        workspace = probe("_probe_pytest.py").new_workspace()
    except Exception as exc:  # noqa: BLE001 - the suite broke the worker: no run proves anything
        return [{"code": -1, "passed": 0, "failed": 0, "output": f"{type(exc).__name__}: {exc}", "calls": []}
                for _ in versions]
    try:
        return [run_once(source, kind, name, workspace=workspace) for kind, name in versions]
    finally:
        try:
            probe("_probe_pytest.py").remove_workspace(workspace)
        except Exception:  # noqa: BLE001 - a workspace left behind changes no verdict
            pass


@functools.lru_cache(maxsize=None)
def runs_after_another(buggy_name: str) -> dict:
    """Each run first in a fresh workspace (alone), and second after the other one there:
    {"buggy alone", "correct after buggy", "correct alone", "buggy after correct"}."""
    source = solver_test_source()
    buggy, correct = ("buggy", buggy_name), ("good", STANDALONE_CORRECT)
    buggy_alone, correct_after = run_in_one_workspace(source, [buggy, correct])
    correct_alone, buggy_after = run_in_one_workspace(source, [correct, buggy])
    return {"buggy alone": buggy_alone, "correct after buggy": correct_after,
            "correct alone": correct_alone, "buggy after correct": buggy_after}


def verdict(run: dict) -> tuple:
    """What a run decided, as counted: exit code, tests passed, tests failed."""
    return (run["code"], run["passed"], run["failed"])


def behaviour(module, call) -> tuple:
    """What one call does: ("raises", type) or ("returns", result, written arguments),
    run on fresh copies of the recorded arguments."""
    args, kwargs = call
    args, kwargs = tuple(_copy(a) for a in args), {k: _copy(a) for k, a in kwargs.items()}
    try:
        result, written = invoke(module, args, kwargs)
    except Exception as exc:  # noqa: BLE001 - the exception is the behaviour
        return ("raises", type(exc).__name__)
    return ("returns", result, written)


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


def same_behaviour(a: tuple, b: tuple) -> bool:
    if a[0] != b[0] or a[0] == "raises":
        return a == b
    written_a, written_b = dict(a[2]), dict(b[2])
    if written_a.keys() != written_b.keys():
        return False
    if any(not values_close(written_a[key], written_b[key], 0.0) for key in written_a):
        return False
    return _results_same(a[1], b[1])


def distinguishing_calls(name: str) -> list:
    """The calls the run against buggy version `name` made on which that version behaves
    differently from the correct one, recomputed here from this file's own record."""
    return revealing_calls(name, results().get(("buggy", name), {}))


def revealing_calls(name: str, run: dict) -> list:
    buggy, good = load("buggy", name), load("good", REFERENCE_VERSION)
    return [call for call in run.get("calls", []) if not same_behaviour(behaviour(buggy, call), behaviour(good, call))]


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
    return ((make(batch, heads, q_len, d), make(batch, key_heads, k_len, d), make(batch, key_heads, k_len, dv)),
            kwargs)


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
    return behaviour(load(kind, name), battery()[index])


@functools.lru_cache(maxsize=None)
def _battery_exact(index: int) -> tuple:
    args, kwargs = battery()[index]
    return exact(*args, **kwargs)


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must behave differently from the correct one somewhere on the
    documented domain, or no test file could be asked to catch it."""
    return any(not same_behaviour(_battery_behaviour("buggy", name, i), _battery_behaviour("good", REFERENCE_VERSION, i))
               for i in range(len(battery())))


def meets_the_contract(name: str, index: int) -> bool:
    """One correct implementation on one battery call: the kind and dtype of the inputs,
    within the promise of the exact values, and no argument written to."""
    kind = _array_kind(battery()[index][0][0])
    seen = _battery_behaviour("good", name, index)
    if seen[0] != "returns" or seen[2] or not isinstance(seen[1], tuple) or len(seen[1]) != 2:
        return False
    return all(_array_kind(got)[:2] == kind[:2] and values_close(got, want, PROMISED[kind[1]])
               for got, want in zip(seen[1], _battery_exact(index)))


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> bool:
    return all(meets_the_contract(name, i) for name in GOOD_VERSIONS for i in range(len(battery())))


def functions_without_assertions(source: str) -> list[str]:
    """Names of test functions (module level or inside Test* classes) that check nothing: no
    assert statement, no pytest.raises / warns / fail, no call to a function named assert...
    (np.testing.assert_allclose, torch.testing.assert_close), and no call to a module-level
    helper function of the file that itself checks. Read from the source, never run here."""
    tree = ast.parse(source)
    functions = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.startswith("Test")):
        functions += [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    helpers = {f.name for f in tree.body
               if isinstance(f, ast.FunctionDef) and not f.name.startswith("test") and _asserts(f, set())}
    return [f.name for f in functions if f.name.startswith("test") and not _asserts(f, helpers)]


def _called_name(node) -> str:
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return node.func.id if isinstance(node.func, ast.Name) else ""


def _asserts(function, helpers: set) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            name = _called_name(node)
            if name in {"raises", "warns", "fail"} or name.startswith("assert") or name in helpers:
                return True
    return False
