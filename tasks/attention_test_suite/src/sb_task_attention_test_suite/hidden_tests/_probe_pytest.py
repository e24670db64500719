"""Probe: runs the solver's test file with pytest, here in the solution's process, against ONE
implementation of attention.

The implementation is not here: it lives in the judge, and this process receives one handle,
`call`, that runs it there on copies of the arguments and answers (result, changed): the
result, and the arguments the implementation wrote to, with their new contents. The
`attention` function below is the same for every implementation: it forwards the call and
writes those new contents back into the caller's own arrays, so a test that looks at its
arrays after a call sees exactly what an implementation writing to its inputs in this
process would have left there. This file holds no expected value: it reports pytest's exit
code, how many tests passed and failed, and the tail of the output; the judge decides what
those mean, and checks them against its own record of the calls each implementation got.

A run normally gets a folder of its own, removed after it. A run given a `workspace`
(from `new_workspace`) writes the file into that workspace's folder instead and sees its
temp dir as `tempfile.gettempdir()` and its home as `$HOME`; the workspace outlives the
run, so the judge can run the file again where an earlier run left its traces."""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import types

SOLVER_TESTS = "test_attention.py"
MODULES = ("attention", "test_attention")
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


def _write_back(target, value):
    """Give the caller's array the contents the implementation left in its copy."""
    try:
        if type(target).__module__.startswith("torch"):
            import torch
            with torch.no_grad():
                target.copy_(value)
        else:
            import numpy
            numpy.copyto(target, value)
    except Exception:  # noqa: BLE001 - an array the caller made read-only keeps its contents
        pass


def _attention(call):
    def attention(*args, **kwargs):
        result, changed = call(args, kwargs)
        for where, value in changed:
            _write_back(args[where] if isinstance(where, int) else kwargs[where], value)
        return result
    return attention


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


def run(test_source, call, workspace=None):
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest

    with _environment(workspace) as folder:
        path = os.path.join(folder, SOLVER_TESTS)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(test_source)
        module = types.ModuleType("attention")
        module.attention = _attention(call)
        saved_path, saved_modules, saved_cwd = list(sys.path), set(sys.modules), os.getcwd()
        for name in MODULES:
            sys.modules.pop(name, None)
        sys.modules["attention"] = module
        counter, buffer = _Counter(), io.StringIO()
        try:
            os.chdir(folder)
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                code = pytest.main(["-q", *UNUSED_PLUGINS, "--rootdir", folder, "-c", os.devnull, path],
                                   plugins=[counter])
        finally:
            os.chdir(saved_cwd)
            sys.path[:] = saved_path
            for name in set(sys.modules) - saved_modules | set(MODULES):
                loaded = sys.modules.get(name)
                if name in MODULES or (getattr(loaded, "__file__", None) or "").startswith(folder):
                    sys.modules.pop(name, None)
    return {"code": int(code), "passed": counter.passed, "failed": counter.failed,
            "output": buffer.getvalue()[-3000:]}
