"""grade(task, files) -> Outcome: the grading contract of docs/architecture.md.

A fresh directory holds only the declared files; the hidden tests are laid beside it
afterwards; the harness's runner executes pytest in a sandbox and reports every test
phase through a pipe. The verdict comes from that record compared with the test ids the
reference produced, never from pytest's exit code.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

from sb.outcome import Outcome, Status
from sb.sandbox.base import Job, Sandbox
from sb.task import FileSet, Task

ALLOWED_EXCEPTIONS_FOR_STARTER = ("AssertionError", "NotImplementedError", "Failed")
PASSTHROUGH_ENV = ("PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
PINNED_ENV = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
}


@dataclass
class Record:
    """What the runner reported, event by event."""

    started: bool = False
    ended: bool = False
    exitstatus: int | None = None
    tampered: list = field(default_factory=list)
    collect_errors: list = field(default_factory=list)
    phases: dict = field(default_factory=dict)  # nodeid -> {when: (outcome, exc, message)}

    def add(self, event: dict) -> None:
        kind = event.get("event")
        if kind == "start":
            if self.started:
                self.tampered.append("two start records")
            self.started = True
        elif kind == "collect_error":
            self.collect_errors.append(f"{event.get('nodeid')}: {event.get('message')}")
        elif kind == "test":
            self._add_phase(event)
        elif kind == "end":
            if self.ended:
                self.tampered.append("two end records")
            self.ended, self.exitstatus = True, event.get("exitstatus")
            self.tampered += list(event.get("tampered") or [])

    def _add_phase(self, event: dict) -> None:
        phases = self.phases.setdefault(event["nodeid"], {})
        if event["when"] in phases:
            self.tampered.append(f"two records for {event['nodeid']} {event['when']}")
        phases[event["when"]] = (event["outcome"], event.get("exc"), event.get("message", ""))

    def test_outcomes(self) -> dict:
        """nodeid -> passed | failed | skipped, from the phases of each test."""
        return {nodeid: _test_outcome(phases) for nodeid, phases in self.phases.items()}


def _test_outcome(phases: dict) -> str:
    outcomes = [o for o, _, _ in phases.values()]
    if "failed" in outcomes:
        return "failed"
    if "skipped" in outcomes:
        return "skipped"
    return "passed" if "call" in phases else "failed"


def missing_deps(task: Task) -> list:
    return [dep for dep in task.meta.deps if find_spec(dep) is None]


def precheck(task: Task) -> Outcome | None:
    """No-evidence outcomes decided before pytest ever starts: deps and hardware."""
    from sb.hardware import accelerator_missing
    missing = missing_deps(task)
    if missing:
        return Outcome(task.slug, Status.MISSING_DEPS, detail=f"not installed: {', '.join(missing)}")
    reason = accelerator_missing(task.meta)
    if reason:
        return Outcome(task.slug, Status.NEEDS_ACCELERATOR, detail=reason)
    return None


def grade(task: Task, files: FileSet, sandbox: Sandbox, expected: list | None = None) -> Outcome:
    """Grade a solver's files. `expected` is the reference's test ids (None: grading the reference)."""
    early = precheck(task)
    if early:
        return early
    declared = {name: data for name, data in files.items() if name in task.starter_files}
    dropped = sorted(set(files) - set(declared))
    record, completed = execute(task, declared, sandbox)
    outcome = decide(task, record, completed, expected, sandbox)
    outcome.dropped_files = dropped
    outcome.isolation = completed.isolation
    return outcome


def execute(task: Task, solution: FileSet, sandbox: Sandbox):
    """Lay out a fresh grading directory and run the hidden tests once."""
    with tempfile.TemporaryDirectory(prefix=f"sb-{task.slug}-") as tmp:
        root = Path(tmp)
        layout = _lay_out(root, task, solution)
        read_fd, write_fd = os.pipe()
        reader = _RecordReader(read_fd)
        job = Job(argv=_argv(layout, write_fd, task), cwd=layout["solution"], env=_env(layout),
                  timeout_s=task.meta.time_limit_s, writable=(layout["solution"], layout["scratch"]),
                  hidden=_task_folder(task), pass_fds=(write_fd,))
        completed = sandbox.run(job)
        return reader.finish(), completed


def _task_folder(task: Task) -> tuple:
    """The graded task's own package folder, hidden even when it is not an installed package."""
    folder = Path(str(task.root))
    return (folder,) if folder.is_dir() else ()


def _lay_out(root: Path, task: Task, solution: FileSet) -> dict:
    layout = {name: root / name for name in ("solution", "hidden_tests", "harness", "scratch")}
    for path in layout.values():
        path.mkdir()
    (layout["scratch"] / "home").mkdir()
    (layout["scratch"] / "tmp").mkdir()
    write_files(layout["solution"], solution)
    write_files(layout["hidden_tests"], task.hidden_test_files)
    runner = resources.files("sb").joinpath("_runner.py").read_bytes()
    (layout["harness"] / "runner.py").write_bytes(runner)
    (layout["harness"] / "pytest.ini").write_text("[pytest]\n")
    return layout


def write_files(folder: Path, files: FileSet) -> None:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _argv(layout: dict, write_fd: int, task: Task) -> list:
    flags = ["-s", "-B"] + (["-P"] if sys.version_info >= (3, 11) else [])
    return [sys.executable, *flags, str(layout["harness"] / "runner.py"), str(layout["solution"]),
            str(layout["hidden_tests"]), str(layout["harness"] / "pytest.ini"), str(write_fd), ",".join(task.meta.deps)]


