"""Grade the solver's test_lowp.py by running it (in the solution's process, one run per
implementation, see _suite.py): it must pass against every correct implementation, hold
enough real tests, fail against every buggy version of lowp.py for a reason that shows in
what the run asked that version, and decide the same when an earlier run went first."""
import pathlib

import pytest

from sb.judge import solution_source

from _suite import STANDALONE_BUGGY, SUITE, correct_versions_meet_the_contract, version_really_differs

MIN_TESTS = 10
AS_SHOWN = pathlib.Path(__file__).parent / "_good" / "as_shown" / "lowp.py"


def test_lowp_py_is_left_as_given():
    assert solution_source("lowp.py") == AS_SHOWN.read_text(encoding="utf-8"), "lowp.py was changed"
    SUITE.check_passes_on_every_correct_version()


def test_passes_against_every_correct_module():
    SUITE.check_passes_on_every_correct_version()
    # a guard for the grader itself: every correct implementation returns the codes of an
    # exact rational model of the contract, and all of them the same bits on every call
    assert correct_versions_meet_the_contract()


def test_has_enough_passing_tests():
    SUITE.check_enough_tests(MIN_TESTS)


def test_every_test_asserts_something():
    SUITE.check_every_test_asserts()


@pytest.mark.parametrize("version", SUITE.buggy)
def test_catches_buggy_version(version):
    assert version_really_differs(version)
    SUITE.check_catches(version)


@pytest.mark.parametrize("version", STANDALONE_BUGGY)
def test_each_run_stands_on_its_own(version):
    assert version_really_differs(version)
    SUITE.check_runs_stand_alone(version)
