"""Every command's piped output (`sb ... | cat`) against a golden file.

Piped output is what logs, CI and `| less` see: plain columns, one row per line, nothing
wrapped. Durations, timestamps and results-file names change from run to run, so they are
replaced by placeholders, and column padding (which follows the longest duration) is
compared as two spaces; every cell and every line must match.
Set SB_REGEN_GOLDEN=1 to rewrite the files after an intended change (and read the diff).

Not here: `sb env` (its table is this machine's installation; tests/test_toolchain.py checks
its shape) and `sb speed` (its figures are measurements; tests/test_speed.py checks them).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

SB = [sys.executable, "-c", "from sb.cli import main; main()"]
GOLDEN = Path(__file__).parent / "golden"
VARYING = [
    (re.compile(r"\b\d+(\.\d+)?s\b"), "<s>"),                      # durations: 1.7s
    (re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}"), "<stamp>"),          # results-file stamps
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<date>"),               # the day a run was made
    (re.compile(r"-[0-9a-f]{12}-d(\d+)"), r"-<key>-d\1"),          # the sweep key in a file name
    (re.compile(r"(?<=\S)  +"), "  "),  # a column widens with its longest duration: compare cells, not padding
]


def _normalised(text: str) -> str:
    for pattern, placeholder in VARYING:
        text = pattern.sub(placeholder, text)
    return text


def _piped(args, env, cwd) -> str:
    env = {k: v for k, v in env.items() if k != "COLUMNS"}  # piped: no terminal width
    done = subprocess.run([*SB, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    return f"$ sb {' '.join(args)}\n{done.stdout}{done.stderr}exit {done.returncode}\n"


def _check(name: str, transcript: str) -> None:
    lines = transcript.splitlines()
    assert lines, "no output at all"
    assert all(line == line.rstrip() for line in lines), "trailing blanks in a piped table"
    transcript = _normalised(transcript)
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("SB_REGEN_GOLDEN") == "1":
        path.write_text(transcript)
    assert transcript == path.read_text(), f"piped output of {name} changed; SB_REGEN_GOLDEN=1 rewrites it"


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "work").mkdir()
    return tmp_path / "work"


def test_catalogue_commands(fixture_env, workdir):
    _check("models", _piped(["models"], fixture_env, workdir))
    _check("validate", _piped(["validate", "fixture_add"], fixture_env, workdir))
    _check("mutants", _piped(["mutants", "fixture_add"], fixture_env, workdir))


def test_a_run_its_comparison_and_its_publication(fixture_env, workdir):
    transcript = _piped(["run", "--model", "reference", "--tasks", "fixture_add"], fixture_env, workdir)
    transcript += _piped(["run", "--model", "starter", "--tasks", "fixture_add"], fixture_env, workdir)
    transcript += _piped(["compare", "reference", "starter"], fixture_env, workdir)
    _check("run", transcript)
    published = sorted((workdir / "results").glob("*reference*.json"))
    assert len(published) == 1
    rel = str(published[0].relative_to(workdir))
    transcript = _piped(["publish", rel, "--leaderboard", "lb"], fixture_env, workdir)
    transcript += _piped(["report", "--leaderboard", "lb"], fixture_env, workdir)
    _check("publish", transcript.replace(str(REPO), "<repo>"))


def test_the_committed_leaderboard_report(fixture_env, workdir):
    _check("report", _piped(["report", "--leaderboard", str(REPO / "leaderboard")], fixture_env, workdir)
           .replace(str(REPO), "<repo>"))


def test_export_grade_and_new(fixture_env, workdir):
    transcript = _piped(["export", "fixture_add", "starter"], fixture_env, workdir)
    transcript += _piped(["grade", "fixture_add", "starter"], fixture_env, workdir)
    transcript += _piped(["export", "fixture_add", "ref", "--reference"], fixture_env, workdir)
    transcript += _piped(["grade", "fixture_add", "ref"], fixture_env, workdir)
    transcript += _piped(["new", "my_task", "--dir", "newtasks"], fixture_env, workdir)
    _check("export_grade_new", transcript)


def test_errors_are_one_line(fixture_env, workdir):
    transcript = _piped(["grade", "no_such_task", "."], fixture_env, workdir)
    transcript += _piped(["compare", "reference", "reference"], fixture_env, workdir)
    transcript += _piped(["run", "--model", "reference", "--tasks", "fixture_add", "--repeat", "0"],
                         fixture_env, workdir)
    _check("errors", transcript)
