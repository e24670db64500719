"""Reading what a solver left: declared names only, bounded, never through a symlink."""

from __future__ import annotations

import os

from sb.outcome import Outcome, Status
from sb.solver_output import MAX_FILE_BYTES, MAX_LISTED, read_solver_output


def test_declared_files_are_read_and_the_rest_only_listed(tmp_path, monkeypatch):
    (tmp_path / "adder.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "junk.bin").write_bytes(b"\0" * 10)
    opened = []
    real_read = type(tmp_path).read_bytes
    monkeypatch.setattr(type(tmp_path), "read_bytes", lambda self: opened.append(self.name) or real_read(self))
    output = read_solver_output(tmp_path, ["adder.py"])
    assert output.files == {"adder.py": b"x = 1\n"}
    assert output.dropped == ["sub/junk.bin"]
    assert opened == ["adder.py"]  # the junk was never read into memory


def test_a_symlinked_or_oversized_declared_file_is_named_in_the_outcome(tmp_path):
    os.symlink("/etc/passwd", tmp_path / "adder.py")
    (tmp_path / "big.py").write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    (tmp_path / "pipe.py").mkdir()  # a declared name that is a folder, not a file
    output = read_solver_output(tmp_path, ["adder.py", "big.py", "pipe.py/x"])
    assert output.files == {}
    assert output.problems == ["adder.py is a symlink (not followed)",
                               f"big.py is {MAX_FILE_BYTES + 1} bytes, over the {MAX_FILE_BYTES} byte limit"]
    outcome = output.annotate(Outcome("t", Status.SOLUTION_ERROR, detail="No module named 'adder'"))
    assert outcome.detail.startswith("adder.py is a symlink (not followed); big.py is ")
    assert outcome.detail.endswith("No module named 'adder'")


def test_a_flood_of_files_is_listed_up_to_a_bound(tmp_path):
    for n in range(MAX_LISTED + 7):
        (tmp_path / f"f{n:03d}").write_bytes(b"")
    outcome = read_solver_output(tmp_path, []).annotate(Outcome("t", Status.FAILED))
    assert len(outcome.dropped_files) == MAX_LISTED + 1
    assert outcome.dropped_files[-1] == "... and 7 more"
