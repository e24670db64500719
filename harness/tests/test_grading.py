"""The grading contract: declared files only, verdict from the record, statuses classified."""

from __future__ import annotations

import pytest

from sb.grading import grade
from sb.outcome import EVIDENCE, Status, is_evidence

GOOD = {"adder.py": b"def add(a, b):\n    return a + b\n"}
WRONG = {"adder.py": b"def add(a, b):\n    return a - b\n"}


@pytest.fixture(params=["plain", "bwrap"])
def sandbox(request):
    return request.getfixturevalue(f"{request.param}_sandbox")


def expected_ids(task, sandbox):
    reference = grade(task, task.reference_files, sandbox)
    assert reference.status == Status.PASSED, reference.detail
    return reference.test_ids


def test_reference_passes_and_records_every_test_id(fixture_task, sandbox):
    outcome = grade(fixture_task, fixture_task.reference_files, sandbox)
    assert outcome.passed
    assert outcome.counts["passed"] == 5
    assert len(outcome.test_ids) == 5
    assert outcome.isolation == sandbox.name


def test_wrong_solution_fails_with_the_failing_ids_kept(fixture_task, sandbox):
    outcome = grade(fixture_task, WRONG, sandbox, expected_ids(fixture_task, sandbox))
    assert outcome.status == Status.FAILED
    assert "test_add.py::test_add_negative" in outcome.failed_tests


def test_first_failure_ends_a_failing_grading_at_its_first_failing_test_with_the_same_verdicts(fixture_task, sandbox):
    """`sb mutants --first-failure`: pytest stops at the first failing test and the tests it
    never reached are missing, so the grading still fails; a right solution runs them all."""
    expected = expected_ids(fixture_task, sandbox)
    every = grade(fixture_task, WRONG, sandbox, expected)
    first = grade(fixture_task, WRONG, sandbox, expected, first_failure=True)
    assert every.status == first.status == Status.FAILED
    assert len(every.failures_that_ran) > 1 and len(first.failures_that_ran) == 1
    assert first.failures_that_ran[0] in every.failed_tests and first.counts["missing"] >= 1
    assert first.failures_that_ran[0] in first.detail  # the test that failed, not one never reached
    right = grade(fixture_task, GOOD, sandbox, expected, first_failure=True)
    assert right.passed and right.counts["passed"] == len(expected)


THREADED = """

from concurrent.futures import ThreadPoolExecutor as _Pool

_on_the_callers_thread = {name}


def {name}(*args, **kwargs):
    \"\"\"The reference, run on a thread of the solution's own.\"\"\"
    with _Pool(max_workers=1) as pool:
        return pool.submit(_on_the_callers_thread, *args, **kwargs).result()
"""


@pytest.mark.parametrize("slug, module, function", [("n_plus_one", "report.py", "customer_report"),
                                                    ("sqlsafe", "user_search.py", "search_users")])
def test_a_right_solution_calling_the_judges_database_from_a_thread_of_its_own_passes(slug, module, function,
                                                                                       bwrap_sandbox):
    """Such a call is served on a judge thread of its own (the wire's conversations), so a
    judge-side object tied to the thread that made it (sqlite3's default check_same_thread)
    failed every one: a right solution graded failed (found by a red team)."""
    from sb.session import default_session
    task = default_session().tasks()[slug]
    threaded = {**task.reference_files, module: task.reference_files[module] + THREADED.format(name=function).encode()}
    outcome = grade(task, threaded, bwrap_sandbox, expected_ids(task, bwrap_sandbox))
    assert outcome.status == Status.PASSED, outcome.detail


def test_undeclared_files_are_dropped_and_recorded(fixture_task, plain_sandbox):
    files = {**GOOD, "conftest.py": b"raise SystemExit(0)\n", "notes/x.txt": b"hi"}
    outcome = grade(fixture_task, files, plain_sandbox, expected_ids(fixture_task, plain_sandbox))
    assert outcome.passed
    assert outcome.dropped_files == ["conftest.py", "notes/x.txt"]


