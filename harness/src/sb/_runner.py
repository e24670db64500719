"""The judge: runs the hidden tests and writes the record. Standalone: imports nothing of
the installed `sb` (the grader lays `sb/judge.py` and `sb/_wire.py` beside this file).

Usage: python -s -B -P _runner.py HARNESS_DIR TESTS_DIR INI RECORD_FD WIRE_FD SOLUTION_DIR MODULES

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
    def __init__(self, channel):
        self.channel = channel

    def pytest_collectreport(self, report):
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
                          message=message)


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
        status = int(pytest.main(args, plugins=[Recorder(channel)]))
    except BaseException as exc:  # a bug in a hidden test's module-level code, say
        channel.emit(event="collect_error", nodeid="", message=f"pytest.main failed: {type(exc).__name__}: {exc}")
        status = 3
    channel.emit(event="end", exitstatus=status, tampered=[])
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    _exit(status)


if __name__ == "__main__":
    main(sys.argv)
