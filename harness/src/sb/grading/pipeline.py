"""grade(task, files) -> Outcome: the grading contract of docs/architecture.md.

A fresh directory holds only the declared files (layout.py). Two processes grade them,
each in its own sandbox: the *judge* runs the hidden tests (it alone sees them, their
oracles and every expected value) and reports every test phase through a pipe; the
solution's *worker* imports the solution and answers the judge over a data-only wire
(wire.py). The verdict comes from the judge's record compared with the test ids the
reference produced, never from an exit code, and nothing the worker does can write that
record (verdict.py).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import sys
import threading
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path

from sb.grading.layout import PY_FLAGS, lay_out_judge, lay_out_worker, solution_modules, task_folder
from sb.grading.verdict import Record, verdict
from sb.hardware import accelerator_devices
from sb.interrupt import temporary_directory
from sb.outcome import Outcome, Status
from sb.sandbox.base import PRIVATE_WRITES_MB, Completed, Job, Sandbox
from sb.sandbox.process import interrupts_held
from sb.sandbox.view import JUDGE_DISTRIBUTIONS, python_view
from sb.task import FileSet, Task

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
    The judge is a fork of a warm judge where the sandbox keeps them (warm.py)."""
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
            from sb.grading.warm import warm_judges
            warm_judges().give_back(*warm)


def _execute(task: Task, solution: FileSet, sandbox: Sandbox, first_failure: bool, warm):
    """The worker is started before the judge's side is laid out: its start (a jail, an
    interpreter, the task's imports) is the longer one, and the judge waits on it."""
    with temporary_directory(f"sb-{task.slug}-") as tmp, _judge_root(warm, Path(tmp)) as judge_root:
        worker_layout = lay_out_worker(Path(tmp), solution)
        judge_end, worker_end = (s.detach() for s in socket.socketpair())
        unhanded = [judge_end, worker_end]  # closed here unless handed to a job, whose start closes them
        cancel = threading.Event()
        worker_done: dict = {}
        thread = threading.Thread(target=lambda: worker_done.update(completed=sandbox.run(worker_job)), daemon=True)
        try:  # started inside: an interrupt that lands in start() still cancels the worker's sandbox
            worker_job = _worker_job(task, worker_layout, worker_end, cancel)
            unhanded.remove(worker_end)
            thread.start()
            layout = lay_out_judge(judge_root, task, solution, first_failure)
            read_fd, record_fd = os.pipe()
            unhanded.append(record_fd)
            reader = _RecordReader(read_fd)
            judge_job = _judge_job(task, layout, record_fd, judge_end)
            unhanded.remove(judge_end)
            unhanded.remove(record_fd)
            judged = _run_judge(warm, sandbox, judge_job, judge_root)
        finally:
            for fd in unhanded:
                os.close(fd)
            cancel.set()
            if thread.is_alive():
                thread.join()
        return reader.finish(), _fold(judged, worker_done.get("completed"))


def _warm_judge(task: Task, sandbox: Sandbox):
    """(key, WarmJudge) when this grading's judge can be a fork of a warm one, else None."""
    if not _judged_warm(task, sandbox):
        return None
    from sb.grading.warm import warm_judges
    return warm_judges().take(sandbox, _judge_view_job(task), _preimports(task))


def start_warm_judge(task: Task, sandbox: Sandbox) -> bool:
    """Start now, idle, the warm judge a later grading of `task` in `sandbox` will take
    (sb/grading/early.py); False when its gradings get cold judges or none at all."""
    if precheck(task) is not None or not _judged_warm(task, sandbox):
        return False
    from sb.grading.warm import warm_judges
    return warm_judges().start(sandbox, _judge_view_job(task), _preimports(task))


def _judged_warm(task: Task, sandbox: Sandbox) -> bool:
    """Never for a task with devices (a device's holder is the grading's own process), and
    only on Linux (a warm judge reaps what a grading leaves through /proc and a subreaper)."""
    cold = os.environ.get("SB_WARM_JUDGES", "1") == "0" or accelerator_devices(task.meta) or sys.platform != "linux"
    return not cold and sandbox.keeps_warm_judges


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
    from sb.grading.warm import WarmJudgeBroken
    try:
        return warm[1].run(job, slot)
    except WarmJudgeBroken:
        return sandbox.run(job)  # nothing was handed over: a cold judge takes the same job


def _fold(judge: Completed, worker: Completed | None) -> Completed:
    """The judge's Completed with the worker's limit folded in: the solution runs in the
    worker, so its timeout is the grading's, and its CPU at the limit decides a stall. How
    the worker ended otherwise goes along, for a detail that says the solution's process
    ended where the judge saw only its wire close."""
    if worker is None or not worker.timed_out:
        return dataclasses.replace(judge, cpu_rate_at_limit=None,
                                   worker_exit=worker.returncode if worker is not None else None)
    return dataclasses.replace(judge, timed_out=True, cpu_rate_at_limit=worker.cpu_rate_at_limit)


def _worker_job(task: Task, layout: dict, fd: int, cancel) -> Job:
    view = python_view(tuple(task.meta.deps))
    argv = [sys.executable, *PY_FLAGS, str(layout["wire"] / "worker_process.py"), str(layout["wire"]),
            str(layout["solution"]), str(fd), ",".join(_preimports(task))]
    return Job(argv=argv, cwd=layout["solution"], env=_env(layout["wscratch"], view), timeout_s=task.meta.time_limit_s,
               writable=(layout["solution"], layout["wscratch"]), readable=(*view.readable, str(layout["wire"])),
               masked=view.masked, devices=accelerator_devices(task.meta), pass_fds=(fd,), cancel=cancel,
               private_writes_mb=PRIVATE_WRITES_MB)


def _judge_job(task: Task, layout: dict, record_fd: int, fd: int) -> Job:
    argv = [sys.executable, *PY_FLAGS, str(layout["judge"] / "judge_process.py"), str(layout["judge"]),
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
               devices=accelerator_devices(task.meta), hidden=task_folder(task), private_writes_mb=PRIVATE_WRITES_MB)


WATCHED_PREIMPORTS = ("numpy", "torch")


def _preimports(task: Task) -> list:
    """Imported by the worker while the judge starts; never a package that fixes its mode
    at first import (triton reads TRITON_INTERPRET then: that choice is the tests')."""
    return [dep for dep in task.meta.deps if dep in WATCHED_PREIMPORTS]


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
    """Reads the judge's JSON lines on a thread, so a chatty run never blocks on the pipe."""

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


def decide(task: Task, record: Record, completed: Completed, expected: list | None, sandbox: Sandbox) -> Outcome:
    """The verdict of verdict.py, given what only this machine can say: who holds the task's
    device at a stall, and whether the untouched starter collects (graded only when asked)."""
    return verdict(task.slug, task.meta.time_limit_s, record, completed, expected,
                   device_holders=_device_holders(task, completed),
                   starter_collects=lambda: _starter_collects(task, sandbox))


def _starter_collects(task: Task, sandbox: Sandbox) -> bool:
    starter_record, _ = execute(task, task.starter_files, sandbox)
    return starter_record.started and not starter_record.collect_errors
