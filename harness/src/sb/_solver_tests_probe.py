"""Probe (worker side of sb.solver_tests): runs the solver's test file with pytest, in the
solution's process, against ONE implementation the judge holds.

The implementation is not here. This process receives one handle, `call`, that runs a named
function of it in the judge on copies of the arguments and answers (result, changed): the
result, and the array arguments the function wrote to, with their new contents. The module
the tests import is built here from forwarders that are the same for every implementation;
each writes those new contents back into the caller's own arrays, so a test that looks at
its arrays after a call sees what an implementation writing to its inputs in this process
would have left there. This file holds no expected value: it reports pytest's exit code,
how many tests passed and failed, and the tail of the output.

A run normally gets a folder of its own, removed after it. A run given a `workspace` (from
`new_workspace`) writes the file into that workspace's folder instead and sees its temp dir
as `tempfile.gettempdir()` and its home as `$HOME`; the workspace outlives the run, so the
judge can run the file again where an earlier run left its traces.
"""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import types

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


def _forwarder(call, name):
    def forward(*args, **kwargs):
        result, changed = call(name, args, kwargs)
        for where, value in changed:
            _write_back(args[where] if isinstance(where, int) else kwargs[where], value)
        return result
    forward.__name__ = forward.__qualname__ = name
    return forward


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


def run(test_source, test_file, module_name, function_names, call, workspace=None):
    """pytest over `test_source` (saved as `test_file`), importing `module_name` as forwarders
    of `function_names` to `call`: {"code", "passed", "failed", "output"}."""
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest

    own_modules = (module_name, os.path.splitext(test_file)[0])
    with _environment(workspace) as folder:
        path = os.path.join(folder, test_file)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(test_source)
        module = types.ModuleType(module_name)
        for name in function_names:
            setattr(module, name, _forwarder(call, name))
        saved_path, saved_modules, saved_cwd = list(sys.path), set(sys.modules), os.getcwd()
        for name in own_modules:
            sys.modules.pop(name, None)
        sys.modules[module_name] = module
        counter, buffer = _Counter(), io.StringIO()
        try:
            os.chdir(folder)
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                code = pytest.main(["-q", *UNUSED_PLUGINS, "--rootdir", folder, "-c", os.devnull, path],
                                   plugins=[counter])
        finally:
            os.chdir(saved_cwd)
            sys.path[:] = saved_path
            for name in set(sys.modules) - saved_modules | set(own_modules):
                loaded = sys.modules.get(name)
                if name in own_modules or (getattr(loaded, "__file__", None) or "").startswith(folder):
                    sys.modules.pop(name, None)
    return {"code": int(code), "passed": counter.passed, "failed": counter.failed,
            "output": buffer.getvalue()[-3000:]}