def test_a_solution_cannot_make_a_test_skip(fixture_task, plain_sandbox):
    skipping = {"adder.py": b"import pytest\ndef add(a, b):\n    pytest.skip('no')\n"}
    outcome = grade(fixture_task, skipping, plain_sandbox, expected_ids(fixture_task, plain_sandbox))
    assert outcome.status == Status.FAILED
    assert outcome.counts["failed"] == 5  # a skip raised in the worker is an error here, never a skip


def test_a_skipped_test_is_not_a_pass(task_copy, plain_sandbox):
    from sb.task import load_task_dir
    folder = task_copy()
    (folder / "hidden_tests" / "test_skips.py").write_text(
        "import os, pytest\nfrom adder import add\n\ndef test_sometimes_skipped():\n"
        "    if os.environ.get('SB_TEST_SKIP_NOW') or add(1, 1) == 2 and os.path.exists('skip-me'):\n"
        "        pytest.skip('asked to')\n    assert add(1, 1) == 2\n")
    task = load_task_dir(folder, package="skips")
    expected = grade(task, task.reference_files, plain_sandbox).test_ids
    outcome = grade(task, {**task.reference_files, "skip-me": b""}, plain_sandbox, expected)
    assert outcome.status == Status.PASSED  # an undeclared file is dropped: no skip
    (folder / "hidden_tests" / "test_skips.py").write_text(
        "import pytest\nfrom adder import add\n\ndef test_sometimes_skipped():\n    pytest.skip('always')\n")
    outcome = grade(load_task_dir(folder, package="skips"), task.reference_files, plain_sandbox, expected)
    assert outcome.status == Status.FAILED
    assert outcome.counts["skipped"] == 1


def test_missing_expected_ids_fail(fixture_task, plain_sandbox):
    expected = expected_ids(fixture_task, plain_sandbox) + ["test_add.py::test_that_never_ran"]
    outcome = grade(fixture_task, GOOD, plain_sandbox, expected)
    assert outcome.status == Status.FAILED
    assert outcome.failed_tests == ["test_add.py::test_that_never_ran"]
    assert outcome.counts["missing"] == 1


def test_import_error_in_the_solution_is_solution_error(fixture_task, plain_sandbox):
    broken = {"adder.py": b"def add(a, b)\n    return a + b\n"}
    outcome = grade(fixture_task, broken, plain_sandbox, expected_ids(fixture_task, plain_sandbox))
    assert outcome.status == Status.SOLUTION_ERROR
    assert "SyntaxError" in outcome.detail or "adder" in outcome.detail


@pytest.mark.parametrize("solution, words", [
    (b"import os\nos._exit(3)\n", "the solution's process exited with status 3"),
    (b"def add(a, b):\n    import os\n    os._exit(7)\n", "(the solution's process exited with status 7)"),
])
def test_a_solution_that_ends_its_own_process_is_named_as_what_ended(fixture_task, sandbox, solution, words):
    outcome = grade(fixture_task, {"adder.py": solution}, sandbox, expected_ids(fixture_task, sandbox))
    assert outcome.status in (Status.SOLUTION_ERROR, Status.FAILED) and not outcome.passed
    assert words in outcome.detail.splitlines()[0], outcome.detail


def test_broken_task_is_collection_error_not_solution_error(task_copy, plain_sandbox):
    from sb.task import load_task_dir
    folder = task_copy()
    (folder / "hidden_tests" / "test_add.py").write_text("from adder import nothing_like_this\n")
    task = load_task_dir(folder, package="broken_fixture")
    outcome = grade(task, GOOD, plain_sandbox, ["test_add.py::test_add_negative"])
    assert outcome.status == Status.COLLECTION_ERROR


def test_time_limit_kills_and_reports_timeout(task_copy, plain_sandbox):
    from sb.task import load_task_dir
    task = load_task_dir(task_copy(time_limit_s=2), package="slow_fixture")
    slow = {"adder.py": b"import time\ndef add(a, b):\n    time.sleep(60)\n"}
    outcome = grade(task, slow, plain_sandbox, ["test_add.py::test_add_negative"])
    assert outcome.status == Status.TIMEOUT
    assert outcome.duration_s < 30


