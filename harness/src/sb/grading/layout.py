"""The files of one grading: what each process sees, and where.

A grading's folder holds two sides. The worker's: the solution, the wire and the worker
program, and its scratch. The judge's: the judge program and the modules the hidden tests
import as `sb` (the author's API, the wire, the authors' standalone helpers), the hidden
tests, a copy of the solution (read for source checks, never imported) and its scratch.
Both programs are standalone, so neither sandbox needs the installed `sb`.
"""

from __future__ import annotations

import importlib.util
import marshal
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing's, without importing typing: sb grade's head start imports this (sb/entry.py)
if TYPE_CHECKING:  # annotations only: a warm judge's program is read without the task model's imports
    from sb.task import FileSet, Task

PY_FLAGS = ("-s", "-B", "-P")
JUDGE_HELPERS = ("source_checks.py", "sqlite_facade.py", "solver_tests.py",  # task authors' tools (standalone),
                 "_solver_tests_probe.py", "_call_probe.py", "mutant_patch.py")  # laid beside sb.judge
WIRE_FILES = ("__init__.py", "protocol.py", "framing.py", "values.py", "proxies.py", "reading.py", "peer.py")
# The worker imports the wire under a name no solution module can take, then forgets it.
WORKER_WIRE_PACKAGE = "_wire"
GRADER_FILES = ("grading/__init__.py", "grading/pipeline.py", "grading/layout.py", "grading/verdict.py",
                "grading/judge_process.py", "grading/worker_process.py", "grading/warm.py",
                *(f"grading/wire/{name}" for name in WIRE_FILES),
                "judge.py", *JUDGE_HELPERS,
                "sandbox/base.py", "sandbox/process.py", "sandbox/bwrap.py", "sandbox/view.py")


@lru_cache(maxsize=1)
def grader_hash() -> str:
    """A hash of the code that decides a verdict: this package, what it lays out beside the
    tests and the solution, and the sandbox. The toolchain fingerprint leaves the harness
    out, so this is what tells a Ray worker running another grader from the driver's, and
    what keys the reference's cached ids to the grader that produced them."""
    import hashlib
    digest = hashlib.sha256(b"sb-grader-v1\0")
    for name in GRADER_FILES:
        digest.update(f"{name}:".encode() + hashlib.sha256(_source(name)).digest())
    return digest.hexdigest()[:16]


def solution_modules(task: Task) -> list:
    """Top-level module names the starter declares: the judge serves these from the worker."""
    names = set()
    for name in task.starter_files:
        first = name.split("/")[0]
        if "/" in name:
            names.add(first)
        elif first.endswith(".py"):
            names.add(first[:-3])
    return sorted(n for n in names if n.isidentifier())


def task_folder(task: Task) -> tuple:
    """The graded task's own package folder, hidden even when it is not an installed package."""
    folder = Path(str(task.root))
    return (folder,) if folder.is_dir() else ()


def _pytest_ini(first_failure: bool) -> bytes:
    """The judge's pytest configuration, written by the grader where the solution cannot reach."""
    return b"[pytest]\naddopts = --maxfail=1\n" if first_failure else b"[pytest]\n"


PACKAGE = Path(__file__).resolve().parent.parent  # the installed `sb`: a folder, unless it is imported from a zip


def _source(name: str) -> bytes:
    if PACKAGE.is_dir():
        return (PACKAGE / name).read_bytes()
    from importlib import resources  # a zip: read through its loader (an import the head start never pays)
    return resources.files("sb").joinpath(name).read_bytes()


def judge_program() -> bytes:
    return _source("grading/judge_process.py")


def _wire(folder: str) -> dict:
    return _modules(folder, {name: f"grading/wire/{name}" for name in WIRE_FILES})


def _modules(folder: str, names: dict) -> dict:
    """Modules of this package laid out in `folder` as `names` says (name there -> name
    here), each with its compiled form where the interpreter looks for it. The judge and
    the worker import them fresh in every grading, from a new folder and without writing
    bytecode (-B): compiling them there took a few hundredths of a second of each grading."""
    files = {}
    for there, here in names.items():
        source, bytecode = _compiled(here)
        files[f"{folder}/{there}"] = source
        files[f"{folder}/{importlib.util.cache_from_source(there)}"] = bytecode
    return files


@lru_cache(maxsize=None)
def _compiled(name: str) -> tuple:
    """(source, a hash-checked .pyc of it: PEP 552), compiled once per process. The child
    uses the .pyc only while the source beside it has exactly the bytes it records,
    whatever the file times say. Never kept on disk: a folder this user can write is one a
    grading under `--isolation none` can write, and the judge would run what it found."""
    source = _source(name)
    header = importlib.util.MAGIC_NUMBER + (0b11).to_bytes(4, "little") + importlib.util.source_hash(source)
    return source, header + marshal.dumps(compile(source, name, "exec", dont_inherit=True, optimize=0))


def lay_out_worker(root: Path, solution: FileSet) -> dict:
    """The worker's side: the solution, the wire and its scratch."""
    layout = {name: root / name for name in ("solution", "wire", "wscratch")}
    _make(layout, "wscratch")
    write_files(layout["solution"], solution)
    write_files(layout["wire"], {**_wire(WORKER_WIRE_PACKAGE),
                                 "worker_process.py": _source("grading/worker_process.py")})
    return layout


def lay_out_judge(root: Path, task: Task, solution: FileSet, first_failure: bool = False) -> dict:
    """The judge's side: the judge program and its modules, the hidden tests, a copy of the
    solution (for source checks, read, never imported) and its scratch."""
    layout = {name: root / name for name in ("solution_copy", "hidden_tests", "judge", "jscratch")}
    _make(layout, "jscratch")
    write_files(layout["solution_copy"], solution)
    write_files(layout["hidden_tests"], task.hidden_test_files)
    write_files(layout["judge"], {"judge_process.py": judge_program(), "pytest.ini": _pytest_ini(first_failure),
                                  "sb/__init__.py": b"", "sb/grading/__init__.py": b"", **_wire("sb/grading/wire"),
                                  **_modules("sb", {name: name for name in ("judge.py", *JUDGE_HELPERS)})})
    return layout


def _make(layout: dict, scratch: str) -> None:
    for path in layout.values():
        path.mkdir()
    (layout[scratch] / "home").mkdir()
    (layout[scratch] / "tmp").mkdir()


def write_files(folder: Path, files: FileSet) -> None:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
