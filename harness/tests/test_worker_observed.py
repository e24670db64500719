"""Observations made in the worker are counted by construction: the judge records which
tests used a probe, and `sb validate --json` lists the contract clauses resting on them
(sb.checks.worker_observed). And a solution that rebinds a builtin at import to take over
how probes are loaded (then swaps a probe's function for a forged one) changes nothing:
the wire bound what it loads probes with before the solution was imported."""

from __future__ import annotations

import json

import pytest

from conftest import sb_env
from sb.checks import worker_observed
from sb.grading import grade
from sb.outcome import Status
from test_cli import sb

CORRECT = "def add(a, b):\n    return a + b\n\ndef add_all(values):\n    return sum(values)\n"
IN_PLACE = "def add(a, b):\n    return a + b\n\ndef add_all(values):\n    values.append(0)\n    return sum(values)\n"
HOOK = '''
import builtins
_real_exec = builtins.exec


def _exec(code, globs=None, *rest):
    result = _real_exec(code, globs, *rest)
    if isinstance(globs, dict) and "call_and_return_input" in globs:
        def forged(values):
            before = list(values)
            return {"after": before, "result": add_all(values)}
        globs["call_and_return_input"] = forged
    return result


builtins.exec = _exec
'''


@pytest.fixture
def purity_task(task_copy):
    from sb.task import load_task_dir
    folder = task_copy()
    (folder / "reference" / "adder.py").write_text(CORRECT)
    (folder / "hidden_tests" / "_probe_purity.py").write_text(
        "import adder\n\ndef call_and_return_input(values):\n"
        "    result = adder.add_all(values)\n    return {'after': list(values), 'result': result}\n")
    (folder / "hidden_tests" / "test_add.py").write_text(
        "from sb.judge import probe\nimport adder\n\n"
        "def test_add():\n    assert adder.add(1, 2) == 3\n\n"
        "def test_add_all_sums():\n    assert adder.add_all([1, 2, 3]) == 6\n\n"
        "def test_add_all_leaves_its_input_alone():\n"
        "    assert probe('_probe_purity.py').call_and_return_input([1, 2, 3]) == {'after': [1, 2, 3], 'result': 6}\n")
    (folder / "contract.yaml").write_text(
        "- clause: add returns a + b\n  tests: [test_add.py::test_add]\n"
        "- clause: add_all returns the sum\n  tests: [test_add.py::test_add_all_sums]\n"
        "- clause: add_all does not modify its argument\n  tests: [test_add.py::test_add_all_leaves_its_input_alone]\n")
    return load_task_dir(folder, package="purity_fixture")


def test_the_clauses_resting_on_a_probe_are_derived_from_the_tests(purity_task, bwrap_sandbox):
    reference = grade(purity_task, purity_task.reference_files, bwrap_sandbox)
    assert reference.passed, reference.detail
    assert reference.probed_tests == ["test_add.py::test_add_all_leaves_its_input_alone"]
    assert worker_observed(purity_task, reference.probed_tests) == (
        ("add_all does not modify its argument", ("test_add.py::test_add_all_leaves_its_input_alone",)),)


def test_builtins_rebound_at_import_do_not_take_over_probe_loading(purity_task, bwrap_sandbox):
    reference = grade(purity_task, purity_task.reference_files, bwrap_sandbox)
    plain = grade(purity_task, {"adder.py": IN_PLACE.encode()}, bwrap_sandbox, reference.test_ids)
    hooked = grade(purity_task, {"adder.py": (IN_PLACE + HOOK).encode()}, bwrap_sandbox, reference.test_ids)
    for outcome in (plain, hooked):
        assert outcome.status == Status.FAILED, outcome.detail
        assert outcome.failed_tests == ["test_add.py::test_add_all_leaves_its_input_alone"]


def test_validate_json_lists_a_real_tasks_worker_observed_clauses():
    done = sb("validate", "softmax_stability", "--json", env=sb_env())
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    observed = {entry["clause"]: entry["tests"] for entry in row["worker_observed"]}
    assert list(observed) == ["Do not modify x"], observed
    assert len(observed["Do not modify x"]) == 6  # three functions, two dtypes
    assert all(t.startswith("test_softmax.py::test_input_array_is_not_modified[") for t in observed["Do not modify x"])
