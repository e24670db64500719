"""Probe: runs the solver's test file with pytest, here in the solution's process, against ONE
implementation of money.

The implementation is not here: `split_amount` and `format_cents` arrive as handles to
callables that live in the judge, so this process never holds an implementation's source,
its name, whether it is a correct one, or how many there are. The solver's tests can only
call the two functions and look at what they return or raise. This file holds no expected
value: it reports pytest's exit code, how many tests passed and failed, and the tail of the
output; the judge decides what those mean, and checks them against its own record of the
calls each implementation received.

A run normally gets a folder of its own, removed after it. A run given a `workspace`
(from `new_workspace`) writes the file into that workspace's folder instead and sees its
temp dir as `tempfile.gettempdir()` and its home as `$HOME`; the workspace outlives the
run, so the judge can run the file again where an earlier run left its traces, as a
user's CI reruns it in one checkout."""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import types

SOLVER_TESTS = "test_money.py"
WORKSPACE_PARTS = ("suite", "tmp", "home")  # the test file's folder, the temp dir, the home
# Built-in plugins a test file never needs; leaving them out nearly halves pytest's cost per run.
UNUSED_PLUGINS = [arg for name in ("cacheprovider", "faulthandler", "doctest", "junitxml", "pastebin", "stepwise",
                                   "setupplan", "setuponly", "debugging", "unraisableexception", "threadexception",
                                   "python_path") for arg in ("-p", f"no:{name}")]


class _Counter:
    """pytest plugin: test items whose call phase passed, and any phase that failed."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.passed += 1
        if report.failed:
            self.failed += 1


def new_workspace():
    """A fresh folder for a sequence of runs: the test file's folder, a temp dir and a home."""
    root = tempfile.mkdtemp(prefix="workspace_")
    for part in WORKSPACE_PARTS:
        os.mkdir(os.path.join(root, part))
    return root


def remove_workspace(root):
    shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def _environment(workspace):
    """The run's folder, with the workspace's temp dir and home in place while it runs."""
    if workspace is None:
        folder = tempfile.mkdtemp(prefix="suite_")
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    folder, temp, home = (os.path.join(workspace, part) for part in WORKSPACE_PARTS)
    saved_env, saved_tempdir = {name: os.environ.get(name) for name in ("TMPDIR", "HOME")}, tempfile.tempdir
    os.environ.update(TMPDIR=temp, HOME=home)
    tempfile.tempdir = None  # gettempdir() caches its answer; make it read TMPDIR again
    try:
        yield folder
    finally:
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        tempfile.tempdir = saved_tempdir


def run(test_source, split_amount, format_cents, workspace=None):
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest

    with _environment(workspace) as folder:
        path = os.path.join(folder, SOLVER_TESTS)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(test_source)
        money = types.ModuleType("money")
        money.split_amount = split_amount
        money.format_cents = format_cents
        saved_path, saved_modules, saved_cwd = list(sys.path), set(sys.modules), os.getcwd()
        for name in ("money", "test_money"):
            sys.modules.pop(name, None)
        sys.modules["money"] = money
        counter, buffer = _Counter(), io.StringIO()
        try:
            os.chdir(folder)
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                code = pytest.main(["-q", *UNUSED_PLUGINS, "--rootdir", folder, "-c", os.devnull, path],
                                   plugins=[counter])
        finally:
            os.chdir(saved_cwd)
            sys.path[:] = saved_path
            for name in set(sys.modules) - saved_modules | {"money", "test_money"}:
                module = sys.modules.get(name)
                if name in ("money", "test_money") or (getattr(module, "__file__", None) or "").startswith(folder):
                    sys.modules.pop(name, None)
    return {"code": int(code), "passed": counter.passed, "failed": counter.failed,
            "output": buffer.getvalue()[-3000:]}
