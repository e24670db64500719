"""What a terminal shows. Tables fit it: `sb list`, `sb report` and `sb speed` run in a real
pseudo-terminal 80 columns wide print one line per row, never cut the key column, and name
what they left out; piped, every column shows, whole. A sweep shows its progress there: the
tasks in flight, done of total, an estimate of the time left, tokens; piped, result lines only."""

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
    text = ANSI.sub("", raw_pty(argv, columns)).replace("\r\n", "\n")
    return text.rstrip("\n").split("\n")


def raw_pty(argv: list, columns: int = 80) -> str:
    """Everything `argv` writes to a pseudo-terminal `columns` wide, as written."""
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
    return b"".join(chunks).decode()


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


def test_a_sweep_on_a_terminal_shows_what_is_in_flight_and_the_time_left(tmp_path):
    argv = [*SB, "run", "--model", "reference", "--tasks", "csv,regex", "--jobs", "1", "--results", str(tmp_path)]
    raw = raw_pty(argv, 100)
    # every status drawn: by the tick, or right under a result line when a task finishes
    statuses = [line.split("\r")[0] for part in raw.split("\x1b[2K") for line in part.split("\n")
                if " done \u00b7 " in line]
    assert any("in flight: " in s and ("csv" in s or "regex" in s) for s in statuses), statuses
    assert any(s.startswith("1/2 done") and " left" in s and "tokens" in s for s in statuses), statuses
    assert "csv ... pass" in raw and "regex ... pass" in raw
    plain = piped(argv)
    assert not any("in flight" in line for line in plain) and "csv ... pass" in "\n".join(plain)


def test_the_status_line_adds_up_every_draw_tokens_and_cost():
    from sb.report.terminal import LiveProgress

    class Quiet:
        is_terminal, width = False, 80

    progress = LiveProgress(Quiet(), total=4)
    clock = iter([100.0, 130.0])
    progress.started, progress.clock = 100.0, lambda: next(clock)
    first = {"tokens": {"input": 1000, "output": 200, "cache_read": 5}, "usd_cost": 0.5}
    second = {"tokens": {"input": 10, "output": 1}, "usd_cost": 0.25}
    progress.phase(second, "regex", "grading")
    assert progress.status().startswith("0/4 done \u00b7 1 in flight: regex grading \u00b7 0s \u00b7 estimating")
    progress.docs[id(first)] = first
    progress.done = 1
    status = progress.status()                   # 30 s for one task: three more take about 90 s
    assert "~1m30s left" in status and "1,211 tokens" in status and "$0.7500" in status


def test_the_run_table_carries_tokens_when_a_model_used_some(capsys):
    from sb.report.terminal import print_run_table
    entry = {"slug": "csv", "category": "parsing", "tier": "laptop", "difficulty": "medium", "status": "passed",
             "duration_s": 1.0, "counts": {"passed": 3}, "tokens": {"input": 1200, "output": 34}}
    doc = {"tasks": [entry], "pass_rate_by_tier": {}, "headline_tier": "laptop", "wall_clock_s": 2.0, "attempts": 1,
           "isolation": "bwrap", "tokens": {"input": 1200, "output": 34}, "usd_cost": None, "adapter": "cmd"}
    print_run_table(doc)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-1] == "tokens" and lines[1].split()[-1] == "1,234"
    assert "1 attempt per task · 1,234 tokens · unpriced" in lines[-1]
