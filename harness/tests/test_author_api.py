"""The task author's API beyond proxy modules: `observe_call` (one call made in the worker,
its arguments brought back as the call left them, counted as observed there) and
`facade` (a judge-side object handed over with only the methods the prompt promises).
Both graded for real, through the judge, the worker and the wire."""

from __future__ import annotations

import pytest

from sb.grading import grade
from sb.judge import facade
from sb.outcome import Status

CORRECT = '''import numpy as np


def scaled(values, factor=1.0):
    return np.asarray(values, dtype=float) * factor


def reading(clock):
    return clock()
'''
IN_PLACE = CORRECT.replace("    return np.asarray(values, dtype=float) * factor",
                           "    values *= factor\n    return values")
VIEW = CORRECT.replace("    return np.asarray(values, dtype=float) * factor",
                       "    if factor == 1.0:\n        return values[:]\n"
                       "    return np.asarray(values, dtype=float) * factor")
ITSELF = VIEW.replace("return values[:]", "return values")
MOVES_THE_CLOCK = CORRECT.replace("    return clock()", "    clock.advance(-5.0)\n    return clock()")
READS_THE_RECORD = CORRECT.replace("    return clock()", "    return clock() if not clock.readings else 0.0")

TESTS = '''import numpy as np

from sb.judge import facade, observe_call
from adder import reading, scaled


class Clock:
    def __init__(self):
        self.now, self.readings = 100.0, []

    def __call__(self):
        self.readings.append(self.now)
        return self.now

    def advance(self, seconds):
        self.now += seconds


def test_scaled_values():
    np.testing.assert_array_equal(scaled(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])


def test_scaled_leaves_its_input_alone_and_returns_a_new_array():
    x = np.array([1.0, 2.0, 4.0])
    seen = observe_call("adder", "scaled", x, factor=2.0)
    np.testing.assert_array_equal(seen.args[0], x)
    assert seen.kwargs == {"factor": 2.0}
    np.testing.assert_array_equal(seen.result, 2.0 * x)
    assert seen.shares_memory == [] and seen.returned_argument is None
    unscaled = observe_call("adder", "scaled", x)
    np.testing.assert_array_equal(unscaled.result, x)
    assert unscaled.shares_memory == [] and unscaled.returned_argument is None


def test_reading_takes_the_time_from_the_clock_it_is_handed():
    clock = Clock()
    clock.readings.append(99.0)  # an earlier reading: the record is the test's
    assert reading(facade(clock, call=True)) == 100.0
    assert clock.now == 100.0 and clock.readings == [99.0, 100.0]
'''


@pytest.fixture
def api_task(task_copy):
    from sb.task import load_task_dir
    folder = task_copy(deps=["numpy"])
    for old in (folder / "reference").iterdir():
        old.unlink()
    (folder / "reference" / "adder.py").write_text(CORRECT)
    (folder / "starter" / "adder.py").write_text(
        "def scaled(values, factor=1.0):\n    raise NotImplementedError\n\n\n"
        "def reading(clock):\n    raise NotImplementedError\n")
    for old in (folder / "hidden_tests").glob("test_*.py"):
        old.unlink()
    (folder / "hidden_tests" / "test_api.py").write_text(TESTS)
    (folder / "contract.yaml").write_text(
        "- clause: scaled multiplies\n  tests: [test_api.py::test_scaled_values]\n"
        "- clause: scaled returns a new array and leaves its input alone\n"
        "  tests: [test_api.py::test_scaled_leaves_its_input_alone_and_returns_a_new_array]\n"
        "- clause: reading reads the clock it is handed\n"
        "  tests: [test_api.py::test_reading_takes_the_time_from_the_clock_it_is_handed]\n")
    return load_task_dir(folder, package="api_fixture")


def test_observe_call_sees_what_only_the_solutions_process_can(api_task, bwrap_sandbox):
    reference = grade(api_task, api_task.reference_files, bwrap_sandbox)
    assert reference.passed, reference.detail
    assert reference.probed_tests == ["test_api.py::test_scaled_leaves_its_input_alone_and_returns_a_new_array"]
    observed = "test_api.py::test_scaled_leaves_its_input_alone_and_returns_a_new_array"
    in_place = grade(api_task, {"adder.py": IN_PLACE.encode()}, bwrap_sandbox, reference.test_ids)
    assert in_place.status == Status.FAILED and in_place.failed_tests == [observed], in_place.detail
    for wrong in (VIEW, ITSELF):  # right values, but a view of the input or the input itself
        outcome = grade(api_task, {"adder.py": wrong.encode()}, bwrap_sandbox, reference.test_ids)
        assert outcome.status == Status.FAILED and outcome.failed_tests == [observed], outcome.detail


def test_a_facade_hands_over_only_what_it_names(api_task, bwrap_sandbox):
    reference = grade(api_task, api_task.reference_files, bwrap_sandbox)
    for wrong in (MOVES_THE_CLOCK, READS_THE_RECORD):
        outcome = grade(api_task, {"adder.py": wrong.encode()}, bwrap_sandbox, reference.test_ids)
        assert outcome.status == Status.FAILED, outcome.detail
        assert outcome.failed_tests == ["test_api.py::test_reading_takes_the_time_from_the_clock_it_is_handed"]


def test_a_facade_forwards_the_named_methods_and_refuses_the_rest():
    class Store:
        def __init__(self):
            self.calls = 0

        def get(self, key):
            self.calls += 1
            return key * 2

    store = Store()
    handed = facade(store, "get")
    assert handed.get(4) == 8 and store.calls == 1
    with pytest.raises(AttributeError, match="offers get"):
        handed.calls  # noqa: B018 - the read itself is what is refused
    with pytest.raises(TypeError):
        handed()
    assert facade(lambda: 7, call=True)() == 7
    with pytest.raises(AttributeError):
        handed.__dict__  # noqa: B018 - slots only: nothing of the target shows
