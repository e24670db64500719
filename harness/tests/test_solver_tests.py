"""sb.solver_tests, the author's API for test-writing tasks: its judge-side parts called
directly (what a call did, when two behaviours are alike, which test functions check
nothing), then a real grading of tasks/test's reference and of a file that only passes."""

import json
import subprocess
import sys
import types

import numpy as np
import pytest
import torch

from sb import solver_tests
from sb.solver_tests import behaviour, exactly_alike, functions_without_assertions, is_data

from conftest import sb_env

SB = [sys.executable, "-c", "from sb.cli import main; main()"]


def _module(**functions):
    return types.SimpleNamespace(**functions)


def _scale_in_place(x, factor):
    x *= factor
    return float(x.sum())


def test_a_behaviour_is_the_result_and_every_array_argument_written_to_on_fresh_copies():
    x = np.arange(3.0)
    seen = behaviour(_module(f=_scale_in_place), ("f", (x,), {"factor": 2.0}))
    assert seen[0] == "returns" and seen[1] == 6.0
    (where, contents), = seen[2]
    assert where == 0 and contents.tolist() == [0.0, 2.0, 4.0]
    assert x.tolist() == [0.0, 1.0, 2.0]                        # the recorded arguments are never touched
    t = torch.ones(2, requires_grad=True)
    seen = behaviour(_module(f=lambda a: a * 2), ("f", (t,), {}))
    assert seen[2] == [] and seen[1].tolist() == [2.0, 2.0]


def test_an_exception_is_its_type_and_text():
    def fails(n):
        raise ValueError(f"bad {n}")
    assert behaviour(_module(f=fails), ("f", (3,), {})) == ("raises", "ValueError", "bad 3")


def test_exactly_alike_tells_types_bits_and_written_arguments_apart():
    same = ("returns", [1, (2, "a")], [])
    assert exactly_alike(same, ("returns", [1, (2, "a")], []))
    assert not exactly_alike(same, ("returns", [1, [2, "a"]], []))          # a list is not a tuple
    assert not exactly_alike(("returns", 1, []), ("returns", True, []))       # nor a bool an int
    assert not exactly_alike(("returns", 1, []), ("returns", 1.0, []))
    f32, f64 = np.zeros(2, np.float32), np.zeros(2, np.float64)
    assert not exactly_alike(("returns", f32, []), ("returns", f64, []))
    assert not exactly_alike(("returns", np.array([0.0]), []), ("returns", np.array([-0.0]), []))
    assert not exactly_alike(("returns", None, [(0, f32)]), ("returns", None, []))
    assert not exactly_alike(("raises", "ValueError", "a"), ("raises", "ValueError", "b"))
    assert not exactly_alike(("raises", "ValueError", "a"), ("returns", None, []))


def test_only_data_is_recorded():
    assert is_data((1, 2.5, "s", b"b", None, np.ones(2), torch.ones(1), [{"k": (1,)}]))
    assert not is_data((object(),))
    assert not is_data([lambda: 0])


def test_functions_without_assertions_are_named():
    source = '''
import numpy as np
import pytest

def _check(x):
    assert x

def helper(x):
    return x

def run_case(x):
    return _check(x)

def looping(x):
    return looping(x) or helper(x)

def test_asserts():
    assert 1

def test_raises():
    with pytest.raises(ValueError):
        int("x")

def test_numpy_assert():
    np.testing.assert_allclose(1, 1)

def test_through_a_checking_helper():
    _check(1)

def test_through_a_helper_that_checks_nothing():
    helper(1)

def test_through_a_helper_of_a_checking_helper():
    run_case(1)

def test_through_a_recursive_helper_that_checks_nothing():
    looping(1)

class TestGroup:
    def test_nothing(self):
        pass
'''
    assert functions_without_assertions(source) == ["test_through_a_helper_that_checks_nothing",
                                                    "test_through_a_recursive_helper_that_checks_nothing",
                                                    "test_nothing"]


def test_the_worker_side_ships_with_the_judge():
    """The probe is sent as source from the judge's own copy of the package, and the patch
    reader buggy versions are stored with lies beside it."""
    from sb.grading import JUDGE_HELPERS
    assert {"solver_tests.py", "_solver_tests_probe.py", "mutant_patch.py"} <= set(JUDGE_HELPERS)
    assert solver_tests._PROBE.endswith(".py")


@pytest.mark.parametrize("answer, status", [("reference", "passed"), ("happy_path_only", "failed")])
def test_a_test_writing_task_is_graded_through_it(tmp_path, answer, status):
    """tasks/test's hidden tests are SolverTests' checks: its reference passes, and a file
    that tests only the happy path misses buggy versions."""
    flag = ["--reference"] if answer == "reference" else ["--mutant", answer]
    subprocess.run([*SB, "export", "test", str(tmp_path / "a"), *flag], check=True, env=sb_env(), capture_output=True)
    done = subprocess.run([*SB, "grade", "test", str(tmp_path / "a"), "--json"], env=sb_env(), capture_output=True,
                          text=True)
    verdict = json.loads(done.stdout)
    assert verdict["status"] == status, verdict["detail"]
    if status == "failed":
        failed = verdict["failed_tests"]
        assert any("test_catches_buggy_version" in t for t in failed)
        assert "test_solver_tests.py::test_passes_against_every_correct_module" not in failed


_SHOWN = "def half(x):\n    return x / 2\n\n\ndef twice(x):\n    return x * 2\n"


