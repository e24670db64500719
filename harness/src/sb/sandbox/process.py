"""Running one Job as a process tree: its limits (applied in the child before exec), its
own process group and session keyring, the wait for its end or its limit (with the tree's
CPU rate sampled at the limit), and the kill of everything it left behind."""

from __future__ import annotations

import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager, suppress

from sb.interrupt import track_group, untrack_group
from sb.sandbox.base import OUTPUT_TAIL_BYTES, Completed, Job

TYPE_CHECKING = False  # typing's, without importing typing: sb grade's head start imports this (sb/entry.py)
if TYPE_CHECKING:
    from typing import Iterator


def limits_preexec(job: Job):
    """rlimits applied in the child before exec (memory, processes, file size, CPU time),
    and a session keyring of its own, so graded code cannot read keys the grader holds."""
    join_keyring, die_with_parent = _keyring_joiner(), _death_signal_setter()

    def apply():
        mem = job.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_NPROC, (job.max_processes, job.max_processes))
        fsize = job.max_file_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        cpu = int(job.timeout_s) + 5
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        join_keyring()
        die_with_parent()
    return apply


KEYCTL_SYSCALL = {"x86_64": 250, "aarch64": 219}
KEYCTL_JOIN_SESSION_KEYRING = 1


def _keyring_joiner():
    """keyctl(JOIN_SESSION_KEYRING, NULL) bound in the parent: the child only calls it
    (nothing is loaded after fork). A no-op where the kernel has no keyrings."""
    if not sys.platform.startswith("linux"):
        return lambda: None
    number = KEYCTL_SYSCALL.get(os.uname().machine)  # platform.machine()'s answer, without importing platform
    if number is None:
        return lambda: None
    import ctypes
    syscall = ctypes.CDLL(None, use_errno=True).syscall
    syscall.restype = ctypes.c_long
    return lambda: syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None)


PR_SET_PDEATHSIG = 1


def _death_signal_setter():
    """prctl(PR_SET_PDEATHSIG, SIGKILL): the child dies with the grader, even under SIGKILL.
    A grader killed between the fork and the prctl sends no signal (a lost Ray node's worker
    is killed while it starts sandboxes): a child whose parent is already another process
    ends itself before it runs anything."""
    if not sys.platform.startswith("linux"):
        return lambda: None
    import ctypes
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def set_death_signal():
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(128 + signal.SIGKILL)
    return set_death_signal


@contextmanager
def closed_unless_started(job: Job) -> Iterator[None]:
    """The job's descriptors closed if what it wraps raises: a sandbox that fails before its
    process starts still closes them, as one that started does (Job's contract). Held open,
    a record pipe's write end keeps its reader waiting, and a wire's end its peer."""
    try:
        yield
    except BaseException:
        for fd in job.pass_fds:
            with suppress(OSError):
                os.close(fd)
        raise


def run_process(argv: list, job: Job, isolation: str, preexec=None) -> Completed:
    """Start `argv` in its own session, kill the whole group at the limit (or on any
    interruption of the grader, a Ctrl-C included), keep the output tail."""
    start = time.monotonic()
    with ExitStack() as files:
        with closed_unless_started(job):
            stdin = files.enter_context(open(os.devnull, "rb"))
            out = files.enter_context(tempfile.TemporaryFile())
        proc = None
        try:
            with interrupts_held():  # started and tracked as one step: never a child nobody kills
                with closed_unless_started(job):
                    proc = subprocess.Popen(argv, cwd=job.cwd, env=job.env, stdin=stdin, stdout=out,
                                            stderr=subprocess.STDOUT, start_new_session=True,
                                            pass_fds=job.pass_fds, preexec_fn=preexec)
                track_group(proc.pid)
                for fd in job.pass_fds:
                    os.close(fd)
            timed_out, returncode, cpu_rate = _wait(proc, job.timeout_s, job.cancel)
        finally:
            stragglers = proc is not None and _reap(proc)
        duration = time.monotonic() - start
        out.seek(0, os.SEEK_END)
        size = out.tell()
        out.seek(max(0, size - OUTPUT_TAIL_BYTES))
        output = out.read().decode("utf-8", "replace")
    return Completed(None if timed_out else returncode, timed_out, duration, output, isolation, stragglers, cpu_rate)


