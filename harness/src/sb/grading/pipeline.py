"""grade(task, files) -> Outcome: the grading contract of docs/architecture.md.

A fresh directory holds only the declared files. Two processes grade them, each in its
own sandbox: the *judge* runs the hidden tests (it alone sees them, their oracles and
every expected value) and reports every test phase through a pipe; the solution's
*worker* imports the solution and answers the judge over a data-only wire (sb._wire).
The verdict comes from the judge's record compared with the test ids the reference
produced, never from an exit code, and nothing the worker does can write that record.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

from sb.outcome import Outcome, Status
from sb.hardware import accelerator_devices
from sb.interrupt import temporary_directory
from sb.sandbox.base import PRIVATE_WRITES_MB, Completed, Job, Sandbox, interrupts_held
from sb.sandbox.view import JUDGE_DISTRIBUTIONS, python_view
from sb.task import FileSet, Task

ALLOWED_EXCEPTIONS_FOR_STARTER = ("AssertionError", "NotImplementedError", "Failed")
PASSTHROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "CUDA_VISIBLE_DEVICES")  # the device a node offers
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
    probed: set = field(default_factory=set)    # tests, and collected modules, that used a probe

    def add(self, event: dict) -> None:
        kind = event.get("event")
        if kind == "start":
            if self.started:
                self.tampered.append("two start records")
            self.started = True
        elif kind == "violation":
            self.tampered.append(f"the solution's process broke the wire protocol: {event.get('message')}")
        elif kind == "collect_error":
            self.collect_errors.append(f"{event.get('nodeid')}: {event.get('message')}")
        elif kind == "test":
            self._add_phase(event)
            if event.get("probed"):
                self.probed.add(event["nodeid"])
        elif kind == "collect_probed":
            self.probed.add(str(event.get("nodeid") or ""))
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

    def probed_tests(self) -> list:
        """The tests that learnt something from a probe, theirs or their module's at import."""
        modules = {m for m in self.probed if "::" not in m}
        return sorted(nodeid for nodeid in self.phases if nodeid in self.probed or "" in modules
                      or nodeid.split("::", 1)[0] in modules)


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


def grade(task: Task, files: FileSet, sandbox: Sandbox, expected: list | None = None,
          first_failure: bool = False) -> Outcome:
    """Grade a solver's files. `expected` is the reference's test ids (None: grading the reference).
    `first_failure`: pytest stops at the first failing test (`sb mutants --first-failure`);
    the tests it did not reach count as missing, so the verdict is `failed` exactly when it
    would have been, and only the failing count is smaller."""
    early = precheck(task)
    if early:
        return early
    declared = {name: data for name, data in files.items() if name in task.starter_files}
    dropped = sorted(set(files) - set(declared))
    record, completed = execute(task, declared, sandbox, first_failure)
    outcome = decide(task, record, completed, expected, sandbox)
    outcome.dropped_files = dropped
    outcome.isolation = completed.isolation
    return outcome


JUDGE_GRACE_S = 10  # the judge outlives the worker's limit by this much, to record what a timeout left


def execute(task: Task, solution: FileSet, sandbox: Sandbox, first_failure: bool = False):
    """Lay out a fresh grading directory and run the hidden tests once: the judge and the
    solution's worker start together, each in its own sandbox, joined by a socket pair.
    The judge is a fork of a warm judge where the sandbox keeps them (sb/warm.py)."""
    warm = None
    try:
        with interrupts_held():  # taken and held here as one step: an interrupt never strands one
            warm = _warm_judge(task, sandbox)
        return _execute(task, solution, sandbox, first_failure, warm)
    except BaseException:
        if warm is not None:  # it may still be running this grading: closed, never lent again
            warm[1].broken = True
        raise
    finally:
        if warm is not None:
            from sb.warm import warm_judges
            warm_judges().give_back(*warm)


def _execute(task: Task, solution: FileSet, sandbox: Sandbox, first_failure: bool, warm):
    with temporary_directory(f"sb-{task.slug}-") as tmp, _judge_root(warm, Path(tmp)) as judge_root:
        layout = {**_lay_out_worker(Path(tmp), solution), **_lay_out_judge(judge_root, task, solution, first_failure)}
        read_fd, record_fd = os.pipe()
        reader = _RecordReader(read_fd)
        judge_end, worker_end = (s.detach() for s in socket.socketpair())
        cancel = threading.Event()
        worker_job = _worker_job(task, layout, worker_end, cancel)
        judge_job = _judge_job(task, layout, record_fd, judge_end)
        worker_done: dict = {}
        thread = threading.Thread(target=lambda: worker_done.update(completed=sandbox.run(worker_job)), daemon=True)
        try:  # started inside: an interrupt that lands in start() still cancels the worker's sandbox
            thread.start()
            judged = _run_judge(warm, sandbox, judge_job, judge_root)
        finally:
            cancel.set()
            if thread.is_alive():
                thread.join()
        return reader.finish(), _fold(judged, worker_done.get("completed"))


