"""The pytest runner that executes inside the sandbox. Standalone: imports nothing of sb.

Usage: python -s -B _runner.py SOLUTION_DIR TESTS_DIR INI RECORD_FD [PREIMPORT,...]

It writes one JSON line per event to RECORD_FD (a pipe the grader reads): start, every
collection error, every test phase (outcome taken from the raw exception, not from the
report object a plugin could rewrite), and end with the tamper check. Before the solution
is imported it snapshots the objects the verdict depends on; at the end it compares them.
It leaves with os._exit so no atexit hook of the solution can rewrite the exit status.
"""

import builtins
import json
import os
import sys

_write = os.write
_exit = os._exit
_dumps = json.dumps


class Channel:
    def __init__(self, fd):
        self.fd = fd

    def emit(self, **record):
        line = (_dumps(record) + "\n").encode()
        _write(self.fd, line[:4000] if len(line) > 4000 else line)


def _watched_modules(preimported):
    names = ["_pytest.runner", "_pytest.reports", "_pytest.python", "_pytest.main", "_pytest.outcomes",
             "_pytest.python_api", "_pytest.raises", "pytest", "unittest.case", "os", "sys", "json"]
    names += [m for m in ("numpy.testing", "torch.testing", "numpy") if m.split(".")[0] in preimported]
    return [m for m in names if m in sys.modules]


def _classes():
    import unittest
    from _pytest import reports, runner
    return {"TestReport": reports.TestReport, "BaseReport": reports.BaseReport,
            "CollectReport": reports.CollectReport, "CallInfo": runner.CallInfo, "TestCase": unittest.TestCase}


def snapshot(preimported):
    """Identity of every attribute that a forged verdict would have to replace."""
    state = {}
    for name in _watched_modules(preimported):
        for attr, value in list(vars(sys.modules[name]).items()):
            if callable(value) or isinstance(value, type):
                state[f"{name}.{attr}"] = id(value)
    for label, cls in _classes().items():
        for attr, value in list(vars(cls).items()):
            state[f"{label}.{attr}"] = id(value)
    for attr, value in list(vars(builtins).items()):
        state[f"builtins.{attr}"] = id(value)
    return state


def changed(before, after):
    return sorted(k for k, v in before.items() if after.get(k) != v)


def hook_state(config):
    """Which functions implement the hooks that decide and report outcomes."""
    hooks = ("pytest_runtest_makereport", "pytest_runtest_logreport", "pytest_runtest_protocol",
             "pytest_runtest_call", "pytest_pyfunc_call", "pytest_report_teststatus", "pytest_runtestloop",
             "pytest_collection_modifyitems", "pytest_sessionfinish", "pytest_collectreport")
    state = {}
    for hook in hooks:
        caller = getattr(config.hook, hook)
        state[hook] = sorted(id(impl.function) for impl in caller.get_hookimpls())
    state["plugins"] = sorted(id(p) for p in config.pluginmanager.get_plugins())
    return state


class Recorder:
    def __init__(self, channel, preimported):
        self.channel = channel
        self.preimported = preimported
        self.tampered = []
        self.hooks_before = None

    def pytest_sessionstart(self, session):
        self.hooks_before = hook_state(session.config)

    pytest_sessionstart.trylast = True  # after every legitimate plugin has registered

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

    def pytest_sessionfinish(self, session):
        if self.hooks_before is not None and hook_state(session.config) != self.hooks_before:
            self.tampered.append("pytest hook implementations changed during the run")


def _short(text, limit=600):
    text = str(text).strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _tail(text, limit=600):
    """The end of a collection error: the exception line is last, the import chain first."""
    text = str(text).strip()
    return text if len(text) <= limit else "..." + text[-limit:]


WATCHED_PACKAGES = ("numpy", "torch")  # whose assertion helpers the tamper check watches


def preimport(names):
    """Import, before the solution, only the packages whose assertion helpers are watched.
    Never anything else: some packages decide their mode at first import (triton reads
    TRITON_INTERPRET then), and that choice belongs to the hidden tests."""
    done = []
    for name in (n for n in names if n in WATCHED_PACKAGES):
        try:
            __import__(name)
            done.append(name)
        except Exception:
            pass
    if "numpy" in done:
        __import__("numpy.testing")
    if "torch" in done:
        __import__("torch.testing")
    return done


def main(argv):
    solution_dir, tests_dir, ini, record_fd = argv[1:5]
    wanted = [n for n in (argv[5] if len(argv) > 5 else "").split(",") if n]
    channel = Channel(int(record_fd))
    preimported = preimport(wanted)
    import pytest
    import _pytest.main, _pytest.python, _pytest.reports, _pytest.runner, unittest  # noqa: F401
    before = snapshot(preimported)
    channel.emit(event="start", pid=os.getpid())
    sys.path.insert(0, solution_dir)
    recorder = Recorder(channel, preimported)
    args = [tests_dir, "-c", ini, "--rootdir", tests_dir, f"--confcutdir={tests_dir}", "-q", "-p", "no:cacheprovider",
            "-p", "no:randomly", "-p", "no:xdist", "--import-mode=prepend", "-o", "console_output_style=classic"]
    try:
        status = int(pytest.main(args, plugins=[recorder]))
    except BaseException as exc:  # a solution raising SystemExit at collection and the like
        recorder.tampered.append(f"pytest.main did not return normally: {type(exc).__name__}")
        status = 3
    recorder.tampered += [f"replaced: {name}" for name in changed(before, snapshot(preimported))][:20]
    channel.emit(event="end", exitstatus=status, tampered=recorder.tampered)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    _exit(status)


if __name__ == "__main__":
    main(sys.argv)
