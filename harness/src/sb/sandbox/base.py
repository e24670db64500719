"""The Sandbox interface: run one command under limits, report how it ended.

Small on purpose (one method). A Sandbox never interprets what ran; the grader does.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from sb.errors import SbError

DEFAULT_MEMORY_MB = 8192
OUTPUT_TAIL_BYTES = 20_000


@dataclass(frozen=True)
class Job:
    """One command to run.

    `pass_fds` are handed to the child and CLOSED in the parent once it has started (the
    grader keeps only the read end of its record pipe, so it sees end-of-file when every
    writer is gone). `writable` are the only paths the command may write; `hidden` are
    paths that must not be visible to it at all.
    """

    argv: list
    cwd: Path
    env: dict
    timeout_s: float
    writable: tuple = ()
    hidden: tuple = ()
    pass_fds: tuple = ()
    memory_mb: int = DEFAULT_MEMORY_MB
    max_processes: int = 256
    max_file_mb: int = 512


@dataclass
class Completed:
    returncode: int | None
    timed_out: bool
    duration_s: float
    output: str = ""
    isolation: str = ""
    killed_stragglers: bool = False


class Sandbox(ABC):
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """None when this sandbox can run here, else one line saying why not."""
        return None

    @abstractmethod
    def run(self, job: Job) -> Completed:
        """Run `job` to completion or its time limit; never raises for what the command does."""


def limits_preexec(job: Job):
    """rlimits applied in the child before exec: memory, processes, file size, CPU time."""
    def apply():
        mem = job.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_NPROC, (job.max_processes, job.max_processes))
        fsize = job.max_file_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        cpu = int(job.timeout_s) + 5
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def run_process(argv: list, job: Job, isolation: str, preexec=None) -> Completed:
    """Start `argv` in its own session, kill the whole group at the limit, keep the output tail."""
    start = time.monotonic()
    with open(os.devnull, "rb") as stdin, _output_file() as out:
        proc = subprocess.Popen(argv, cwd=job.cwd, env=job.env, stdin=stdin, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, pass_fds=job.pass_fds, preexec_fn=preexec)
        for fd in job.pass_fds:
            os.close(fd)
        timed_out = _wait(proc, job.timeout_s)
        stragglers = _kill_group(proc.pid)
        duration = time.monotonic() - start
        out.seek(0, os.SEEK_END)
        size = out.tell()
        out.seek(max(0, size - OUTPUT_TAIL_BYTES))
        output = out.read().decode("utf-8", "replace")
    return Completed(None if timed_out else proc.returncode, timed_out, duration, output, isolation, stragglers)


def _output_file():
    import tempfile
    return tempfile.TemporaryFile()


def _wait(proc: subprocess.Popen, timeout_s: float) -> bool:
    try:
        proc.wait(timeout=timeout_s)
        return False
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.wait()
        return True


def _kill_group(pgid: int) -> bool:
    """SIGKILL every process left in the group; True when something was still there."""
    try:
        os.killpg(pgid, signal.SIGKILL)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def available_sandboxes(pm=None) -> dict:
    from sb.plugins import collect, load_plugins
    pm = pm or load_plugins()
    return collect(pm, "register_sandboxes", "sandbox", lambda cls: cls.name).items


def choose_sandbox(name: str | None, pm=None) -> Sandbox:
    """The sandbox named (or the default: bwrap), refusing with a one-line reason if unusable."""
    sandboxes = available_sandboxes(pm)
    chosen = name or "bwrap"
    if chosen not in sandboxes:
        raise SbError(f"unknown isolation {chosen!r}; choose one of: {', '.join(sorted(sandboxes))}")
    reason = sandboxes[chosen].unavailable_reason()
    if reason:
        hint = " (pass --isolation none to grade without isolation, at your own risk)" if chosen != "none" else ""
        raise SbError(f"isolation {chosen!r} cannot run here: {reason}{hint}")
    return sandboxes[chosen]()
