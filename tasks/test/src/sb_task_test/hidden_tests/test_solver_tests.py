"""Grade the solver's test_money.py by running it: it must pass against the good module,
hold enough real tests, and fail against every buggy version of money.py."""
import functools

import pytest

from _runner import BUGGY_VERSIONS, functions_without_assertions, run_all_versions, solver_test_source, \
    version_really_differs

MIN_TESTS = 6


@functools.lru_cache(maxsize=None)
def results():
    return run_all_versions()


def assert_passes_on_good_module():
    assert solver_test_source().strip(), "test_money.py is missing or empty"
    good = results().get("good", {"code": -1, "output": "the run timed out"})
    assert good["code"] == 0, f"the tests fail against the correct money.py:\n{good['output']}"


def test_passes_against_correct_module():
    assert_passes_on_good_module()


def test_has_enough_passing_tests():
    assert_passes_on_good_module()
    passed = results()["good"]["passed"]
    assert passed >= MIN_TESTS, f"only {passed} tests passed; at least {MIN_TESTS} are required"


def test_every_test_asserts_something():
    assert_passes_on_good_module()
    lazy = functions_without_assertions(solver_test_source())
    assert not lazy, f"test functions with no assert or pytest.raises: {lazy}"


@pytest.mark.parametrize("version", BUGGY_VERSIONS)
def test_catches_buggy_version(version):
    assert_passes_on_good_module()
    assert version_really_differs(version)
    run = results()[version]
    assert run["code"] == 1, (f"the tests did not catch the bug in version {version!r} "
                              f"(pytest exit code {run['code']}):\n{run['output']}")