def _warm_judge(task: Task, sandbox: Sandbox):
    """(key, WarmJudge) when this grading's judge can be a fork of a warm one, else None.
    Never for a task with devices (a device's holder is the grading's own process), and
    only on Linux (a warm judge reaps what a grading leaves through /proc and a subreaper)."""
    cold = os.environ.get("SB_WARM_JUDGES", "1") == "0" or accelerator_devices(task.meta) or sys.platform != "linux"
    if cold or not sandbox.keeps_warm_judges:
        return None
    from sb.warm import warm_judges
    return warm_judges().take(sandbox, _judge_view_job(task), _preimports(task))


@contextmanager
def _judge_root(warm, tmp: Path):
    """Where the judge's files go: beside the worker's, or in a slot the warm judge sees."""
    if warm is None:
        yield tmp
        return
    slot = warm[1].slot()
    try:
        yield slot
    finally:
        shutil.rmtree(slot, ignore_errors=True)


def _run_judge(warm, sandbox: Sandbox, job: Job, slot: Path) -> Completed:
    if warm is None:
        return sandbox.run(job)
    from sb.warm import WarmJudgeBroken
    try:
        return warm[1].run(job, slot)
    except WarmJudgeBroken:
        return sandbox.run(job)  # nothing was handed over: a cold judge takes the same job


def _fold(judge: Completed, worker: Completed | None) -> Completed:
    """The judge's Completed with the worker's limit folded in: the solution runs in the
    worker, so its timeout is the grading's, and its CPU at the limit decides a stall."""
    if worker is None or not worker.timed_out:
        return dataclasses.replace(judge, cpu_rate_at_limit=None)
    return dataclasses.replace(judge, timed_out=True, cpu_rate_at_limit=worker.cpu_rate_at_limit)


def _worker_job(task: Task, layout: dict, fd: int, cancel) -> Job:
    view = python_view(tuple(task.meta.deps))
    argv = [sys.executable, *_PY_FLAGS, str(layout["wire"] / "_worker.py"), str(layout["wire"]),
            str(layout["solution"]), str(fd), ",".join(_preimports(task))]
    return Job(argv=argv, cwd=layout["solution"], env=_env(layout["wscratch"], view), timeout_s=task.meta.time_limit_s,
               writable=(layout["solution"], layout["wscratch"]), readable=(*view.readable, str(layout["wire"])),
               masked=view.masked, devices=accelerator_devices(task.meta), pass_fds=(fd,), cancel=cancel,
               private_writes_mb=PRIVATE_WRITES_MB)


def _judge_job(task: Task, layout: dict, record_fd: int, fd: int) -> Job:
    argv = [sys.executable, *_PY_FLAGS, str(layout["judge"] / "runner.py"), str(layout["judge"]),
            str(layout["hidden_tests"]), str(layout["judge"] / "pytest.ini"), str(record_fd), str(fd),
            str(layout["solution_copy"]), ",".join(solution_modules(task))]
    view_job = _judge_view_job(task)
    readable = (*view_job.readable, *(str(layout[k]) for k in ("judge", "hidden_tests", "solution_copy")))
    env = _env(layout["jscratch"], _judge_view(task))
    return dataclasses.replace(view_job, argv=argv, cwd=layout["solution_copy"], env=env,
                               writable=(layout["jscratch"],), readable=readable, pass_fds=(record_fd, fd))


def _judge_view(task: Task):
    return python_view(tuple(task.meta.deps), JUDGE_DISTRIBUTIONS)


def _judge_view_job(task: Task) -> Job:
    """What every judge of this task shares: its view, hidden folder, devices and limits."""
    view = _judge_view(task)
    return Job(argv=[], cwd=Path("/"), env=_env(Path("/nonexistent"), view),
               timeout_s=task.meta.time_limit_s + JUDGE_GRACE_S, readable=tuple(view.readable), masked=view.masked,
               devices=accelerator_devices(task.meta), hidden=_task_folder(task), private_writes_mb=PRIVATE_WRITES_MB)


_PY_FLAGS = ("-s", "-B", "-P")
JUDGE_HELPERS = ("source_checks.py", "sqlite_facade.py", "solver_tests.py",  # task authors' tools (standalone),
                 "_solver_tests_probe.py", "mutant_patch.py")                # laid beside sb.judge
GRADER_FILES = ("grading.py", "_runner.py", "judge.py", "_wire.py", "_worker.py", "warm.py", *JUDGE_HELPERS,
                "sandbox/base.py", "sandbox/bwrap.py", "sandbox/view.py")


@lru_cache(maxsize=1)
def grader_hash() -> str:
    """A hash of the code that decides a verdict: this module, what it lays out beside the
    tests and the solution, and the sandbox. The toolchain fingerprint leaves the harness
    out, so this is what tells a Ray worker running another grader from the driver's, and
    what keys the reference's cached ids to the grader that produced them."""
    import hashlib
    package, digest = resources.files("sb"), hashlib.sha256(b"sb-grader-v1\0")
    for name in GRADER_FILES:
        digest.update(f"{name}:".encode() + hashlib.sha256(package.joinpath(name).read_bytes()).digest())
    return digest.hexdigest()[:16]