def test_missing_dependency_is_no_evidence(task_copy, plain_sandbox):
    from sb.task import load_task_dir
    task = load_task_dir(task_copy(deps=["surely_not_an_installed_module_xyz"]), package="deps_fixture")
    outcome = grade(task, GOOD, plain_sandbox)
    assert outcome.status == Status.MISSING_DEPS
    assert not outcome.evidence


def test_absent_accelerator_is_no_evidence(task_copy, plain_sandbox, monkeypatch):
    from sb.task import load_task_dir
    monkeypatch.setenv("SB_ASSUME_NO_ACCELERATOR", "1")
    task = load_task_dir(task_copy(tier="accelerated", accelerator="metal"), package="metal_fixture")
    outcome = grade(task, GOOD, plain_sandbox)
    assert outcome.status == Status.NEEDS_ACCELERATOR


def test_status_classification_is_complete():
    assert {s for s in Status if is_evidence(s)} == set(EVIDENCE)
    for status in (Status.ADAPTER_ERROR, Status.TRUNCATED, Status.MISSING_DEPS, Status.NEEDS_ACCELERATOR,
                   Status.COLLECTION_ERROR, Status.DEVICE_STALL):
        assert not is_evidence(status)


def test_a_solution_that_only_sleeps_is_a_timeout_not_a_device_stall(task_copy, plain_sandbox):
    """A blocked run is a device stall only when the device is seen held by someone else:
    otherwise a do-nothing solution could take its failure out of the rate (found by an
    outside red team: a CPU check of the CUDA task, which has no device at all)."""
    from sb.task import load_task_dir
    task = load_task_dir(task_copy(tier="accelerated", accelerator="cuda", cpu_checkable=True, time_limit_s=4),
                         package="stall_fixture")
    blocked = {"adder.py": b"import time\ndef add(a, b):\n    time.sleep(60)\n"}  # waits, computes nothing
    outcome = grade(task, blocked, plain_sandbox, ["test_add.py::test_add_negative"])
    assert outcome.status == Status.TIMEOUT
    assert outcome.evidence


def test_a_blocked_run_on_a_device_held_by_another_process_is_device_stall(task_copy, plain_sandbox, monkeypatch):
    """No GPU here: the device nodes and the driver's answer are stand-ins (a real held
    device needs a GPU machine and a second process holding it in exclusive mode)."""
    from sb import hardware
    from sb.grading import pipeline
    from sb.task import load_task_dir
    monkeypatch.setattr(pipeline, "accelerator_devices", lambda meta: ("/dev/null",))
    monkeypatch.setattr(hardware, "device_holders", lambda meta: ["4242, python"])
    task = load_task_dir(task_copy(tier="accelerated", accelerator="cuda", cpu_checkable=True, time_limit_s=4),
                         package="stall_fixture")
    blocked = {"adder.py": b"import time\ndef add(a, b):\n    time.sleep(60)\n"}
    outcome = grade(task, blocked, plain_sandbox, ["test_add.py::test_add_negative"])
    assert outcome.status == Status.DEVICE_STALL
    assert "4242, python" in outcome.detail
    assert not outcome.evidence


def test_a_busy_accelerator_run_is_a_timeout(task_copy, plain_sandbox):
    from sb.task import load_task_dir
    task = load_task_dir(task_copy(tier="accelerated", accelerator="cuda", cpu_checkable=True, time_limit_s=4),
                         package="busy_fixture")
    busy = {"adder.py": b"def add(a, b):\n    while True:\n        pass\n"}
    outcome = grade(task, busy, plain_sandbox, ["test_add.py::test_add_negative"])
    assert outcome.status == Status.TIMEOUT


def test_bwrap_never_closes_a_passed_descriptor_twice(tmp_path, monkeypatch):
    """run_process closes what it passes; closing the private copies' descriptors again closed
    whatever a concurrent grading had opened under those numbers since (its Popen: EBADF)."""
    import os
    from sb.sandbox import bwrap
    from sb.sandbox.base import Completed, Job
    (tmp_path / "solution.py").write_text("x = 1\n")
    reused = []

    def fake_run_process(argv, job, isolation, preexec=None):
        for fd in job.pass_fds:
            os.close(fd)
        reused.append(os.open(os.devnull, os.O_RDONLY))  # another thread's file, under a freed number
        return Completed(0, False, 0.0, isolation=isolation)
    monkeypatch.setattr(bwrap, "run_process", fake_run_process)
    job = Job(argv=["true"], cwd=tmp_path, env={}, timeout_s=5, writable=(tmp_path,), private_writes_mb=16)
    bwrap.BwrapSandbox().run(job)
    os.fstat(reused[0])  # still open
    os.close(reused[0])


