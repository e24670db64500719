"""Warm judges: one long-lived judge per task view, forked once per grading.

A torch task's grading imports torch twice, once in the solution's worker and once in the
judge, and on two cores the judge's import (about 2.6 s of CPU here) is most of what the
split costs over a bare pytest run. The judge is the grader's own code and the hidden
tests; nothing of the solution ever runs in it. So it can be started once, in the same
sandbox a cold judge gets (its view, its hidden task folder, its limits), import pytest
and the task's heavy dependencies there, and fork a fresh child for each grading
(`judge_process.serve_warm`). The child imports the hidden tests, their oracles and the judge's
modules itself, in its own session, and exits when the grading ends: no grading's state
reaches the next. The solution's worker is never warm: every grading starts a worker in
a sandbox of its own, which holds nothing but that solution (docs/sandbox.md).

What differs from a cold judge, and why it is safe: the judge's scratch folder is the
warm judge's own (bounded per file, not in total, since the judge's writes are the
grader's code), and its /tmp is shared by the gradings it serves one after another.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import stat
import sys
import tempfile
import threading
import time
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path

from sb.interrupt import lasting_directory, remove_directory
from sb.sandbox.base import OUTPUT_TAIL_BYTES, Completed, Job, Sandbox

WARM_LIFETIME_S = 6 * 3600  # a warm judge's own limit; each grading's child has the grading's
WARM_RETIRE_S = 3600        # older than this, it takes no new grading: one taken before has 5 h left
IDLE_WARM_JUDGES = 3       # kept beyond this many, the least recently used one is closed
START_TIMEOUT_S = 120      # forking is fast; a warm judge this slow to answer is broken
IDLE_CLOSE_S = 30.0        # idle this long, it is closed: a long-lived process (a Ray worker) keeps none for nothing


class WarmJudgeBroken(Exception):
    """The warm judge could not take the grading; the caller runs a cold judge instead."""


class WarmJudge:
    """One warm judge process in `sandbox`, serving one grading at a time."""

    def __init__(self, sandbox: Sandbox, template: Job, preimports: list):
        self.root = Path(lasting_directory("sb-warm-judge-"))
        self.sandbox, self.broken, self.served, self.started = sandbox, False, 0, time.monotonic()
        self.idle_since = self.started
        (self.root / "tmp").mkdir()
        (self.root / "home").mkdir()
        program = self.root / "judge_process.py"
        from sb.grading.layout import judge_program
        program.write_bytes(judge_program())
        self.cancel = threading.Event()  # set: the warm judge's sandbox is killed
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control_lock, self.closed = threading.Lock(), False
        env = {**template.env, "HOME": str(self.root / "home"), "TMPDIR": str(self.root / "tmp")}
        argv = [sys.executable, "-s", "-B", "-P", str(program), "--warm", str(theirs.fileno()), ",".join(preimports),
                ",".join(sandbox.private_scratch)]
        # writable: the warm judge's own folder, a private copy where the sandbox makes one
        # (bwrap: on its sized /tmp), so what its gradings write is bounded in total
        self.job = replace(template, argv=argv, cwd=self.root, env=env, timeout_s=WARM_LIFETIME_S,
                           writable=(str(self.root),), pass_fds=(theirs.detach(),), cancel=self.cancel)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        """The warm judge's whole life in its sandbox. However it ends (its process gone, or
        the sandbox unable to start it at all), a grading waiting on it hears so at once,
        rather than at START_TIMEOUT_S."""
        try:
            self.sandbox.run(self.job)
        except Exception:  # noqa: BLE001 - its grading takes a cold judge, whose own start reports the cause
            pass
        finally:
            self.broken = True
            with self.control_lock, suppress(OSError):
                if not self.closed:  # never a shutdown of a descriptor close() gave back
                    self.control.shutdown(socket.SHUT_RDWR)

    def slot(self) -> Path:
        """A fresh folder for one grading's judge-side files. The warm judge unpacks them
        at the same path in its own view (a private copy does not show later host files)."""
        return Path(tempfile.mkdtemp(prefix="grading-", dir=self.root))

    def run(self, job: Job, slot: Path) -> Completed:
        """Run `job` (a judge job whose files lie in `slot`) in a fork of this warm judge.

        Its descriptors are handed over and closed here, as a sandbox does; the argv names
        each one where the job's argv held its number. Raises WarmJudgeBroken, before any
        descriptor is handed over, when the warm judge cannot take it."""
        argv = _script_argv(job.argv)
        fd_args = [len(argv) - 1 - argv[::-1].index(str(fd)) for fd in job.pass_fds]
        start = time.monotonic()
        with tempfile.TemporaryFile() as out, _packed(slot) as files:
            request = {"argv": argv, "cwd": str(job.cwd), "env": job.env, "cpu_s": int(job.timeout_s) + 5,
                       "fd_args": fd_args, "slot": str(slot)}
            started = self._start(request, [*job.pass_fds, out.fileno(), files.fileno()], job.pass_fds)
            try:
                returncode, timed_out = self._wait(started["pid"], job.timeout_s)
            except BaseException:  # an interrupt: this judge's child may still run, so it serves no other grading
                self.broken = True
                raise
            duration = time.monotonic() - start
            out.seek(0, os.SEEK_END)
            out.seek(max(0, out.tell() - OUTPUT_TAIL_BYTES))
            output = out.read().decode("utf-8", "replace")
        return Completed(None if timed_out else returncode, timed_out, duration, output, self.sandbox.name)

    def _start(self, request: dict, fds: list, passed: tuple) -> dict:
        """Hand the grading over; the job's own descriptors are closed here once handed over,
        and also on an interrupt (never left open in the grader, holding its record pipe)."""
        try:
            socket.send_fds(self.control, [json.dumps(request).encode()], fds)
            started = self._receive(START_TIMEOUT_S)
        except (OSError, ValueError) as exc:
            # it may hold the descriptors and fork later on the same wire and record: it is
            # killed, and gone, before a cold judge takes the job (a red team's finding)
            self.broken = True
            self.cancel.set()
            self.thread.join()
            raise WarmJudgeBroken(str(exc)) from exc
        except BaseException:
            self.broken = True
            _close_all(passed)
            raise
        _close_all(passed)
        self.served += 1
        return started

    def _receive(self, timeout_s: float) -> dict:
        """The warm judge's next message; TimeoutError after `timeout_s`, OSError if it ended."""
        self.control.settimeout(timeout_s)
        try:
            data = self.control.recv(1 << 16)
        finally:
            self.control.settimeout(None)
        if not data:
            raise OSError("the warm judge ended")
        return json.loads(data)

    def _wait(self, pid: int, timeout_s: float) -> tuple:
        """(returncode, timed_out): the child's exit, or its group killed at the limit."""
        try:
            return self._receive(timeout_s)["exit"], False
        except TimeoutError:
            pass
        except (OSError, ValueError, KeyError):
            self.broken = True
            return -9, False
        try:
            self.control.send(json.dumps({"kill": pid}).encode())
            return self._receive(30)["exit"], True
        except (OSError, ValueError, KeyError):
            self.broken = True
            return None, True

    def close(self) -> None:
        """End of file ends the warm judge; its sandbox is cancelled if it does not go."""
        with self.control_lock:
            self.closed = True
            self.control.close()
        self.thread.join(timeout=10)
        self.cancel.set()
        self.thread.join(timeout=10)
        remove_directory(str(self.root))