WATCHED_PREIMPORTS = ("numpy", "torch")


def _preimports(task: Task) -> list:
    """Imported by the worker while the judge starts; never a package that fixes its mode
    at first import (triton reads TRITON_INTERPRET then: that choice is the tests')."""
    return [dep for dep in task.meta.deps if dep in WATCHED_PREIMPORTS]


def solution_modules(task: Task) -> list:
    """Top-level module names the starter declares: the judge serves these from the worker."""
    names = set()
    for name in task.starter_files:
        first = name.split("/")[0]
        if "/" in name:
            names.add(first)
        elif first.endswith(".py"):
            names.add(first[:-3])
    return sorted(n for n in names if n.isidentifier())


def _task_folder(task: Task) -> tuple:
    """The graded task's own package folder, hidden even when it is not an installed package."""
    folder = Path(str(task.root))
    return (folder,) if folder.is_dir() else ()


def _pytest_ini(first_failure: bool) -> bytes:
    """The judge's pytest configuration, written by the grader where the solution cannot reach."""
    return b"[pytest]\naddopts = --maxfail=1\n" if first_failure else b"[pytest]\n"


def _lay_out_worker(root: Path, solution: FileSet) -> dict:
    """The worker's side: the solution, the wire and its scratch."""
    layout = {name: root / name for name in ("solution", "wire", "wscratch")}
    _make(layout, "wscratch")
    write_files(layout["solution"], solution)
    package = resources.files("sb")
    write_files(layout["wire"], {"_wire.py": package.joinpath("_wire.py").read_bytes(),
                                 "_worker.py": package.joinpath("_worker.py").read_bytes()})
    return layout


def _lay_out_judge(root: Path, task: Task, solution: FileSet, first_failure: bool = False) -> dict:
    """The judge's side: the runner and its modules, the hidden tests, a copy of the solution
    (for source checks, read, never imported) and its scratch."""
    layout = {name: root / name for name in ("solution_copy", "hidden_tests", "judge", "jscratch")}
    _make(layout, "jscratch")
    write_files(layout["solution_copy"], solution)
    write_files(layout["hidden_tests"], task.hidden_test_files)
    package = resources.files("sb")
    write_files(layout["judge"], {"runner.py": package.joinpath("_runner.py").read_bytes(),
                                  "pytest.ini": _pytest_ini(first_failure),
                                  "sb/__init__.py": b"", "sb/_wire.py": package.joinpath("_wire.py").read_bytes(),
                                  "sb/judge.py": package.joinpath("judge.py").read_bytes(),
                                  **{f"sb/{name}": package.joinpath(name).read_bytes() for name in JUDGE_HELPERS}})
    return layout


def _make(layout: dict, scratch: str) -> None:
    for path in layout.values():
        path.mkdir()
    (layout[scratch] / "home").mkdir()
    (layout[scratch] / "tmp").mkdir()


def write_files(folder: Path, files: FileSet) -> None:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _env(scratch: Path, view=None) -> dict:
    """Built from an allow-list, never copied from the parent: no credential reaches graded code."""
    env = {name: os.environ[name] for name in PASSTHROUGH_ENV if name in os.environ}
    # not the host's PATH
    env["PATH"] = os.pathsep.join((os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"))
    env.update(PINNED_ENV)
    env["HOME"] = str(scratch / "home")
    env["TMPDIR"] = str(scratch / "tmp")
    if view is not None and view.search_path:  # computed from the view, never inherited
        env["PYTHONPATH"] = os.pathsep.join(view.search_path)
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


def _device_holders(task: Task, completed) -> list:
    """Who holds the device, when a grading that had it ended blocked at its limit."""
    if not (completed.timed_out and completed.looks_blocked and accelerator_devices(task.meta)):
        return []
    from sb.hardware import device_holders
    return device_holders(task.meta)


def decide(task: Task, record: Record, completed, expected: list | None, sandbox: Sandbox) -> Outcome:
    """The verdict, from the record alone (the exit status is only cross-checked)."""
    outcomes = record.test_outcomes()
    base = dict(slug=task.slug, duration_s=round(completed.duration_s, 3), counts=_counts(outcomes, expected),
                test_ids=sorted(outcomes), probed_tests=record.probed_tests())
    holders = _device_holders(task, completed)
    if holders:
        return Outcome(status=Status.DEVICE_STALL, detail=f"blocked at the {task.meta.time_limit_s}s limit, using "
                       f"{completed.cpu_rate_at_limit:.2f} CPU, on a device held by: {'; '.join(holders[:3])}",
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
        ran = [nodeid for nodeid in failed if nodeid in outcomes] or failed  # a test that ran says more
        return Outcome(status=Status.FAILED, failed_tests=failed, detail=_first_failure(record, ran[0]), **base)
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
