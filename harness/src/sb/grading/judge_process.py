"""The judge: runs the hidden tests and writes the record. Standalone: imports nothing of
the installed `sb` (the grader lays `sb/judge.py` and `sb/grading/wire/` beside this file).

Usage: python -s -B -P judge_process.py HARNESS_DIR TESTS_DIR INI RECORD_FD WIRE_FD SOLUTION_DIR MODULES
   or: python -s -B -P judge_process.py --warm CONTROL_FD PREIMPORT,... SCRATCH,...   (a warm judge: serve_warm)

The judge never imports the solution: the modules the starter declares are served by the
worker process over the wire (sb.judge). It writes one JSON line per event to RECORD_FD:
start, every collection error, every test phase (outcome from the raw exception), every
protocol violation the worker committed, and end.
"""

import json
import os
import sys
import threading

_write = os.write
_exit = os._exit
MESSAGE_LIMIT = 2000


class Channel:
    """JSON lines on the record pipe; a lock keeps lines whole when the wire's reader
    thread reports a violation while a test is being recorded."""

    def __init__(self, fd):
        self.fd = fd
        self.lock = threading.Lock()

    def emit(self, **record):
        data = memoryview((json.dumps(record) + "\n").encode())
        with self.lock:
            while data:
                data = data[_write(self.fd, data):]


class Recorder:
    """Every test phase and collection error, each with how many probe uses it made: what a
    test learnt from a probe was observed in the solution's process (sb.judge.probe)."""

    def __init__(self, channel, observations):
        self.channel, self.observations, self.seen = channel, observations, 0

    def _probed(self):
        now = self.observations()
        delta, self.seen = now - self.seen, now
        return delta

    def pytest_collectreport(self, report):
        probed = self._probed()  # used while its module was imported: every test of it rests on it
        if probed:
            self.channel.emit(event="collect_probed", nodeid=report.nodeid, probed=probed)
        if report.failed:
            self.channel.emit(event="collect_error", nodeid=report.nodeid, message=_tail(report.longreprtext))

    def pytest_runtest_makereport(self, item, call):
        excinfo = call.excinfo
        if excinfo is None:
            outcome, exc, message = "passed", None, ""
        else:
            import pytest
            outcome = "skipped" if excinfo.errisinstance(pytest.skip.Exception) else "failed"
            exc, message = excinfo.typename, _short(excinfo.exconly())
        self.channel.emit(event="test", nodeid=item.nodeid, when=call.when, outcome=outcome, exc=exc,
                          message=message, probed=self._probed())


def _short(text, limit=MESSAGE_LIMIT):
    text = str(text).strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _tail(text, limit=MESSAGE_LIMIT):
    """The end of a collection error: the exception line is last, the import chain first."""
    text = str(text).strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def main(argv):
    harness_dir, tests_dir, ini, record_fd, wire_fd, solution_dir, modules = argv[1:8]
    channel = Channel(int(record_fd))
    sys.path.insert(0, harness_dir)
    from sb import judge
    judge.connect(int(wire_fd), [m for m in modules.split(",") if m], solution_dir, tests_dir,
                  on_violation=lambda text: channel.emit(event="violation", message=_short(text, 500)))
    import pytest
    channel.emit(event="start", pid=os.getpid())
    args = [tests_dir, "-c", ini, "--rootdir", tests_dir, f"--confcutdir={tests_dir}", "-q", "-p", "no:cacheprovider",
            "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:randomly", "-p", "no:xdist",
            "--import-mode=prepend", "-o", "console_output_style=classic",
            # The record keeps only each exception's own text; pytest's long tracebacks (source
            # and locals of every frame) cost a failing test up to ~0.3 s of CPU, five times a
            # whole failing grading, for an output tail nobody parses. Native ones are cheap.
            "--tb=native"]
    try:
        status = int(pytest.main(args, plugins=[Recorder(channel, judge.worker_observations)]))
    except BaseException as exc:  # noqa: BLE001 - a bug in a hidden test's module-level code, say
        channel.emit(event="collect_error", nodeid="", message=f"pytest.main failed: {type(exc).__name__}: {exc}")
        status = 3
    channel.emit(event="end", exitstatus=status, tampered=[])
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a stream that cannot flush must not stop the exit
            pass
    _exit(status)