def _suite_folder(tmp_path, patch: str):
    (tmp_path / "_good" / "as_shown").mkdir(parents=True)
    (tmp_path / "_good" / "as_shown" / "m.py").write_text(_SHOWN)
    (tmp_path / "_buggy" / "whole").mkdir(parents=True)
    (tmp_path / "_buggy" / "whole" / "m.py").write_text(_SHOWN.replace("x * 2", "x + x + 1"))
    (tmp_path / "_buggy" / "floor_half.patch").write_text(patch)
    return solver_tests.SolverTests(tmp_path, test_file="test_m.py", module="m", functions=("half", "twice"),
                                    run_order_seed=0, standalone_correct="as_shown")


def test_a_buggy_version_is_a_patch_of_the_shown_one_or_a_whole_file(tmp_path):
    """NAME.patch is the shown module with the patch's lines changed; NAME/m.py is read whole."""
    suite = _suite_folder(tmp_path, "caught: halves with floor division\n--- a/m.py\n+++ b/m.py\n"
                                    "@@ -2 +2 @@\n-    return x / 2\n+    return x // 2\n")
    assert suite.buggy == ["floor_half", "whole"]
    assert suite.load("buggy", "floor_half").half(3) == 1 and suite.load("buggy", "floor_half").twice(3) == 6
    assert suite.load("buggy", "whole").twice(3) == 7
    assert suite.load("good", "as_shown").half(3) == 1.5


def test_a_patch_that_no_longer_applies_to_the_shown_version_fails_loudly(tmp_path):
    """A patch written against an older shown version names the line instead of grading a third version."""
    suite = _suite_folder(tmp_path, "caught: stale\n--- a/m.py\n+++ b/m.py\n"
                                    "@@ -2 +2 @@\n-    return x / 3\n+    return x // 3\n")
    with pytest.raises(ValueError, match="m.py"):
        suite.load("buggy", "floor_half")


def test_one_buggy_version_in_two_forms_is_refused(tmp_path):
    suite_folder = _suite_folder(tmp_path, "caught: x\n--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-    return x / 2\n"
                                           "+    return x // 2\n").folder
    (suite_folder / "_buggy" / "floor_half").mkdir()
    with pytest.raises(ValueError, match="floor_half"):
        solver_tests.buggy_names(suite_folder / "_buggy")


_FLOOR_HALF = ("caught: halves with floor division\n--- a/m.py\n+++ b/m.py\n"
               "@@ -2 +2 @@\n-    return x / 2\n+    return x // 2\n")


def test_standard_checks_are_the_five_named_checks_over_every_buggy_version(tmp_path):
    """Every test-writing task's test_solver_tests.py is this call: its names are the ids contract.yaml cites."""
    suite = _suite_folder(tmp_path, _FLOOR_HALF)
    checks = solver_tests.standard_checks(suite, min_tests=3, correct_versions_hold=lambda: True,
                                          really_differs=lambda name: True, standalone=("whole",),
                                          shown_file_unchanged=True)
    assert list(checks) == ["test_m_py_is_left_as_given", "test_passes_against_every_correct_module",
                            "test_has_enough_passing_tests", "test_every_test_asserts_something",
                            "test_catches_buggy_version", "test_each_run_stands_on_its_own"]
    params = {name: [mark.args for mark in getattr(check, "pytestmark", [])] for name, check in checks.items()}
    assert params["test_catches_buggy_version"] == [("version", ["floor_half", "whole"])]
    assert params["test_each_run_stands_on_its_own"] == [("version", ("whole",))]


@pytest.mark.parametrize("held", [False, ["a correct version returned 2 for half(3)"]])
def test_a_guard_that_finds_a_correct_version_wrong_fails_the_correct_versions_check(tmp_path, held, monkeypatch):
    suite = _suite_folder(tmp_path, _FLOOR_HALF)
    monkeypatch.setattr(suite, "check_passes_on_every_correct_version", lambda: None)
    checks = solver_tests.standard_checks(suite, min_tests=3, correct_versions_hold=lambda: held,
                                          really_differs=lambda name: True, standalone=())
    with pytest.raises(AssertionError, match="grader defect"):
        checks["test_passes_against_every_correct_module"]()


def test_a_buggy_version_that_departs_nowhere_fails_before_any_run(tmp_path):
    suite = _suite_folder(tmp_path, _FLOOR_HALF)
    checks = solver_tests.standard_checks(suite, min_tests=3, correct_versions_hold=lambda: True,
                                          really_differs=lambda name: name != "whole", standalone=())
    with pytest.raises(AssertionError, match="'whole' departs nowhere"):
        checks["test_catches_buggy_version"]("whole")


def test_every_test_writing_task_judges_with_exactly_the_module_its_solver_is_shown():
    """_good/as_shown is the judge's copy of the starter's module (the judge never reads the
    starter): a copy that drifted would grade the solver's tests against another module."""
    from sb.plugins import load_plugins
    from sb.catalog import load_tasks
    checked = 0
    for task in load_tasks(load_plugins()).values():
        shown = {name.removeprefix("_good/as_shown/"): data for name, data in task.hidden_test_files.items()
                 if name.startswith("_good/as_shown/") and "__pycache__" not in name}
        for name, data in shown.items():
            assert task.starter_files.get(name) == data, f"{task.slug}: _good/as_shown/{name} is not starter/{name}"
            checked += 1
    assert checked >= 14
