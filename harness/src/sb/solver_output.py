"""What a solver left in its working folder, read without trusting it.

Only the starter's declared names are read, each at most MAX_FILE_BYTES and never through a
symlink (a solver must not make the harness read something outside its folder, or a huge
file into memory). Everything else is listed by name, never opened: junk costs a directory
walk, not memory. A declared file that could not be taken is said in the outcome, so a
grade that fails for it reads as what happened rather than as "No module named ...".
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from sb.task import SKIPPED_NAMES, FileSet

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_LISTED = 50  # dropped names recorded; the rest are counted


@dataclass
class SolverOutput:
    files: FileSet = field(default_factory=dict)
    dropped: list = field(default_factory=list)
    problems: list = field(default_factory=list)

    def annotate(self, outcome):
        """The outcome with the dropped names and the declared files that could not be taken."""
        listed = sorted(set(outcome.dropped_files) | set(self.dropped))
        if len(listed) > MAX_LISTED:
            listed = listed[:MAX_LISTED] + [f"... and {len(listed) - MAX_LISTED} more"]
        outcome.dropped_files = listed
        if self.problems:
            note = "; ".join(self.problems)
            outcome.detail = f"{note}; {outcome.detail}" if outcome.detail else note
        return outcome


def read_solver_output(folder, declared) -> SolverOutput:
    root, declared = Path(folder), set(declared)
    output = SolverOutput()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_NAMES)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            relative = path.relative_to(root).as_posix()
            if relative in declared:
                _take(path, relative, output)
            else:
                output.dropped.append(relative)
    return output


def _take(path: Path, relative: str, output: SolverOutput) -> None:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        output.problems.append(f"{relative} is a symlink (not followed)")
    elif not stat.S_ISREG(info.st_mode):
        output.problems.append(f"{relative} is not a regular file")
    elif info.st_size > MAX_FILE_BYTES:
        output.problems.append(f"{relative} is {info.st_size} bytes, over the {MAX_FILE_BYTES} byte limit")
    else:
        output.files[relative] = path.read_bytes()