def serve_warm(control_fd, names, scratch):
    """A warm judge: import pytest and the task's heavy dependencies once, then fork one
    fresh judge per grading the grader asks for (warm.py), so no grading pays those
    imports again. Nothing of a grading is imported before its fork: each child imports
    the judge's modules, the hidden tests and their oracles itself, exactly as a cold
    judge does, and ends with os._exit, so no grading leaves state in the next.

    One grading at a time. This process is its children's subreaper and stays in their
    process group: once a grading's child has ended (or at a kill), every process left
    below this one is that grading's and is killed, and the grader's interrupt, which
    kills this group, reaches them all, as with a cold judge. Then every file the grading
    could write is removed: this folder's (but this file), and the contents of `scratch`,
    the sandbox's private folders (/tmp...), so the next grading finds what a new judge would.

    One packet per message on a SOCK_SEQPACKET socket. From the grader: a run (JSON:
    argv, cwd, env, cpu_s, fd_args, slot; its record, wire and output descriptors and a tar
    of the slot's files attached), a kill, or end of file (exit). To it: {"pid"} once
    forked, {"exit": status} once it ended and was cleaned up after.
    """
    import socket
    _become_subreaper()
    root = os.getcwd()
    for name in ["pytest", *names]:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - the grading's own import reports it
            pass
    control = socket.socket(fileno=control_fd)
    lock = threading.Lock()

    def tell(**message):
        with lock:
            control.send(json.dumps(message).encode())

    def reap(pid):
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:  # never: orphans are reaped around the live child
            status = 0
        _kill_descendants()  # what the grading started and left, as a cold judge's sandbox would
        _wipe(root, scratch)
        tell(exit=os.waitstatus_to_exitcode(status))

    while True:
        data, fds, _, _ = socket.recv_fds(control, 1 << 20, 8)
        if not data:
            _end()
        message = json.loads(data)
        if "kill" in message:
            _kill_descendants(spare=message["kill"])
            continue
        *fds, files = fds
        _unpack(files, message["slot"])
        pid = os.fork()
        if pid == 0:
            control.close()
            _become_grading(message, fds)
        for fd in fds:
            os.close(fd)
        tell(pid=pid)
        threading.Thread(target=reap, args=(pid,), daemon=True).start()


def _unpack(fd, slot):
    """The grading's judge-side files, where the grader laid them out. A private copy of
    this folder (bwrap's) does not show what the grader wrote after it was taken, or shows
    it half written (the first slot may be made while the copy is taken); without one
    (`none`) they are already there, and are written again with the same bytes.

    The format is warm.py's `_packed`: one line of JSON listing each folder as [path] and
    each file as [path, size], paths relative to the slot, then the files' bytes in that
    order. Each path must name a place inside the slot, and each file is written without
    following a link."""
    with os.fdopen(fd, "rb") as packed:
        os.makedirs(slot, exist_ok=True)
        for entry in json.loads(packed.readline()):
            path = _inside(slot, entry[0])
            if len(entry) == 1:
                os.makedirs(path, exist_ok=True)
                continue
            data = packed.read(entry[1])
            if len(data) != entry[1]:
                raise ValueError(f"the packed files end inside {entry[0]!r}")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            try:
                while data:
                    data = data[_write(out, data):]
            finally:
                os.close(out)


def _inside(slot, name):
    """`name` under `slot`, refused unless it is a plain relative path (no `..`, no root)."""
    if not isinstance(name, str) or any(part in ("", ".", "..") for part in name.split("/")):
        raise ValueError(f"not a path inside the grading's folder: {name!r}")
    return os.path.join(slot, name)


def _wipe(root, scratch):
    for entry in os.listdir(root):
        path = os.path.join(root, entry)
        if entry in ("home", "tmp"):
            _empty(path)
        # this program, and the owner marker that orphan reaping reads
        elif entry not in (os.path.basename(__file__), ".sb-owner"):
            _remove(path)
    for folder in scratch:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            path = os.path.join(folder, entry)
            if not (root + os.sep).startswith(path + os.sep):  # never the folders that hold this one
                _remove(path)


def _empty(folder):
    for entry in os.listdir(folder):
        _remove(os.path.join(folder, entry))


def _remove(path):
    import shutil
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass


def _end():
    """The grader closed the socket (done, or interrupted mid-grading): kill and reap every
    process below this one first, so none outlives the warm judge even as a zombie."""
    _kill_descendants()
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    _exit(0)


def _become_subreaper():
    """prctl(PR_SET_CHILD_SUBREAPER): a grading's orphans come to this process, not to init."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)


def _kill_descendants(spare=None):
    """SIGKILL every process below this one (only one grading's run at a time), and reap
    those that were orphaned to it; `spare` (the grading's own child) is killed but reaped
    by its waiter."""
    import signal
    import time
    me = os.getpid()
    for _ in range(50):
        below = _descendants(me)
        if not below:
            return
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)
        _reap_orphans(me, spare)


def _descendants(root):
    """Live (not zombie) processes below `root`."""
    parents = {}
    for pid, state, ppid in _process_table():
        if state != "Z":
            parents.setdefault(ppid, []).append(pid)
    found, stack = [], list(parents.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack += parents.get(pid, [])
    return found


def _reap_orphans(me, spare):
    """Reap the zombies orphaned to this process: every child but the grading's own."""
    for pid, state, ppid in _process_table():
        if state == "Z" and ppid == me and pid != spare:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _process_table():
    """(pid, state, parent pid) of every process this one can see in /proc."""
    table = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            table.append((int(entry), stat[0], int(stat[1])))
    return table


def _become_grading(message, fds):
    """In the forked child: the grading's output, folder, environment and CPU limit; its
    descriptors where its argv names them; then the judge's main, which exits."""
    import resource
    import tempfile
    *passed, out = fds
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    argv = list(message["argv"])
    for index, fd in zip(message["fd_args"], passed):
        argv[index] = str(fd)
    os.chdir(message["cwd"])
    os.environ.clear()
    os.environ.update(message["env"])
    tempfile.tempdir = None  # read from TMPDIR again, the grading's own
    cpu = int(message["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    sys.argv = argv
    try:
        main(argv)
    finally:
        _exit(70)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--warm"]:
        serve_warm(int(sys.argv[2]), [n for n in sys.argv[3].split(",") if n], [p for p in sys.argv[4].split(",") if p])
    else:
        main(sys.argv)
