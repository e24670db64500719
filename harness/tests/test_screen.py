"""A task's screen (meta.yaml `screen:`): shown by `sb list` and `sb report`, never a rate."""

from __future__ import annotations

import json

from test_cli import broken_package, sb


SCREEN = """screen:
  - date: 2026-12-03
    protocol: one-shot, prompt and starter only, no execution
    solves: 4
    passed: 1
    failures:
      - [test_adder.py::test_negative_numbers]
      - [test_adder.py::test_negative_numbers, test_adder.py::test_zero]
      - [test_adder.py::test_zero]
"""


def test_a_recorded_screen_shows_in_list_and_report_and_in_no_rate(tmp_path):
    env = broken_package(tmp_path, lambda p: (p / "meta.yaml").write_text((p / "meta.yaml").read_text() + SCREEN))
    done = sb("list", "--json", env=env)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    assert row["screen"] == [{"date": "2026-12-03", "protocol": "one-shot, prompt and starter only, no execution",
                              "solves": 4, "passed": 1, "failures": [
                                  ["test_adder.py::test_negative_numbers"],
                                  ["test_adder.py::test_negative_numbers", "test_adder.py::test_zero"],
                                  ["test_adder.py::test_zero"]]}]
    assert row["calibration"] == []
    listed = sb("list", env={**env, "COLUMNS": "250"})
    assert "1/4 one-shot" in listed.stdout
    board = tmp_path / "board"
    board.mkdir()
    report = sb("report", "--leaderboard", str(board), env={**env, "COLUMNS": "250"})
    assert report.returncode == 0, report.stderr
    assert "no published results" in report.stdout
    line = next(x for x in report.stdout.splitlines() if x.startswith("fixture_add"))
    assert "2026-12-03" in line and "1/4" in line
    assert line.endswith("test_adder.py::test_negative_numbers x2; test_adder.py::test_zero")  # each test named once
    assert "never calibration, never a rate" in report.stdout
