"""Grade the solver's test_money.py by running it (in the solution's process, one run per
implementation, see _suite.py): it must pass against every correct implementation, hold
enough real tests, and fail against every buggy version of money.py for a reason that
shows in what the run asked that version."""
import pytest

from _suite import BUGGY_VERSIONS, GOOD_VERSIONS, correct_versions_agree, distinguishing_calls, \
    functions_without_assertions, results, run_order, solver_test_source, version_really_differs

MIN_TESTS = 6


def assert_passes_on_every_correct_module():
    assert solver_test_source().strip(), "test_money.py is missing or empty"
    runs = results()
    for name in GOOD_VERSIONS:
        good = runs.get(("good", name), {"code": -1, "failed": 0, "output": "no run"})
        assert good["code"] == 0 and good["failed"] == 0, \
            f"the tests fail against a correct money.py:\n{good['output']}"
    # Guards for the grader itself (not for the solver): the correct implementations agree,
    # and the run order neither starts with nor bunches up the correct ones.
    assert correct_versions_agree()
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
    assert not lazy, f"test functions with no assert or pytest.raises: {lazy}"


@pytest.mark.parametrize("version", BUGGY_VERSIONS)
def test_catches_buggy_version(version):
    assert_passes_on_every_correct_module()
    assert version_really_differs(version)
    run = results()[("buggy", version)]
    assert run["code"] == 1, (f"the tests did not catch the bug in version {version!r} "
                              f"(pytest exit code {run['code']}):\n{run['output']}")
    assert distinguishing_calls(version), (
        f"the run against version {version!r} failed, but no call it made behaves differently "
        f"there from the correct module: it failed for another reason (state kept between runs, "
        f"randomness, the order of runs), which catches nothing:\n{run['output']}")