def _reap(proc: subprocess.Popen) -> bool:
    """Kill what is left of the child's group and wait for it, whatever interrupts."""
    with interrupts_held():
        stragglers = _kill_group(proc.pid)
        untrack_group(proc.pid)
        if proc.returncode is None:
            proc.wait()
    return stragglers


@contextmanager
def interrupts_held() -> Iterator[None]:
    """A KeyboardInterrupt (Ctrl-C in a library caller, Ray cancelling a task) waits until
    the block ends: arriving while a child is being started, or while it is being killed,
    it would otherwise leave a sandbox running, untracked, until its time limit. Only the
    main thread receives one, so elsewhere this does nothing."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return
    held: list = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            previous(signal.SIGINT, held[0])


def _wait(proc: subprocess.Popen, timeout_s: float, cancel=None):
    """(timed_out, returncode, CPU rate of the tree sampled at the limit or None)."""
    deadline = time.monotonic() + timeout_s
    with _exit_watch(proc) as ended_within:
        while True:
            step = min(0.05 if cancel is not None else timeout_s, deadline - time.monotonic())
            if ended_within(max(step, 0)):
                proc.wait()
                return False, proc.returncode, None
            if cancel is not None and cancel.is_set():
                _kill_group(proc.pid)
                proc.wait()
                return False, proc.returncode, None
            if time.monotonic() >= deadline:
                rate = cpu_rate(proc.pid)
                _kill_group(proc.pid)
                proc.wait()
                return True, proc.returncode, rate


@contextmanager
def _exit_watch(proc: subprocess.Popen) -> Iterator:
    """`ended_within(seconds)`: whether `proc` has ended, waiting at most that long. Through
    a pidfd where Linux offers one, which wakes the wait the moment the child ends:
    Popen.wait(timeout) polls, and noticed an ended child up to a fiftieth of a second late,
    at the end of every grading (its worker) and every command (its warm judges)."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        pidfd = None
    if pidfd is None:
        yield lambda seconds: _ended_within(proc, seconds)
        return
    watch = select.poll()
    watch.register(pidfd, select.POLLIN)
    trusted = [True]

    def woken(seconds: float) -> bool:
        if not trusted[0]:
            return _ended_within(proc, seconds)
        events = watch.poll(min(seconds, MAX_POLL_S) * 1000)
        if proc.poll() is not None:
            return True
        if events:  # ready, yet the child runs: the number is no longer this pidfd (closed elsewhere)
            trusted[0] = False
        return False

    try:
        yield woken
    finally:
        if trusted[0]:
            os.close(pidfd)


def _ended_within(proc: subprocess.Popen, seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


MAX_POLL_S = 86_400.0  # one wait of poll() at most (its limit in milliseconds is an int)


def cpu_rate(root_pid: int, window_s: float = 1.0) -> float | None:
    """CPU seconds per second used by `root_pid` and its descendants over a short window."""
    before = tree_cpu_seconds(root_pid)
    time.sleep(window_s)
    after = tree_cpu_seconds(root_pid)
    return None if before is None or after is None else max(0.0, after - before) / window_s


def tree_cpu_seconds(root_pid: int) -> float | None:
    """Linux: /proc; elsewhere: ps. None when neither can tell."""
    table = _proc_table() if os.path.isdir("/proc/self") else _ps_table()
    if table is None:
        return None
    children: dict = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    total, stack = 0.0, [root_pid]
    while stack:
        pid = stack.pop()
        total += table.get(pid, (0, 0.0))[1]
        stack += children.get(pid, [])
    return total


def _proc_table():
    ticks = os.sysconf("SC_CLK_TCK")
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks)
    return table


def _ps_table():
    try:
        out = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,time="], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    table = {}
    for line in out.splitlines():
        pid, ppid, cputime = line.split()
        table[int(pid)] = (int(ppid), _clock_seconds(cputime))
    return table


def _clock_seconds(text: str) -> float:
    """ps time: [[dd-]hh:]mm:ss[.ss]"""
    days, _, rest = text.rpartition("-")
    seconds = 0.0
    for part in rest.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds + (int(days) * 86400 if days else 0)


def _kill_group(pgid: int) -> bool:
    """SIGKILL every process left in the group; True when something was still there."""
    try:
        os.killpg(pgid, signal.SIGKILL)
        return True
    except (ProcessLookupError, PermissionError):
        return False