def _env(layout: dict) -> dict:
    """Built from an allow-list, never copied from the parent: no credential reaches graded code."""
    env = {name: os.environ[name] for name in PASSTHROUGH_ENV if name in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(PINNED_ENV)
    env["HOME"] = str(layout["scratch"] / "home")
    env["TMPDIR"] = str(layout["scratch"] / "tmp")
    return env


class _RecordReader:
    """Reads the runner's JSON lines on a thread, so a chatty run never blocks on the pipe."""

    def __init__(self, fd: int):
        self.record = Record()
        self.stream = os.fdopen(fd, "rb")
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        import json
        for line in self.stream:
            try:
                self.record.add(json.loads(line))
            except (ValueError, KeyError, TypeError):
                self.record.tampered.append("unreadable record line")

    def finish(self) -> Record:
        self.thread.join(timeout=5)  # a straggler holding the pipe cannot hold the grader
        return self.record


def decide(task: Task, record: Record, completed, expected: list | None, sandbox: Sandbox) -> Outcome:
    """The verdict, from the record alone (the exit status is only cross-checked)."""
    outcomes = record.test_outcomes()
    base = dict(slug=task.slug, duration_s=round(completed.duration_s, 3), counts=_counts(outcomes, expected),
                test_ids=sorted(outcomes))
    if completed.timed_out and task.meta.accelerator and completed.looks_blocked:
        return Outcome(status=Status.DEVICE_STALL, detail=f"blocked at the {task.meta.time_limit_s}s limit, using "
                       f"{completed.cpu_rate_at_limit:.2f} CPU: the device did not answer (held by another process?)",
                       **base)
    if completed.timed_out:
        return Outcome(status=Status.TIMEOUT, detail=f"killed at the {task.meta.time_limit_s}s limit",
                       failed_tests=_failed(outcomes, expected), **base)
    if not record.started:
        return Outcome(status=Status.HARNESS_ERROR, detail=_tail(completed.output), **base)
    problem = _tamper_evidence(record, completed)
    if problem:
        return Outcome(status=Status.TAMPERED, detail=problem, failed_tests=_failed(outcomes, expected), **base)
    if record.collect_errors:
        return _collection_outcome(task, record, sandbox, base)
    return _test_verdict(outcomes, expected, record, base)


def _tamper_evidence(record: Record, completed) -> str:
    if record.tampered:
        return "; ".join(record.tampered[:5])
    if not record.ended:
        if completed.returncode is not None and completed.returncode < 0:
            return ""  # killed by a signal (a crash, a limit): judged from the tests recorded
        return f"the process exited early (status {completed.returncode}) before the run finished"
    if completed.returncode != record.exitstatus:
        return f"exit status rewritten: runner reported {record.exitstatus}, process ended {completed.returncode}"
    return ""


def _collection_outcome(task: Task, record: Record, sandbox: Sandbox, base: dict) -> Outcome:
    """solution_error if the untouched starter collects (the solution broke it), else the task is broken."""
    detail = record.collect_errors[0]
    starter_record, _ = execute(task, task.starter_files, sandbox)
    if starter_record.started and not starter_record.collect_errors:
        return Outcome(status=Status.SOLUTION_ERROR, detail=_tail(detail), **base)
    return Outcome(status=Status.COLLECTION_ERROR, detail=_tail(detail), **base)


def _test_verdict(outcomes: dict, expected: list | None, record: Record, base: dict) -> Outcome:
    wanted = sorted(outcomes) if expected is None else expected
    failed = _failed(outcomes, expected)
    if not wanted:
        return Outcome(status=Status.HARNESS_ERROR, detail="no test ran", **base)
    if failed:
        return Outcome(status=Status.FAILED, failed_tests=failed, detail=_first_failure(record, failed[0]), **base)
    if not record.ended:
        return Outcome(status=Status.FAILED, detail="the process was killed (a crash or a resource limit)", **base)
    return Outcome(status=Status.PASSED, **base)


def _failed(outcomes: dict, expected: list | None) -> list:
    """Expected ids that did not pass: failed, skipped or missing."""
    wanted = sorted(outcomes) if expected is None else expected
    return [nodeid for nodeid in wanted if outcomes.get(nodeid) != "passed"]


def _counts(outcomes: dict, expected: list | None) -> dict:
    counts = {"passed": 0, "failed": 0, "skipped": 0, "missing": 0}
    for outcome in outcomes.values():
        counts[outcome] += 1
    if expected is not None:
        counts["missing"] = len(set(expected) - set(outcomes))
    return counts


def _first_failure(record: Record, nodeid: str) -> str:
    for outcome, exc, message in record.phases.get(nodeid, {}).values():
        if outcome != "passed":
            return _tail(f"{nodeid}: {message or exc or outcome}")
    return f"{nodeid}: missing"


def _tail(text: str, limit: int = 400) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def starter_exceptions(record: Record) -> dict:
    """nodeid -> exception names seen in its failing phases (validate checks the starter's)."""
    return {nodeid: {exc for outcome, exc, _ in phases.values() if outcome == "failed"}
            for nodeid, phases in record.phases.items()}
