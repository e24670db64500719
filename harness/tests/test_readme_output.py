"""The README's sample output is what the command it names prints today: the same lines,
with only times, the wall clock and the results file's name differing."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import sb_env

REPO = Path(__file__).resolve().parents[2]
SB = [sys.executable, "-c", "from sb.cli import main; main()"]
MOVING = [(re.compile(r"\b\d+\.\ds\b"), "T"), (re.compile(r"results: \S+"), "results: FILE"), (re.compile(r" +"), " ")]


def _steady(line: str) -> str:
    for pattern, replacement in MOVING:
        line = pattern.sub(replacement, line)
    return line.rstrip()


def test_the_sample_output_is_what_its_command_prints(tmp_path):
    section = (REPO / "README.md").read_text(encoding="utf-8").split("## Reading the output", 1)[1]
    command = re.search(r"\(`(sb run --model reference[^`]*)`", section.replace("\n", " ")).group(1)
    shown = section.split("```\n", 1)[1].split("```", 1)[0].splitlines()
    argv = shlex.split(command)
    done = subprocess.run([*SB, *argv[1:], "--results", str(tmp_path)], capture_output=True, text=True,
                          env=sb_env(), cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    progress = [line for line in shown if " ... " in line]
    assert sorted(progress) == sorted(line for line in printed if " ... " in line)   # in the order they finish
    assert [_steady(line) for line in shown if " ... " not in line] == \
        [_steady(line) for line in printed if " ... " not in line]
