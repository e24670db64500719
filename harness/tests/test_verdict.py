"""The verdict as a pure function (sb/grading/verdict.py): records written as the judge
writes them (judge_process.py's events), decided without a subprocess."""

from __future__ import annotations

import pytest

from sb.grading.verdict import Record, verdict
from sb.outcome import Status
from sb.sandbox.base import Completed

ADD = "test_add.py::test_add"
NEG = "test_add.py::test_add_negative"


def phase(nodeid, outcome="passed", when="call", exc=None, message="", probed=0):
    return {"event": "test", "nodeid": nodeid, "when": when, "outcome": outcome, "exc": exc, "message": message,
            "probed": probed}


def run(*tests, exitstatus=0, tampered=()):
    """The events of a judge that started, ran `tests` (each setup, call, teardown) and ended."""
    events = [{"event": "start", "pid": 4242}]
    for event in tests:
        events += [phase(event["nodeid"], when="setup"), event, phase(event["nodeid"], when="teardown")]
    return events + [{"event": "end", "exitstatus": exitstatus, "tampered": list(tampered)}]


def record_of(events) -> Record:
    record = Record()
    for event in events:
        record.add(event)
    return record


def ended(returncode=0, **kw) -> Completed:
    return Completed(returncode=returncode, timed_out=False, duration_s=1.23456, **kw)


def decide(events, completed=None, expected=(ADD, NEG), **kw):
    completed = completed or ended(next((e["exitstatus"] for e in events if e["event"] == "end"), 0))
    return verdict("adder", 30, record_of(events), completed, None if expected is None else list(expected), **kw)


def test_every_expected_test_passing_is_a_pass_with_counts_and_a_rounded_duration():
    outcome = decide(run(phase(ADD), phase(NEG)))
    assert outcome.status == Status.PASSED
    assert outcome.counts == {"passed": 2, "failed": 0, "skipped": 0, "missing": 0}
    assert outcome.duration_s == 1.235 and outcome.test_ids == [ADD, NEG]


def test_a_failing_test_fails_and_names_its_own_message():
    failing = phase(NEG, "failed", exc="AssertionError", message="assert 1 == -1")
    outcome = decide(run(phase(ADD), failing, exitstatus=1))
    assert outcome.status == Status.FAILED and outcome.failed_tests == [NEG]
    assert outcome.detail == f"{NEG}: assert 1 == -1"


@pytest.mark.parametrize("events", [
    run(phase(ADD)),                                                     # the other expected test never ran
    run(phase(ADD), phase(NEG, "skipped", exc="Skipped")),               # a skip is not a pass
    run(phase(ADD))[:-1] + [phase(NEG, when="setup"), phase(NEG, when="teardown"), run()[-1]],  # no call phase
])
def test_an_expected_test_that_did_not_pass_is_a_failure(events):
    outcome = decide(events)
    assert outcome.status == Status.FAILED and outcome.failed_tests == [NEG]


def test_a_missing_test_is_counted_as_missing_and_named_as_such():
    outcome = decide(run(phase(ADD)))
    assert outcome.counts["missing"] == 1 and outcome.detail == f"{NEG}: missing"


def test_only_the_expected_ids_decide_once_they_are_known():
    extra = "test_add.py::test_not_in_the_reference"
    outcome = decide(run(phase(ADD), phase(NEG), phase(extra, "failed", exc="AssertionError"), exitstatus=1))
    assert outcome.status == Status.PASSED and outcome.counts["failed"] == 1


def test_the_reference_is_judged_on_the_tests_it_ran():
    assert decide(run(phase(ADD)), expected=None).status == Status.PASSED
    assert decide(run(), expected=None).status == Status.HARNESS_ERROR