def _close_all(fds) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


@contextmanager
def _packed(slot: Path):
    """The slot's folders and files in a temporary file, rewound: one line of JSON listing
    each folder as [path] and each file as [path, size] (paths relative to the slot,
    parents first), then the files' bytes in that order (judge_process._unpack). Not a
    tar: packing and unpacking a grading's few dozen files that way took about 0.02 s of
    every grading, mostly owner names and times the judge never reads."""
    entries: list = []
    contents: list = []
    for folder, subfolders, names in os.walk(slot):
        subfolders[:] = sorted(name for name in subfolders if not os.path.islink(os.path.join(folder, name)))
        relative = Path(folder).relative_to(slot).as_posix()
        prefix = "" if relative == "." else f"{relative}/"
        entries += [[f"{prefix}{name}"] for name in subfolders]
        for name in sorted(names):
            data = _regular_file(os.path.join(folder, name))
            if data is not None:
                entries.append([f"{prefix}{name}", len(data)])
                contents.append(data)
    with tempfile.TemporaryFile() as files:
        files.write(json.dumps(entries).encode() + b"\n")
        for data in contents:
            files.write(data)
        files.seek(0)
        yield files


def _regular_file(path: str) -> bytes | None:
    """The bytes of `path` if it is a regular file; None for anything else (a link, a FIFO:
    the grader lays out regular files and folders only, and a FIFO would block)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        return file.read() if stat.S_ISREG(os.fstat(fd).st_mode) else None


def _script_argv(argv: list) -> list:
    """The judge program's own argv: what follows the interpreter and its flags."""
    rest = list(argv[1:])
    while rest and rest[0].startswith("-"):
        rest.pop(0)
    return rest