@pytest.mark.parametrize("where", ["argv", "popen", "plain"])
@pytest.mark.parametrize("private", [None, 16])
def test_a_sandbox_that_fails_before_its_process_starts_still_closes_the_jobs_descriptors(tmp_path, monkeypatch,
                                                                                          where, private):
    """Held open, a record pipe's write end keeps its reader waiting (5 s), and a wire's end
    its peer: found by a red team with a warm judge whose sandbox could not start it."""
    import os
    from sb.sandbox import bwrap
    from sb.sandbox.base import Job
    from sb.sandbox.plain import PlainSandbox
    (tmp_path / "solution.py").write_text("x = 1\n")
    read_end, write_end = os.pipe()
    argv = [str(tmp_path / "no-such-program")] if where != "argv" else ["true"]
    job = Job(argv=argv, cwd=tmp_path, env={}, timeout_s=5, writable=(tmp_path,), pass_fds=(write_end,),
              private_writes_mb=private)
    if where == "argv":
        def broken(*args, **kwargs):
            raise OSError("cannot build the argv")
        monkeypatch.setattr(bwrap, "bwrap_argv", broken)
    sandbox = PlainSandbox() if where == "plain" else bwrap.BwrapSandbox()
    if where == "popen" and sandbox.unavailable_reason() is None:
        monkeypatch.setattr(bwrap, "bwrap_argv", lambda job, hidden, copies=None: list(job.argv))
    with pytest.raises(OSError):
        sandbox.run(job)
    os.set_blocking(read_end, False)
    try:
        assert os.read(read_end, 1) == b""  # end of file: no writer left open (one left: BlockingIOError)
    finally:
        os.close(read_end)


def test_a_solution_thread_is_answered_while_the_test_waits_on_its_own(task_copy, plain_sandbox):
    """A call from a thread the solution started reaches the judge's object at once, not
    only when the test next calls into the worker: here the test never does, it waits on
    an event only that call can set."""
    from sb.task import load_task_dir
    folder = task_copy()
    (folder / "hidden_tests" / "test_callback.py").write_text(
        "import threading\nfrom adder import add\n\n"
        "def test_called_back_from_a_solution_thread():\n"
        "    called = threading.Event()\n"
        "    add(called.set, None)\n"
        "    assert called.wait(20)  # a bound on a hang, not a timing: the answer takes milliseconds\n")
    task = load_task_dir(folder, package="callback")
    starts_a_thread = {"adder.py": b"import threading\n\ndef add(a, b):\n    if callable(a):\n"
                                   b"        threading.Thread(target=a).start()\n        return None\n"
                                   b"    return a + b\n"}
    outcome = grade(task, starts_a_thread, plain_sandbox)
    assert outcome.status == Status.PASSED, outcome.detail
    assert outcome.counts["passed"] == 6


@pytest.mark.parametrize("failing", ["lay_out_worker", "lay_out_judge", "_judge_job"])
def test_a_grading_that_fails_to_lay_out_leaves_no_descriptor_open(fixture_task, plain_sandbox, monkeypatch, failing):
    """A full disk while the grading's files are written: the error is raised, and the
    socket pair and the record pipe made for the processes are closed, not left to pile up
    in a long-lived grader (a sweep, a Ray node)."""
    import errno
    import os

    from sb.grading import pipeline
    monkeypatch.setenv("SB_WARM_JUDGES", "0")  # a warm judge's own socket would be counted too

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(pipeline, failing, full)
    before = sorted(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with pytest.raises(OSError):
            grade(fixture_task, GOOD, plain_sandbox)
    assert sorted(os.listdir("/proc/self/fd")) == before
