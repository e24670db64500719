"""The Sandbox interface: run one command under limits, report how it ended.

Small on purpose (one method). A Sandbox never interprets what ran; the grader does. How
a sandbox starts, limits, waits for and kills a process tree is in process.py, which every
built-in sandbox shares and a new one may use.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

TYPE_CHECKING = False  # typing's, without importing typing: sb grade's head start imports this (sb/entry.py)
if TYPE_CHECKING:
    from typing import ClassVar

DEFAULT_MEMORY_MB = 8192
PRIVATE_WRITES_MB = 512  # a grading's writable folders and /tmp together (see docs/sandbox.md)
OUTPUT_TAIL_BYTES = 20_000


@dataclass(frozen=True)
class Job:
    """One command to run.

    `pass_fds` are handed to the child and CLOSED in the parent once it has started, or
    when the sandbox fails before it starts (the grader keeps only the read end of its
    record pipe, so it sees end-of-file when every writer is gone; process.py's
    `closed_unless_started`). A sandbox that isolates the filesystem shows the command only
    `readable` (read-only), `writable`, the system's own libraries and `devices`, with
    every folder in `masked` empty; `hidden` paths are never visible at all. `cancel`, when
    given, is an Event the grader sets when the run is no longer wanted: the sandbox then
    kills the command's whole tree and returns.

    `private_writes_mb`, when set, says nothing the command writes is read back: a sandbox
    that can should give it copies of its `writable` folders on a private file system of
    that size, so the total a hostile solution writes is bounded (not only each file).
    """

    argv: list
    cwd: Path
    env: dict
    timeout_s: float
    writable: tuple = ()
    hidden: tuple = ()
    pass_fds: tuple = ()
    readable: tuple = ()
    masked: tuple = ()
    devices: tuple = ()
    cancel: threading.Event | None = None
    memory_mb: int = DEFAULT_MEMORY_MB
    max_processes: int = 256
    max_file_mb: int = 512
    private_writes_mb: int | None = None


@dataclass
class Completed:
    returncode: int | None
    timed_out: bool
    duration_s: float
    output: str = ""
    isolation: str = ""
    killed_stragglers: bool = False
    cpu_rate_at_limit: float | None = None  # CPU seconds per second of the whole tree, sampled at the limit
    worker_exit: int | None = None  # a grading's: how the solution's process ended, unless at its limit

    @property
    def looks_blocked(self) -> bool:
        """At its limit the process tree was using almost no CPU: waiting on something, such
        as a device held by another process, rather than computing slowly. A busy process
        on a loaded machine still gets a share of a core; a blocked one gets none."""
        return self.timed_out and self.cpu_rate_at_limit is not None and self.cpu_rate_at_limit < 0.05


class Sandbox(ABC):
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    # True: a long-lived command run by `run` may serve many gradings' judges, each a fork
    # with the same view, limits and hidden paths (sb/grading/warm.py). A sandbox whose run does
    # anything per job beyond starting the command under the job's limits leaves it False.
    keeps_warm_judges: ClassVar[bool] = False
    # Folders every run gets fresh and private (not the host's): a warm judge empties them
    # between the gradings it serves, as a new run would find them.
    private_scratch: ClassVar[tuple] = ()

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """None when this sandbox can run here, else one line saying why not."""
        return None

    @abstractmethod
    def run(self, job: Job) -> Completed:
        """Run `job` to completion or its time limit; never raises for what the command does."""


def available_sandboxes(pm) -> dict:
    from sb.plugins import collect
    return collect(pm, "register_sandboxes", "sandbox", lambda cls: cls.name).items


def choose_sandbox(name: str | None, pm) -> Sandbox:
    """The sandbox named (or the default: bwrap), refusing with a one-line reason if unusable."""
    from sb.plugins import choose
    hint = " (pass --isolation none to grade without isolation, at your own risk)" if name != "none" else ""
    return choose(pm, "register_sandboxes", "sandbox", name, "bwrap", "isolation", hint)()
