"""How hidden tests reach the solution: the task author's API (docs/writing-a-task.md).

Hidden tests run in the *judge*, a process that never imports the solution. The solution
lives in a *worker* process, and this module connects the two:

- `import mymodule` (any module the starter declares) gives a proxy module: calling its
  functions runs them in the worker; data comes back by value (numbers, strings, lists,
  dicts, numpy arrays, torch tensors, exceptions), anything else as a handle whose
  methods and attributes are forwarded. So plain pytest keeps working:
  `from softmax import logsumexp; assert logsumexp(x) == ...`.
- `probe("probe_file.py")` ships trusted code from the hidden tests into the worker, for
  properties that need live objects in the solution's process (autograd graphs, threads,
  processes, database connections, aliasing). A probe returns observations as data; the
  test compares them with its own oracle here. Never put an expected value in a probe.
- `solution_source(name)` is the text of a declared file exactly as the solver left it.
- `observe_call(module, function, *args, **kwargs)` calls one function in the worker and
  brings back, with its result, each argument as the call left it, which arguments the
  result shares memory with and whether it is one of them (a probe the harness ships).
- Objects the test passes to the solution (a fake clock, a fake store, a callback) stay
  here: the worker gets handles, and may only call them and read their public attributes.
  `facade(obj, *methods, call=False)` hands over only what the prompt promises of one.

Comparisons never travel: a handle is equal only to itself, and `in` is decided here.
"""

import importlib.abc
import importlib.machinery
import os
import signal
import sys
import types
from dataclasses import dataclass

from sb.grading import wire as _wire

RemoteError = _wire.RemoteError
WorkerGone = _wire.WorkerGone
Remote = _wire.Remote

__all__ = ["ObservedCall", "Remote", "RemoteError", "WorkerGone", "facade", "is_remote", "observe_call", "probe",
           "reload_solution", "solution_module", "solution_source", "worker_observations"]

_state: dict = {"peer": None, "modules": (), "solution_dir": "", "tests_dir": "", "probes": {}, "observations": 0}


def connect(fd, modules, solution_dir, tests_dir, on_violation):
    """Called once by the judge process, before any test module is imported."""
    peer = _wire.Peer(fd, fd, serves_imports=False, on_violation=on_violation)
    peer.watch_signal_handlers(signal)
    peer.start_reader()
    _state.update(peer=peer, modules=tuple(modules), solution_dir=solution_dir, tests_dir=tests_dir)
    sys.meta_path.insert(0, _SolutionFinder())
    return peer


def _peer():
    if _state["peer"] is None:
        raise RuntimeError("sb.judge is only usable inside a grading (the judge process connects it)")
    return _state["peer"]


class RemoteModule(types.ModuleType):
    """A solution module as the judge sees it: every attribute read asks the worker."""

    def __getattr__(self, name):
        if name.startswith("__") or name.startswith("_pytest") or name == "pytestmark":
            raise AttributeError(name)
        remote = self.__dict__.get("_sb_remote")
        if remote is None:
            raise AttributeError(name)
        return getattr(remote, name)


class _SolutionFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] not in _state["modules"]:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = RemoteModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        module.__dict__["_sb_remote"] = _peer().request("import", name=module.__name__)


def solution_module(name):
    """The proxy of a declared solution module (the same as `import name`)."""
    return importlib.import_module(name)


def probe(filename):
    """The probe module `filename` (a file among the hidden tests), loaded in the worker."""
    if filename not in _state["probes"]:
        with open(os.path.join(_state["tests_dir"], filename), encoding="utf-8") as handle:
            source = handle.read()
        return shipped_probe(filename, source)
    return _state["probes"][filename]


def shipped_probe(key, source):
    """A probe from `source` (trusted code that is not a file of the hidden tests: one the
    harness ships, as sb.solver_tests does), loaded in the worker once per `key`."""
    cache = _state["probes"]
    if key not in cache:
        name = os.path.splitext(os.path.basename(key))[0]
        cache[key] = ProbeModule(_peer().request("probe", name=name, source=source), key)
    return cache[key]