@pytest.mark.parametrize("events, returncode, words", [
    (run(phase(ADD), phase(NEG)) + [{"event": "start"}], 0, "two start records"),
    (run(phase(ADD), phase(NEG)) + [{"event": "end", "exitstatus": 0}], 0, "two end records"),
    (run(phase(ADD), phase(NEG), phase(NEG)), 0, "two records for"),
    (run(phase(ADD), phase(NEG)), 5, "exit status rewritten"),
    (run(phase(ADD), phase(NEG))[:-1], 0, "exited early"),
    (run(phase(ADD), phase(NEG), tampered=["the solution wrote the record"]), 0, "wrote the record"),
    ([{"event": "start"}, {"event": "violation", "message": "a frame too long"}, *run(phase(ADD), phase(NEG))[1:]],
     0, "broke the wire protocol: a frame too long"),
])
def test_a_record_that_contradicts_itself_or_its_process_is_tampered(events, returncode, words):
    outcome = decide(events, ended(returncode))
    assert outcome.status == Status.TAMPERED and words in outcome.detail


def test_a_run_killed_by_a_signal_is_judged_from_the_tests_recorded():
    events = run(phase(ADD), phase(NEG))[:-1]
    assert decide(events, ended(-9)).status == Status.FAILED
    assert "killed" in decide(events, ended(-9)).detail
    assert decide(run(phase(ADD))[:-1], ended(-9)).failed_tests == [NEG]


def test_a_judge_that_never_started_is_the_harnesss_error_with_its_output():
    outcome = decide([], ended(1, output="Traceback ...\nImportError: no pytest"))
    assert outcome.status == Status.HARNESS_ERROR and "no pytest" in outcome.detail


def test_the_limit_decides_before_the_record():
    timed_out = Completed(returncode=-9, timed_out=True, duration_s=30.0)
    outcome = decide(run(phase(ADD))[:-1], timed_out)
    assert outcome.status == Status.TIMEOUT and outcome.failed_tests == [NEG]
    assert outcome.detail == "killed at the 30s limit"


def test_a_stall_on_a_held_device_is_no_evidence_and_names_the_holder():
    stalled = Completed(returncode=-9, timed_out=True, duration_s=30.0, cpu_rate_at_limit=0.01)
    outcome = decide(run(phase(ADD))[:-1], stalled, device_holders=["4242, python"])
    assert outcome.status == Status.DEVICE_STALL and "4242, python" in outcome.detail and not outcome.evidence


def test_a_collection_error_is_the_solutions_only_when_the_starter_collects():
    events = [{"event": "start"}, {"event": "collect_error", "nodeid": "test_add.py", "message": "SyntaxError"},
              {"event": "end", "exitstatus": 2, "tampered": []}]
    asked = []
    outcome = decide(events, ended(2), starter_collects=lambda: asked.append(1) or True)
    assert outcome.status == Status.SOLUTION_ERROR and asked == [1]
    assert decide(events, ended(2), starter_collects=lambda: False).status == Status.COLLECTION_ERROR


def test_the_starter_is_graded_only_when_a_collection_error_needs_it():
    def never():
        raise AssertionError("the starter was graded for a verdict that does not need it")
    for events in (run(phase(ADD), phase(NEG)), run(phase(ADD))):
        decide(events, starter_collects=never)


def test_the_tests_that_learnt_something_from_a_probe_are_listed():
    events = run(phase(ADD, probed=2), phase(NEG))
    assert decide(events).probed_tests == [ADD]
    at_import = [{"event": "start"}, {"event": "collect_probed", "nodeid": "test_add.py", "probed": 1},
                 *run(phase(ADD), phase(NEG))[1:]]
    assert decide(at_import).probed_tests == [ADD, NEG]


def test_an_unreadable_event_is_never_a_pass():
    record = record_of(run(phase(ADD), phase(NEG)))
    record.tampered.append("unreadable record line")  # what the pipeline's reader adds for a bad line
    assert verdict("adder", 30, record, ended(), [ADD, NEG]).status == Status.TAMPERED


def test_the_pure_verdict_is_the_pipelines(fixture_task, plain_sandbox):
    """A real grading's record, decided again here, gives the Outcome grade() returned."""
    from sb.grading import execute, grade
    expected = grade(fixture_task, fixture_task.reference_files, plain_sandbox).test_ids
    for files in (fixture_task.reference_files, fixture_task.starter_files):
        record, completed = execute(fixture_task, files, plain_sandbox)
        again = verdict(fixture_task.slug, fixture_task.meta.time_limit_s, record, completed, expected)
        graded = grade(fixture_task, files, plain_sandbox, expected)
        assert (again.status, again.counts, again.failed_tests) == (graded.status, graded.counts, graded.failed_tests)


