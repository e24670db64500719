"""Grading a test file the solver wrote: the author's API for test-writing tasks.

A test-writing task hands the solver a correct module and asks for a pytest file that passes
against every correct implementation and fails against buggy ones it never sees. The
solver's file is solution code, so it runs in the worker (sb/_solver_tests_probe.py, shipped
as a probe), once per implementation. The implementations are hidden-test code and stay in
the judge: each run gets one neutral handle, the same for every implementation, that runs
one implementation's named function here on copies of the arguments, records every call,
answers the result and the array arguments it wrote to, and re-raises what it raises as a
fresh exception of the same type and arguments (no traceback of an implementation file
crosses). Runs go in a fixed shuffled order, so the worker never sees a later
implementation and is never told which runs are correct. After them, a few runs share a
workspace two by two (`runs_after_another`), so a file that leaves something for a later
run to find is caught whatever the shuffled order happened to be.

A buggy implementation counts as caught only when its run failed AND the judge's own
record shows that the run called it with arguments on which it behaves differently from
the correct one (`revealing_calls`): a file that fails for another reason (a tolerance
tighter than promised, state kept between runs, randomness) catches nothing.

A task's hidden tests use it like this (tasks/test is the smallest example):

    SUITE = SolverTests(HERE, test_file="test_money.py", module="money",
                        functions=("split_amount", "format_cents"), run_order_seed=1,
                        standalone_correct="rewritten")

with `HERE/_good/NAME/money.py` the correct implementations (`as_shown` among them: the one
the solver is shown, the oracle for calls) and the buggy ones either as `HERE/_buggy/NAME.patch`,
the lines a buggy version changes in the one shown (sb.mutant_patch's format, headed
`caught: WHAT IS WRONG`), or as a whole file `HERE/_buggy/NAME/money.py`. Its
test_solver_tests.py is then `standard_checks(SUITE, ...)`: the same five checks under the
same names in every such task.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import random
import types
from importlib import resources
from operator import getitem
from pathlib import Path

from sb import mutant_patch
from sb.judge import shipped_probe, solution_source

_PROBE = "_sb_solver_tests_probe.py"
_FAILED_RUN = {"code": -1, "passed": 0, "failed": 0, "calls": []}


def fresh_exception(exc: Exception) -> Exception:
    """An exception of the same built-in type and arguments, with no traceback (or a RuntimeError)."""
    try:
        return type(exc)(*exc.args) if type(exc).__module__ == "builtins" else RuntimeError(str(exc))
    except Exception:  # noqa: BLE001 - an exception type whose constructor wants other arguments
        return RuntimeError(str(exc))


def _is_array(value) -> bool:
    return type(value).__module__ in ("numpy", "torch") and hasattr(value, "shape") and hasattr(value, "dtype")


def is_data(value, depth: int = 0) -> bool:
    """A value a call can be recorded with: scalars, strings, arrays, and lists, tuples and
    dicts of them (never a handle to something in the worker)."""
    if value is None or type(value) in (bool, int, float, complex, str, bytes) or _is_array(value):
        return True
    if depth < 16 and type(value) in (list, tuple):
        return all(is_data(item, depth + 1) for item in value)
    if depth < 16 and type(value) is dict:
        return all(is_data(k, depth + 1) and is_data(v, depth + 1) for k, v in value.items())
    return False


def copy_data(value):
    """An independent copy of recorded data (a torch tensor keeps its requires_grad)."""
    if _is_array(value):
        if type(value).__module__ == "torch":
            return value.detach().clone().requires_grad_(value.requires_grad)
        return value.copy()
    if type(value) in (list, tuple):
        return type(value)(copy_data(item) for item in value)
    if type(value) is dict:
        return {key: copy_data(item) for key, item in value.items()}
    return value


def array_bits(value) -> tuple:
    """An array as (kind, dtype, shape, bytes): equal exactly when two arrays are the same bits."""
    array = value.detach().numpy() if type(value).__module__ == "torch" else value
    return (type(value).__module__, str(value.dtype), tuple(array.shape), array.tobytes())


def exact_form(value):
    """A comparable form of a result: its type and repr, recursively; arrays by their bits."""
    if _is_array(value):
        return array_bits(value)
    if type(value) in (list, tuple):
        return (type(value).__name__, tuple(exact_form(item) for item in value))
    if type(value) is dict:
        return ("dict", tuple((exact_form(k), exact_form(v)) for k, v in value.items()))
    return (type(value).__name__, repr(value))


def exactly_alike(a: tuple, b: tuple) -> bool:
    """Two behaviours (see `behaviour`) alike: the same exception type and text, or the same
    result and the same arguments written, exactly."""
    if a[0] != b[0]:
        return False
    if a[0] == "raises":
        return a == b
    return exact_form(a[1]) == exact_form(b[1]) and _written_alike(a[2], b[2])


def _written_alike(a: list, b: list) -> bool:
    a_written, b_written = dict(a), dict(b)
    return a_written.keys() == b_written.keys() and all(
        array_bits(a_written[key]) == array_bits(b_written[key]) for key in a_written)


def _written(before: tuple, after: tuple) -> list:
    """(position or keyword, new contents) of every array argument a call wrote to."""
    (args0, kwargs0), (args1, kwargs1) = before, after
    changed = [(i, a) for i, (a, b) in enumerate(zip(args1, args0))
               if _is_array(a) and array_bits(a) != array_bits(b)]
    return changed + [(key, a) for key, a in kwargs1.items()
                      if _is_array(a) and array_bits(a) != array_bits(kwargs0[key])]


def invoke(function, args: tuple, kwargs: dict) -> tuple:
    """Run `function` on (args, kwargs) in place: (result, written arguments)."""
    before = (tuple(copy_data(a) for a in args), {key: copy_data(a) for key, a in kwargs.items()})
    result = function(*args, **kwargs)
    return result, _written(before, (args, kwargs))


def behaviour(module, call: tuple) -> tuple:
    """What one recorded call (function name, args, kwargs) does on fresh copies of its
    arguments: ("raises", type name, text) or ("returns", result, written arguments)."""
    name, args, kwargs = call
    args, kwargs = tuple(copy_data(a) for a in args), {k: copy_data(a) for k, a in kwargs.items()}
    try:
        result, written = invoke(getattr(module, name), args, kwargs)
    except Exception as exc:  # noqa: BLE001 - the exception is the behaviour
        return ("raises", type(exc).__name__, str(exc))
    return ("returns", result, written)


class SolverTests:
    """The solver's test file, run against every implementation in `folder`'s `_good` and
    `_buggy` subfolders (each NAME/MODULE.py), with the judge's record of every call.

    `alike(a, b)` decides whether two behaviours (see `behaviour`) are the same: exactly, by
    default; a numeric task passes one that allows rounding. `max_calls` bounds the calls
    of one run (the prompt states the budget); `standalone_correct` is the correct version
    `runs_after_another` pairs with a buggy one."""

    def __init__(self, folder, *, test_file: str, module: str, functions: tuple, run_order_seed: int,
                 standalone_correct: str, reference: str = "as_shown", alike=exactly_alike,
                 max_calls: int | None = None):
        self.folder, self.test_file, self.module, self.functions = Path(folder), test_file, module, tuple(functions)
        self.run_order_seed, self.standalone_correct, self.reference = run_order_seed, standalone_correct, reference
        self.alike, self.max_calls = alike, max_calls
        self.good = sorted(p.name for p in (self.folder / "_good").iterdir() if p.is_dir())
        self.buggy = buggy_names(self.folder / "_buggy")
        self._loaded: dict[tuple[str, str], types.ModuleType] = {}
        self._results: dict | None = None
        self._paired: dict = {}

    # ------------------------------------------------------------ the implementations

    def load(self, kind: str, name: str):
        """One implementation, executed here in the judge: hidden-test code, never the solver's."""
        if (kind, name) not in self._loaded:
            patch = self.folder / "_buggy" / f"{name}.patch"
            if kind == "buggy" and patch.is_file():
                self._loaded[(kind, name)] = self._load_patched(name, patch)
            else:
                path = self.folder / f"_{kind}" / name / f"{self.module}.py"
                spec = importlib.util.spec_from_file_location(f"_{self.module}_{kind}_{name}", path)
                assert spec is not None and spec.loader is not None  # a .py file has a source loader
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                self._loaded[(kind, name)] = module
        return self._loaded[(kind, name)]

    def patched_source(self, patch: Path) -> str:
        """A buggy version stored as a patch: the shown implementation with its lines changed."""
        file_name = f"{self.module}.py"
        shown = self.folder / "_good" / self.reference / file_name
        changed = mutant_patch.apply({file_name: shown.read_bytes()}, mutant_patch.parse(patch.read_text("utf-8")).diff)
        if set(changed) != {file_name}:
            raise mutant_patch.PatchError(f"{patch.name}: a buggy version may change only {file_name}")
        return changed[file_name].decode("utf-8")

    def _load_patched(self, name: str, patch: Path):
        module = types.ModuleType(f"_{self.module}_buggy_{name}")
        module.__file__ = str(patch)
        exec(compile(self.patched_source(patch), str(patch), "exec"), module.__dict__)  # noqa: S102 - hidden-test code
        return module

    def run_order(self) -> list:
        versions = [("good", name) for name in self.good] + [("buggy", name) for name in self.buggy]
        random.Random(self.run_order_seed).shuffle(versions)
        return versions

    def source(self) -> str:
        """The solver's test file ("" when there is none)."""
        try:
            return solution_source(self.test_file)
        except OSError:
            return ""

    # ------------------------------------------------------------ runs

    def _neutral(self, implementation, record: list, is_open):
        """The handle one run receives: identical for every implementation. It answers only
        while its run is in progress (`is_open()`), so a later run cannot reach back to an
        earlier implementation, neither to learn from it nor to add calls to its record."""
        functions, max_calls = self.functions, self.max_calls

        def call(name, args, kwargs):
            if not is_open():
                raise RuntimeError("this implementation's run is over")
            if name not in functions:
                raise AttributeError(name)
            if max_calls is not None and len(record) >= max_calls:
                raise RuntimeError(f"more than {max_calls} calls in one run")
            args, kwargs = tuple(args), dict(kwargs)
            data = is_data(args) and is_data(kwargs)
            record.append((name, copy_data(args), copy_data(kwargs)) if data else None)
            try:
                return invoke(getattr(implementation, name), args, kwargs)
            except Exception as exc:  # noqa: BLE001 - re-raised as a fresh one
                raise fresh_exception(exc) from None

        return call

    def _probe(self):
        return shipped_probe(_PROBE, resources.files("sb").joinpath("_solver_tests_probe.py").read_text("utf-8"))

    def run_once(self, kind: str, name: str, workspace=None) -> dict:
        """One run of the solver's file against one implementation, with the judge's record of
        the calls it made ("calls")."""
        record: list = []
        running = [True]
        try:
            is_open = functools.partial(getitem, running, 0)  # bound to THIS run's flag
            run = dict(self._probe().run(self.source(), self.test_file, self.module, list(self.functions),
                                         self._neutral(self.load(kind, name), record, is_open), workspace=workspace))
        except Exception as exc:  # noqa: BLE001 - the file broke the worker or the probe: this run proves nothing
            run = {**_FAILED_RUN, "output": f"{type(exc).__name__}: {exc}"}
        finally:
            running[0] = False
        run["calls"] = [call for call in record if call is not None]
        return run

    def results(self) -> dict:
        """{(kind, name): {"code", "passed", "failed", "output", "calls"}} for every
        implementation, in the run order; {} when there is no test file."""
        if self._results is None:
            self._results = {}
            if self.source().strip():
                for kind, name in self.run_order():
                    run = self._results[(kind, name)] = self.run_once(kind, name)
                    if kind == "good" and (run["code"] != 0 or run["failed"]):
                        break  # every verdict already fails on this run; the rest would prove nothing
        return self._results

    def _in_one_workspace(self, versions: list) -> list:
        """The file run against each of `versions` in turn, all in the same fresh workspace
        (test file folder, temp dir, home), so each finds what the earlier ones left."""
        try:
            workspace = self._probe().new_workspace()
        except Exception as exc:  # noqa: BLE001 - the file broke the worker: no run proves anything
            return [{**_FAILED_RUN, "output": f"{type(exc).__name__}: {exc}"} for _ in versions]
        try:
            return [self.run_once(kind, name, workspace=workspace) for kind, name in versions]
        finally:
            try:
                self._probe().remove_workspace(workspace)
            except Exception:  # noqa: BLE001 - a workspace left behind changes no verdict
                pass

    def runs_after_another(self, buggy_name: str) -> dict:
        """Each run first in a fresh workspace (alone), and second after the other one there:
        {"buggy alone", "correct after buggy", "correct alone", "buggy after correct"}."""
        if buggy_name not in self._paired:
            buggy, correct = ("buggy", buggy_name), ("good", self.standalone_correct)
            buggy_alone, correct_after = self._in_one_workspace([buggy, correct])
            correct_alone, buggy_after = self._in_one_workspace([correct, buggy])
            self._paired[buggy_name] = {"buggy alone": buggy_alone, "correct after buggy": correct_after,
                                        "correct alone": correct_alone, "buggy after correct": buggy_after}
        return self._paired[buggy_name]

    # ------------------------------------------------------------ what the runs show

    def revealing_calls(self, name: str, run: dict) -> list:
        """The calls of `run` (against buggy version `name`) on which that version behaves
        differently from the correct one, recomputed here from the judge's own record."""
        buggy, good = self.load("buggy", name), self.load("good", self.reference)
        return [call for call in run.get("calls", [])
                if not self.alike(behaviour(buggy, call), behaviour(good, call))]

    def differs_somewhere(self, name: str, calls: list) -> bool:
        """Guard for the grader itself: buggy version `name` behaves differently from the
        correct one on one of `calls` (the documented domain), or no file could catch it."""
        buggy, good = self.load("buggy", name), self.load("good", self.reference)
        return any(not self.alike(behaviour(buggy, call), behaviour(good, call)) for call in calls)

    # ------------------------------------------------------------ the checks a task's tests make

    def check_passes_on_every_correct_version(self) -> None:
        assert self.source().strip(), f"{self.test_file} is missing or empty"
        runs = self.results()
        # the runs stop at the first correct version that fails: that run is the one to show
        failing = [runs[key] for key in runs if key[0] == "good" and (runs[key]["code"] or runs[key]["failed"])]
        assert not failing, f"the tests fail against a correct {self.module}.py:\n{failing[0]['output']}"
        assert all(("good", name) in runs for name in self.good), "a correct version was not run"
        # a guard for the grader itself: the run order neither starts with nor bunches up the correct ones
        order = [kind for kind, _ in self.run_order()]
        good_positions = [i for i, kind in enumerate(order) if kind == "good"]
        assert order[0] == "buggy" and good_positions[-1] - good_positions[0] > 3

    def check_enough_tests(self, minimum: int) -> None:
        self.check_passes_on_every_correct_version()
        for name in self.good:
            passed = self.results()[("good", name)]["passed"]
            assert passed >= minimum, f"only {passed} tests passed; at least {minimum} are required"

    def check_every_test_asserts(self) -> None:
        self.check_passes_on_every_correct_version()
        lazy = functions_without_assertions(self.source())
        assert not lazy, f"test functions that check nothing: {lazy}"

    def check_catches(self, name: str) -> None:
        self.check_passes_on_every_correct_version()
        run = self.results()[("buggy", name)]
        assert run["code"] == 1, (f"the tests did not catch the bug in version {name!r} "
                                  f"(pytest exit code {run['code']}):\n{run['output']}")
        assert self.revealing_calls(name, run), (
            f"the run against version {name!r} failed, but no call it made behaves differently there "
            f"from the correct module: it failed for another reason (a tolerance tighter than promised, "
            f"state kept between runs, the order of runs), which catches nothing:\n{run['output']}")

    def check_runs_stand_alone(self, name: str) -> None:
        """Two fresh workspaces, each used by two runs in turn: buggy then correct, correct
        then buggy. Each second run decides exactly as the same implementation's first run,
        alone, did; alone, the correct run passes and the buggy run fails through a revealing call."""
        self.check_passes_on_every_correct_version()
        runs = self.runs_after_another(name)
        alone = runs["correct alone"]
        assert alone["code"] == 0 and alone["failed"] == 0, \
            f"the tests fail against a correct {self.module}.py in a fresh folder:\n{alone['output']}"
        alone = runs["buggy alone"]
        assert alone["code"] == 1 and self.revealing_calls(name, alone), \
            f"in a fresh folder the tests do not catch the bug in version {name!r}:\n{alone['output']}"
        for second, first in (("correct after buggy", "correct alone"), ("buggy after correct", "buggy alone")):
            assert verdict(runs[second]) == verdict(runs[first]), (
                f"run in the folder an earlier run used, the tests decide differently (exit code, passed, "
                f"failed: {verdict(runs[second])} {second}, {verdict(runs[first])} alone): a run depends on an "
                f"earlier one:\n{runs[second]['output']}")
        assert self.revealing_calls(name, runs["buggy after correct"])