class WarmJudges:
    """This process's warm judges, keyed by everything of a judge's sandbox that is not
    one grading's own: the sandbox, the view, the hidden paths, the limits, the imports."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list = []    # (key, judge), least recently used first
        self.closer: threading.Thread | None = None
        atexit.register(self.close)

    def take(self, sandbox: Sandbox, template: Job, preimports: list):
        """(key, judge) for a judge job like `template`: an idle one, or a new one; None when
        its limit is too long for a warm judge (a cold judge then takes it)."""
        if _too_long(template):
            return None
        key, found = _key(sandbox, template, preimports), None
        with self.lock:
            retired = [(k, j) for k, j in self.idle if j.broken or time.monotonic() - j.started > WARM_RETIRE_S]
            self.idle = [entry for entry in self.idle if entry not in retired]
            for i, (k, judge) in enumerate(self.idle):
                if k == key and not judge.broken:
                    found = self.idle.pop(i)[1]
                    break
        for _, old in retired:
            old.close()
        return key, found or WarmJudge(sandbox, template, preimports)

    def start(self, sandbox: Sandbox, template: Job, preimports: list) -> bool:
        """Start a warm judge for jobs like `template` now, idle until a grading takes it
        (False, and none started, when `take` would refuse it)."""
        if _too_long(template):
            return False
        self.give_back(_key(sandbox, template, preimports), WarmJudge(sandbox, template, preimports))
        return True

    def give_back(self, key, judge: WarmJudge) -> None:
        if judge.broken:
            judge.close()
            return
        judge.idle_since = time.monotonic()
        with self.lock:
            self.idle.append((key, judge))
            evicted = self.idle[:-IDLE_WARM_JUDGES]
            del self.idle[:-IDLE_WARM_JUDGES]
            if self.closer is None or not self.closer.is_alive():
                self.closer = threading.Thread(target=self._close_idle, name="sb-warm-judge-closer", daemon=True)
                self.closer.start()
        for _, old in evicted:
            old.close()

    def _close_idle(self) -> None:
        """Close each judge idle for IDLE_CLOSE_S; ends when none is left idle."""
        while True:
            time.sleep(IDLE_CLOSE_S / 4)
            now = time.monotonic()
            with self.lock:
                stale = [(k, j) for k, j in self.idle if now - j.idle_since >= IDLE_CLOSE_S]
                self.idle = [entry for entry in self.idle if entry not in stale]
                if not self.idle and not stale:
                    self.closer = None
                    return
            for _, judge in stale:
                judge.close()

    def close(self) -> None:
        with self.lock:
            judges, self.idle = self.idle, []
        for _, judge in judges:
            judge.close()


def _too_long(template: Job) -> bool:
    """A limit a warm judge could not serve to its end before it retires."""
    return template.timeout_s > WARM_LIFETIME_S - WARM_RETIRE_S - 60


# Every field of a judge's template that its warm judge uses (early.py remembers these).
TEMPLATE_FIELDS = ("env", "timeout_s", "readable", "masked", "hidden", "devices", "memory_mb", "max_processes",
                   "max_file_mb", "private_writes_mb")


def _key(sandbox: Sandbox, job: Job, preimports: list) -> tuple:
    """The sandbox instance itself (a judge holds it, so its id is never reused meanwhile)
    and every field of the template the warm judge uses: a judge started from a remembered
    template (early.py) is taken only where it equals the one the session worked out."""
    return (id(sandbox), *(_comparable(getattr(job, name)) for name in TEMPLATE_FIELDS), tuple(preimports))


def _comparable(value):
    """A field as a key holds it: a mapping as sorted items, paths as text."""
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    if isinstance(value, (tuple, list)):
        return tuple(str(item) for item in value)
    return value


_JUDGES: WarmJudges | None = None


def warm_judges() -> WarmJudges:
    global _JUDGES
    if _JUDGES is None:
        _JUDGES = WarmJudges()
    return _JUDGES