class ProbeModule:
    """A probe as the test sees it. What its functions return is data; a live object in
    the answer (a connection or a model to use next) comes back marked: it may be handed
    back, and its methods and attributes used, but it is never read as an observation
    (its length, items, truth): answered by the solution's process, an observation that
    is a handle could disagree with itself (a length its items do not have)."""

    def __init__(self, remote, filename):
        self._remote, self._filename = remote, filename

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        _observed()
        value = getattr(self._remote, name)
        if not isinstance(value, Remote) or not object.__getattribute__(value, "_sb_callable"):
            return _opaque(value)

        def call(*args, **kwargs):
            _observed()
            return _opaque(value(*args, **kwargs))
        return call


def _observed():
    """Count one use of a probe: whatever comes back was observed in the solution's process."""
    _state["observations"] += 1


def worker_observations():
    """How many times tests have used a probe so far (the judge process attributes them to
    the test, or the collected module, that used them: sb validate's worker-observed list)."""
    return _state["observations"]


def _opaque(value, depth=0):
    if isinstance(value, Remote):
        object.__setattr__(value, "_sb_opaque", True)
    elif depth < 64 and isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _opaque(item, depth + 1)
    elif depth < 64 and isinstance(value, dict):
        for key, item in value.items():
            _opaque(key, depth + 1)
            _opaque(item, depth + 1)
    return value


def solution_source(name):
    """A declared file's text as the solver wrote it (read here, never executed here)."""
    with open(os.path.join(_state["solution_dir"], name), encoding="utf-8", errors="replace") as handle:
        return handle.read()


def reload_solution():
    """Fresh solution modules for the next import (module state reset); probes reload too."""
    _peer().request("reload")
    _state["probes"].clear()
    for name in [n for n in sys.modules if n.split(".")[0] in _state["modules"]]:
        del sys.modules[name]


def is_remote(value):
    """True for a handle to an object living in the solution's process."""
    return isinstance(value, Remote)


@dataclass(frozen=True)
class ObservedCall:
    """One call made in the worker, as its process saw it. Argument labels are positions
    (int) and keyword names (str)."""

    result: object
    args: list              # each positional argument as the call left it
    kwargs: dict            # each keyword argument as the call left it
    shares_memory: list     # labels of the array or tensor arguments the result shares memory with
    returned_argument: object  # the label of an argument the result is (itself, or in a returned tuple), else None


def observe_call(module, function, *args, **kwargs):
    """Call `module.function(*args, **kwargs)` in the worker, on arguments that live there,
    and return an ObservedCall: what only the solution's process can see (an argument
    written to in place, a result that is a view of an input or the input itself). It
    is a probe the harness ships: counted as observed in the worker, and compared with
    the test's own copies here."""
    from importlib import resources
    source = resources.files("sb").joinpath("_call_probe.py").read_text("utf-8")
    found = shipped_probe("_sb_call_probe.py", source).call(module, function, list(args), kwargs)
    return ObservedCall(**found)


class Facade:
    """What the solution is handed of a judge-side object: calling it (when `call`) and the
    methods named; no other public attribute. Its target stays in a private slot, which
    the wire never lets the worker read."""

    __slots__ = ("_target", "_methods", "_call")

    def __init__(self, target, methods, call):
        self._target, self._methods, self._call = target, frozenset(methods), call

    def __call__(self, *args, **kwargs):
        if not self._call:
            raise TypeError("this object is not callable")
        return self._target(*args, **kwargs)

    def __getattr__(self, name):
        if name in self._methods:
            return getattr(self._target, name)
        raise AttributeError(f"{name!r}: this object offers {', '.join(sorted(self._methods)) or 'no method'}")


def facade(target, *methods, call=False):
    """`target` as the solution may see it: through the wire the worker can call every
    public method and read every public attribute of an object the judge hands over, so a
    fake handed over as itself shows the solution the test's controls and records (a
    clock's `advance`, a store's `calls`). Hand it `facade(clock, call=True)` or
    `facade(store, "get", "set")` instead: every call still runs here, on the fake."""
    return Facade(target, methods, call)