def test_a_collection_errors_detail_begins_with_its_cause():
    """A table shows a detail's first line; pytest's report begins with its own advice and
    ends with the exception, so the exception comes first."""
    report = ("ImportError while importing test module '/x/hidden_tests/test_add.py'.\n"
              "Hint: make sure your test modules/packages have valid Python names.\n"
              "Traceback:\n" + "  frame\n" * 60 +
              "../hidden_tests/test_add.py:1: in <module>\n    import numpy\n"
              "E   ModuleNotFoundError: No module named 'numpy'")
    events = [{"event": "start"}, {"event": "collect_error", "nodeid": "test_add.py", "message": report},
              {"event": "end", "exitstatus": 2}]
    detail = decide(events, ended(2)).detail
    assert detail.splitlines()[0] == "ModuleNotFoundError: No module named 'numpy'"
    assert detail.endswith("E   ModuleNotFoundError: No module named 'numpy'")
    plain = [{"event": "start"}, {"event": "collect_error", "nodeid": "test_add.py", "message": "SyntaxError"},
             {"event": "end", "exitstatus": 2}]
    assert decide(plain, ended(2)).detail == "test_add.py: SyntaxError"


def test_a_long_failure_message_keeps_its_test_id_and_its_start():
    message = "AssertionError: the caller's array was written to\n" + "array([" + "False, " * 200 + "])"
    outcome = decide(run(phase(ADD), phase(NEG, "failed", exc="AssertionError", message=message)))
    assert outcome.detail.startswith(f"{NEG}: AssertionError: the caller's array was written to")
    assert outcome.detail.endswith("...") and len(outcome.detail) < len(NEG) + 420


def test_sb_grade_counts_the_failing_tests_it_does_not_list(capsys):
    from sb.outcome import Outcome
    from sb.report.terminal import GRADE_FAILED_SHOWN, print_grade
    failed = [f"test_x.py::test_{n}" for n in range(GRADE_FAILED_SHOWN + 3)]
    print_grade(Outcome("x", Status.FAILED, failed_tests=failed, detail=f"{failed[0]}: boom", counts={"failed": 23}))
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("  failed: ") for line in lines) == GRADE_FAILED_SHOWN
    assert lines[-1] == "  and 3 more failed (--json lists every one)"


def test_where_the_wire_closed_the_detail_says_how_the_solutions_process_ended():
    gone = "Traceback (most recent call last):\n  ...\nsb.grading.wire.protocol.WorkerGone: the wire was closed"
    at_import = [{"event": "start"}, {"event": "collect_error", "nodeid": "test_add.py", "message": gone},
                 {"event": "end", "exitstatus": 2}]
    detail = decide(at_import, ended(2, worker_exit=3)).detail
    assert detail.splitlines()[0] == "the solution's process exited with status 3"
    in_a_call = run(phase(ADD), phase(NEG, "failed", exc="WorkerGone", message=gone.splitlines()[-1]), exitstatus=1)
    detail = decide(in_a_call, ended(1, worker_exit=-9)).detail
    assert detail == f"{NEG}: {gone.splitlines()[-1]} (the solution's process was killed by signal 9)"
    assert decide(in_a_call, ended(1, worker_exit=139)).detail.endswith(
        "exited with status 139, as a process ended by signal 11 reports it)")
    for quiet in (ended(1, worker_exit=0), ended(1)):  # ended as asked, or not known: nothing to say
        assert decide(in_a_call, quiet).detail == f"{NEG}: {gone.splitlines()[-1]}"
    failing = run(phase(ADD), phase(NEG, "failed", exc="AssertionError", message="assert 1 == 2"), exitstatus=1)
    assert decide(failing, ended(1, worker_exit=5)).detail == f"{NEG}: assert 1 == 2"  # the wire did not close

