"""Tables fit the terminal they are printed in: `sb list`, `sb report` and `sb speed` run in a
real pseudo-terminal 80 columns wide print one line per row, never cut the key column, and
name what they left out; piped, every column shows, whole."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

from sb.report.terminal import fit_columns
from sb.speed.scripted import scripted_server

from conftest import sb_env

SB = [sys.executable, "-c", "from sb.cli import main; main()"]
REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def in_pty(argv: list, columns: int = 80) -> list:
    """The lines `argv` prints to a pseudo-terminal `columns` wide (styles removed)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = sb_env(COLUMNS=str(columns))
    process = subprocess.Popen(argv, stdin=follower, stdout=follower, stderr=follower, env=env, cwd=REPO)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=120) == 0, b"".join(chunks).decode(errors="replace")
    text = ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")
    return text.rstrip("\n").split("\n")


def piped(argv: list) -> list:
    done = subprocess.run(argv, capture_output=True, text=True, env=sb_env(), cwd=REPO)
    assert done.returncode == 0, done.stderr
    return done.stdout.rstrip("\n").split("\n")


def test_sb_list_in_80_columns_is_one_line_per_task_with_every_slug_whole():
    lines = in_pty([*SB, "list"])
    slugs = [line.split()[0] for line in piped([*SB, "list"])[1:-1]]
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert lines[-1] == f"{len(slugs)} task(s)"
    assert lines[-2].startswith("(left out to fit 80 columns: ") and "probes" in lines[-2]
    assert [line.split()[0] for line in lines[1:-2]] == slugs   # one line per task, its slug whole
    assert lines[0].split()[:1] == ["slug"] and "set" in lines[0].split() and "screen" in lines[0].split()


def test_sb_list_piped_keeps_every_column_whole():
    lines = piped([*SB, "list"])
    assert lines[0].split() == ["slug", "suite", "category", "tier", "diff", "limit", "deps", "set", "calibration",
                                "screen", "probes"]
    assert not any("\u2026" in line for line in lines) and not any(line != line.rstrip() for line in lines)


def test_sb_report_in_80_columns_is_one_line_per_row():
    lines = in_pty([*SB, "report", "--leaderboard", "leaderboard"])
    plain = piped([*SB, "report", "--leaderboard", "leaderboard"])
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    models = [line.split()[0] for line in plain if line.startswith(("reference ", "starter "))]
    assert [line.split()[0] for line in lines if line.startswith(("reference ", "starter "))] == models
    assert len(models) == 2


def test_sb_speed_table_in_80_columns_is_one_line_per_level(tmp_path):
    with scripted_server(ttft_ms=5, itl_ms=1) as server:
        lines = in_pty([*SB, "speed", "--base-url", server.base_url, "--model", "m", "--concurrency", "1,2",
                        "--requests-per-level", "2", "--results", str(tmp_path)])
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    header = next(i for i, line in enumerate(lines) if line.startswith("streams"))
    assert [line.split()[0] for line in lines[header + 1:header + 3]] == ["1", "2"]


def test_fitting_cuts_the_widest_column_first_and_leaves_out_in_the_order_given():
    columns = [["slug", "a_long_slug_name"], ["x", "1"], ["notes", "n" * 60], ["y", "yy"]]
    shown, widths = fit_columns(columns, 40, [2, 3, 1])
    assert shown == [0, 1, 2, 3] and widths[0] == 16 and sum(widths) + 6 == 40
    assert widths[2] == 40 - 6 - 16 - 1 - 2                 # only the widest column was cut
    shown, widths = fit_columns(columns, 24, [2, 3, 1])
    assert shown == [0, 1, 3]                                  # 'notes' went first, though not rightmost
    shown, widths = fit_columns(columns, 10, [2, 3, 1])
    assert shown == [0] and widths[0] == 16                    # the key column is never cut