def standard_checks(suite: SolverTests, *, min_tests: int, correct_versions_hold, really_differs,
                    standalone: tuple, shown_file_unchanged: bool = False) -> dict:
    """The hidden tests every test-writing task makes, as pytest test functions under the names
    contract.yaml files cite; a task's test_solver_tests.py puts them in its namespace:

        globals().update(standard_checks(SUITE, min_tests=8, correct_versions_hold=...,
                                         really_differs=version_really_differs,
                                         standalone=STANDALONE_BUGGY))

    `correct_versions_hold()` is the task's guard for the grader itself (every correct version
    keeps the contract against an independent model): it returns True, or the list of what
    failed, empty when nothing did. `really_differs(name)` is the guard that a buggy version
    departs somewhere on the documented domain. `standalone` names the buggy versions whose
    runs must decide the same after another run in one folder. With `shown_file_unchanged`
    the module the solver was shown must be left exactly as given."""
    import pytest  # only a task's hidden tests, run under pytest, build these

    def test_passes_against_every_correct_module():
        suite.check_passes_on_every_correct_version()
        held = correct_versions_hold()
        assert held is True or held == [], f"a correct version breaks the contract (a grader defect): {held}"

    def test_has_enough_passing_tests():
        suite.check_enough_tests(min_tests)

    def test_every_test_asserts_something():
        suite.check_every_test_asserts()

    @pytest.mark.parametrize("version", suite.buggy)
    def test_catches_buggy_version(version):
        assert really_differs(version), f"buggy version {version!r} departs nowhere (a grader defect)"
        suite.check_catches(version)

    @pytest.mark.parametrize("version", standalone)
    def test_each_run_stands_on_its_own(version):
        assert really_differs(version), f"buggy version {version!r} departs nowhere (a grader defect)"
        suite.check_runs_stand_alone(version)

    checks = [test_passes_against_every_correct_module, test_has_enough_passing_tests,
              test_every_test_asserts_something, test_catches_buggy_version, test_each_run_stands_on_its_own]
    if shown_file_unchanged:
        checks.insert(0, _shown_file_check(suite))
    return {check.__name__: check for check in checks}


