"""The judge's side of grading the solver's test_money.py.

The solver's tests are solution code, so they run in the worker (_probe_pytest.py), once
per implementation of money. The implementations are hidden-test code and stay HERE: each
run gets two neutral callables (the same names and code for every implementation) that
call into one implementation in this process, record every call, and re-raise what it
raises as a fresh exception of the same type and arguments (so no traceback of an
implementation file crosses). Runs go in a fixed shuffled order, one probe call each, so at
any run the worker has never seen a later implementation and is never told which runs are
correct. Each of those runs has a folder of its own; after them, a few more runs share a
workspace two by two (runs_after_another), so that a file which leaves something for a
later run to find is caught whatever the shuffled order happened to be.

A buggy implementation counts as caught only when the run failed AND this file's own record
shows that the run called that implementation with arguments on which it behaves
differently from the correct one: a suite that fails for another reason (state carried
between runs, randomness, a forged report) does not catch anything."""
import ast
import functools
import importlib.util
import pathlib
import random
from operator import getitem

from sb.judge import probe, solution_source

HERE = pathlib.Path(__file__).parent
SOLVER_TESTS = "test_money.py"
GOOD_VERSIONS = sorted(p.name for p in (HERE / "_good").iterdir() if p.is_dir())
BUGGY_VERSIONS = sorted(p.name for p in (HERE / "_buggy").iterdir() if p.is_dir())
REFERENCE_VERSION = "as_shown"  # the correct implementation the solver is shown, as the oracle for calls
RUN_ORDER_SEED = 1  # chosen so that a buggy version runs first and the correct ones run far apart
DATA_TYPES = (int, bool, float, str, type(None))
# The runs that must not depend on an earlier one: a correct version, and a buggy version of
# each function, the one that departs on the most inputs (remainder_dropped: every uneven
# split; sign_after_dollar: every negative amount), so that what a run records differs.
STANDALONE_CORRECT = "rewritten"
STANDALONE_BUGGY = ("remainder_dropped", "sign_after_dollar")


def solver_test_source() -> str:
    try:
        return solution_source(SOLVER_TESTS)
    except OSError:
        return ""


