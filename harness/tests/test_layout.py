"""A grading's folders (sb/grading/layout.py): the modules the judge and the worker import
come with hash-checked bytecode, compiled in the grader's process, which the interpreter
takes while the source beside it is the one it was compiled from, and never for another."""

from __future__ import annotations

import importlib.util
import marshal
import subprocess
import sys

import pytest

from sb.grading import layout
from sb.grading.layout import WORKER_WIRE_PACKAGE, lay_out_judge, lay_out_worker


@pytest.fixture
def compiled():
    layout._compiled.cache_clear()
    yield
    layout._compiled.cache_clear()


def _imported_from(folder, module: str) -> str:
    """`python -B -v`'s word on where `module` came from, imported with `folder` on the path."""
    done = subprocess.run([sys.executable, "-B", "-v", "-c", f"import {module}"], cwd=folder, capture_output=True,
                          text=True, env={"PYTHONPATH": str(folder)})
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_the_worker_imports_the_wire_from_its_bytecode_not_its_source(compiled, tmp_path):
    found = lay_out_worker(tmp_path, {"solution.py": b"x = 1\n"})
    for name in layout.WIRE_FILES:
        pyc = found["wire"] / WORKER_WIRE_PACKAGE / importlib.util.cache_from_source(name)
        source = (found["wire"] / WORKER_WIRE_PACKAGE / name).read_bytes()
        assert pyc.read_bytes()[8:16] == importlib.util.source_hash(source)
    said = _imported_from(found["wire"], WORKER_WIRE_PACKAGE)
    assert f"code object from '{found['wire'] / WORKER_WIRE_PACKAGE / '__pycache__'}" in said


def test_the_judge_imports_its_modules_from_their_bytecode(compiled, fixture_task, tmp_path):
    found = lay_out_judge(tmp_path, fixture_task, {"adder.py": b""})
    said = _imported_from(found["judge"], "sb.judge")
    assert f"code object from '{found['judge'] / 'sb' / '__pycache__' / 'judge.'}" in said


def test_bytecode_whose_source_changed_is_never_used(compiled, tmp_path):
    found = lay_out_worker(tmp_path, {})
    peer = found["wire"] / WORKER_WIRE_PACKAGE / "peer.py"
    peer.write_bytes(peer.read_bytes() + b"\nCHANGED = True\n")  # same folder, same name: another source
    said = _imported_from(found["wire"], f"{WORKER_WIRE_PACKAGE}.peer")
    assert f"# code object from {peer}\n" in said  # compiled from the source, the bytecode passed over


def test_the_bytecode_is_the_compiled_source_and_never_kept_on_disk(compiled, tmp_path, monkeypatch):
    monkeypatch.setenv("SB_CACHE_DIR", str(tmp_path / "cache"))
    source, bytecode = layout._compiled("judge.py")
    assert bytecode[:4] == importlib.util.MAGIC_NUMBER and bytecode[4:8] == (0b11).to_bytes(4, "little")
    assert bytecode[8:16] == importlib.util.source_hash(source)
    assert marshal.loads(bytecode[16:]) == compile(source, "judge.py", "exec", dont_inherit=True, optimize=0)
    assert not (tmp_path / "cache").exists()  # nothing a grading under `none` could rewrite for the next one

    changed = source + b"\nEXTRA = 1\n"  # another version of the file: bytecode of its own
    monkeypatch.setattr(layout, "_source", lambda name: changed)
    layout._compiled.cache_clear()
    other = layout._compiled("judge.py")[1]
    assert other[8:16] == importlib.util.source_hash(changed) and other != bytecode


def test_the_bytecode_keeps_its_asserts_under_an_optimizing_grader(tmp_path):
    """solver_tests.py judges a solver's tests with asserts: the laid-out code must keep them
    even where the grader itself runs with -O."""
    code = ("import dis, marshal, sys\n"
            "from sb.grading import layout\n"
            "source, bytecode = layout._compiled('solver_tests.py')\n"
            "ops = set()\n"
            "def walk(c):\n"
            "    ops.update(i.opname for i in dis.get_instructions(c))\n"
            "    [walk(k) for k in c.co_consts if hasattr(k, 'co_code')]\n"
            "walk(marshal.loads(bytecode[16:]))\n"
            "print(sys.flags.optimize, 'LOAD_ASSERTION_ERROR' in ops)\n")
    done = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "True"]


def test_a_package_imported_from_a_zip_is_read_through_its_loader(compiled, monkeypatch, tmp_path):
    on_disk = layout._source("judge.py")
    monkeypatch.setattr(layout, "PACKAGE", tmp_path / "scratchbench.zip" / "sb")  # not a folder
    assert layout._source("judge.py") == on_disk
    source, bytecode = layout._compiled("judge.py")
    assert source == on_disk and bytecode[8:16] == importlib.util.source_hash(on_disk)