def _shown_file_check(suite: SolverTests):
    file_name = f"{suite.module}.py"
    shown = suite.folder / "_good" / suite.reference / file_name

    def check():
        assert solution_source(file_name) == shown.read_text(encoding="utf-8"), f"{file_name} was changed"
        suite.check_passes_on_every_correct_version()

    check.__name__ = check.__qualname__ = f"test_{suite.module}_py_is_left_as_given"
    return check


def buggy_names(folder: Path) -> list:
    """The buggy versions in `folder`: NAME.patch files and NAME/ folders (one name, one form)."""
    patches = {p.stem for p in folder.glob("*.patch")}
    folders = {p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"}
    if patches & folders:
        raise ValueError(f"buggy versions stored both as a patch and as a folder: {sorted(patches & folders)}")
    return sorted(patches | folders)


def verdict(run: dict) -> tuple:
    """What a run decided, as counted: exit code, tests passed, tests failed."""
    return (run["code"], run["passed"], run["failed"])


def functions_without_assertions(source: str) -> list:
    """Names of test functions (module level or inside Test* classes) that check nothing: no
    assert statement, no pytest.raises / warns / fail, no call to a function named assert...
    (np.testing.assert_allclose, torch.testing.assert_close), and no call to a module-level
    helper of the file that itself checks. Read from the source, never run here."""
    tree = ast.parse(source)
    functions = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.startswith("Test")):
        functions += [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    helpers = _checking_helpers(tree)
    return [f.name for f in functions if f.name.startswith("test") and not _asserts(f, helpers)]


def _checking_helpers(tree) -> set:
    """Module-level helpers that check, directly or through other such helpers at any depth
    (a helper calling a helper that asserts checks too): grown until nothing is added."""
    candidates = [f for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and not f.name.startswith("test")]
    helpers: set = set()
    while True:
        grown = {f.name for f in candidates if _asserts(f, helpers)}
        if grown == helpers:
            return helpers
        helpers = grown


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