@functools.lru_cache(maxsize=None)
def load(kind: str, name: str):
    """One implementation, executed HERE: it is hidden-test code, never the solver's."""
    path = HERE / f"_{kind}" / name / "money.py"
    spec = importlib.util.spec_from_file_location(f"_money_{kind}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fresh(exc: Exception) -> Exception:
    try:
        return type(exc)(*exc.args) if type(exc).__module__ == "builtins" else RuntimeError(str(exc))
    except Exception:  # an exception type whose constructor wants other arguments
        return RuntimeError(str(exc))


def _is_data(value) -> bool:
    return type(value) in DATA_TYPES


def neutral(module, record: list, is_open):
    """The two callables one run receives: identical for every implementation. They answer
    only while their run is in progress (`is_open()`), so a later run cannot reach back to
    an earlier implementation, neither to learn from it nor to add calls to its record."""
    def call(function_name, args, kwargs):
        if not is_open():
            raise RuntimeError("this implementation's run is over")
        if all(_is_data(a) for a in args) and all(_is_data(v) for v in kwargs.values()):
            record.append((function_name, tuple(args), tuple(sorted(kwargs.items()))))
        try:
            return getattr(module, function_name)(*args, **kwargs)
        except Exception as exc:
            raise _fresh(exc) from None

    def split_amount(*args, **kwargs):
        return call("split_amount", args, kwargs)

    def format_cents(*args, **kwargs):
        return call("format_cents", args, kwargs)

    return split_amount, format_cents


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
        run = dict(probe("_probe_pytest.py").run(source, *neutral(load(kind, name), record, is_open),
                                                 workspace=workspace))
    except Exception as exc:  # the suite broke the worker or the probe: this run proves nothing
        run = {"code": -1, "passed": 0, "failed": 0, "output": f"{type(exc).__name__}: {exc}"}
    finally:
        running[0] = False
    run["calls"] = record
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
    {"buggy alone", "correct after buggy", "correct alone", "buggy after correct"}. A file
    whose verdict depends on an earlier run (a snapshot it records, a marker it leaves, in
    its folder, the temp dir or the home) gives a second run that differs from the first,
    whatever order the main runs happen to take."""
    source = solver_test_source()
    buggy, correct = ("buggy", buggy_name), ("good", STANDALONE_CORRECT)
    buggy_alone, correct_after = run_in_one_workspace(source, [buggy, correct])
    correct_alone, buggy_after = run_in_one_workspace(source, [correct, buggy])
    return {"buggy alone": buggy_alone, "correct after buggy": correct_after,
            "correct alone": correct_alone, "buggy after correct": buggy_after}


def verdict(run: dict) -> tuple:
    """What a run decided, as counted: exit code, tests passed, tests failed."""
    return (run["code"], run["passed"], run["failed"])


def behaviour(module, function_name, args, kwargs) -> tuple:
    """What one call does, exactly: the result with its type, or the exception type and text."""
    try:
        value = getattr(module, function_name)(*args, **dict(kwargs))
    except Exception as exc:  # noqa: BLE001 - the exception is the behaviour
        return ("raises", type(exc).__name__, str(exc))
    return ("returns", _typed(value))


def _typed(value):
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_typed(v) for v in value))
    return (type(value).__name__, repr(value))


def distinguishing_calls(name: str) -> list:
    """The calls the run against buggy version `name` made on which that version behaves
    differently from the correct one, recomputed here from this file's own record."""
    return revealing_calls(name, results().get(("buggy", name), {}))


def revealing_calls(name: str, run: dict) -> list:
    """The calls in `run` (a run against buggy version `name`) on which that version behaves
    differently from the correct one."""
    buggy, good = load("buggy", name), load("good", REFERENCE_VERSION)
    seen, found = set(), []
    for call in run.get("calls", []):
        if call in seen:
            continue
        seen.add(call)
        if behaviour(buggy, *call) != behaviour(good, *call):
            found.append(call)
    return found


def battery() -> list:
    """Calls over the documented domain (ints, bools are ints too), for the guards below."""
    calls = [("split_amount", (t, p), ()) for t in range(-3, 40) for p in range(-2, 8)]
    calls += [("split_amount", (t, p), ()) for t in (10**6 + 7, 2**64 + 5) for p in (1, 3, 7, 12)]
    calls += [("split_amount", (True, 2), ()), ("split_amount", (5, True), ())]
    cents = list(range(-1500, 1500, 7)) + [10**k + d for k in range(3, 25) for d in (-1, 0, 1, 999)]
    calls += [("format_cents", (c,), ()) for c in cents + [-c for c in cents] + [True, False]]
    return calls


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """Guard for the grader itself: a buggy version must behave differently from the correct
    one somewhere on the documented domain, or no test file could be asked to catch it."""
    buggy, good = load("buggy", name), load("good", REFERENCE_VERSION)
    return any(behaviour(buggy, *c) != behaviour(good, *c) for c in battery())


@functools.lru_cache(maxsize=None)
def correct_versions_agree() -> bool:
    """Guard for the grader itself: every correct implementation behaves the same on ints."""
    modules = [load("good", name) for name in GOOD_VERSIONS]
    return all(behaviour(m, *c) == behaviour(modules[0], *c) for c in battery() for m in modules[1:])


def functions_without_assertions(source: str) -> list[str]:
    """Names of test functions (module level or inside Test* classes) that check nothing:
    no assert statement, no pytest.raises / warns / fail, and no call to a module-level
    helper function of the file that itself asserts. Read from the source, never run here."""
    tree = ast.parse(source)
    functions = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.startswith("Test")):
        functions += [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    helpers = {f.name for f in tree.body
               if isinstance(f, ast.FunctionDef) and not f.name.startswith("test") and _asserts(f, set())}
    return [f.name for f in functions if f.name.startswith("test") and not _asserts(f, helpers)]


def _asserts(function, helpers: set) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in {"raises", "warns", "fail"}:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            return True
    return False
