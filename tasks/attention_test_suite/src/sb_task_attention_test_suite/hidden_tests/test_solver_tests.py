"""Grade the solver's test_attention.py by running it (in the solution's process, one run per
implementation, see _suite.py): it must pass against every correct implementation, hold
enough real tests, fail against every buggy version of attention.py for a reason that shows
in what the run asked that version, and decide the same when an earlier run went first."""
import pytest

from _suite import BUGGY_VERSIONS, GOOD_VERSIONS, STANDALONE_BUGGY, correct_versions_meet_the_contract, \
    distinguishing_calls, functions_without_assertions, results, revealing_calls, run_order, runs_after_another, \
    solver_test_source, verdict, version_really_differs

MIN_TESTS = 8


def assert_passes_on_every_correct_module():
    assert solver_test_source().strip(), "test_attention.py is missing or empty"
    runs = results()
    for name in GOOD_VERSIONS:
        good = runs.get(("good", name), {"code": -1, "failed": 0, "output": "no run"})
        assert good["code"] == 0 and good["failed"] == 0, \
            f"the tests fail against a correct attention.py:\n{good['output']}"
    # Guards for the grader itself (not for the solver): every correct implementation keeps
    # the stated contract against a brute-force float64 model, and the run order neither
    # starts with nor bunches up the correct ones.
    assert correct_versions_meet_the_contract()
    order = [kind for kind, _ in run_order()]
    good_positions = [i for i, kind in enumerate(order) if kind == "good"]
    assert order[0] == "buggy" and good_positions[-1] - good_positions[0] > 3


def test_passes_against_every_correct_module():
    assert_passes_on_every_correct_module()


def test_has_enough_passing_tests():
    assert_passes_on_every_correct_module()
    for name in GOOD_VERSIONS:
        passed = results()[("good", name)]["passed"]
        assert passed >= MIN_TESTS, f"only {passed} tests passed; at least {MIN_TESTS} are required"


def test_every_test_asserts_something():
    assert_passes_on_every_correct_module()
    lazy = functions_without_assertions(solver_test_source())
    assert not lazy, f"test functions that check nothing: {lazy}"


@pytest.mark.parametrize("version", BUGGY_VERSIONS)
def test_catches_buggy_version(version):
    assert_passes_on_every_correct_module()
    assert version_really_differs(version)
    run = results()[("buggy", version)]
    assert run["code"] == 1, (f"the tests did not catch the bug in version {version!r} "
                              f"(pytest exit code {run['code']}):\n{run['output']}")
    assert distinguishing_calls(version), (
        f"the run against version {version!r} failed, but no call it made behaves differently "
        f"there from the correct module beyond rounding: it failed for another reason (a "
        f"tolerance tighter than promised, state kept between runs, the order of runs), which "
        f"catches nothing:\n{run['output']}")


@pytest.mark.parametrize("version", STANDALONE_BUGGY)
def test_each_run_stands_on_its_own(version):
    """Two fresh workspaces (the file's folder, the temp dir, the home), each used by two runs
    in turn: buggy then correct, correct then buggy. Each second run must decide exactly as
    the same implementation's first run, alone, did; and alone, the correct run passes and
    the buggy run fails through a revealing call."""
    assert_passes_on_every_correct_module()
    assert version_really_differs(version)
    runs = runs_after_another(version)
    alone = runs["correct alone"]
    assert alone["code"] == 0 and alone["failed"] == 0, \
        f"the tests fail against a correct attention.py in a fresh folder:\n{alone['output']}"
    alone = runs["buggy alone"]
    assert alone["code"] == 1 and revealing_calls(version, alone), \
        f"in a fresh folder the tests do not catch the bug in version {version!r}:\n{alone['output']}"
    for second, first in (("correct after buggy", "correct alone"), ("buggy after correct", "buggy alone")):
        assert verdict(runs[second]) == verdict(runs[first]), (
            f"run in the folder an earlier run used, the tests decide differently (exit code, "
            f"passed, failed: {verdict(runs[second])} {second}, {verdict(runs[first])} alone): "
            f"a run depends on an earlier one:\n{runs[second]['output']}")
    assert revealing_calls(version, runs["buggy after correct"])
