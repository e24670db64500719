"""No text that came from a solution or a server starts a line of its own in any terminal
output: a newline, carriage return, escape sequence or Unicode line separator in a file
name, a failure message or a test id prints as a visible escape (sb.report.terminal.visible).
One test per output path, each with a forged verdict line that must not appear."""

from __future__ import annotations

import subprocess
import sys

from conftest import sb_env
from test_report import entry, make_doc

SB = [sys.executable, "-c", "from sb.cli import main; main()"]
FORGED = "write: pass (98 passed)"
HOSTILE = [f"\n{FORGED}", f"\r{FORGED}", f"\u2028{FORGED}", f"\x1b[1A{FORGED}"]


def sb(*args, env=None):
    return subprocess.run([*SB, *args], capture_output=True, text=True, env=env or sb_env(), timeout=300)


def assert_no_forged_line(text: str) -> None:
    for line in text.splitlines():
        assert not line.lstrip().startswith(FORGED), text
    assert "\x1b" not in text and "\r" not in text and "\u2028" not in text, text


def test_sb_grade_with_a_hostile_file_name_and_failure_message(fixture_env, tmp_path):
    solution = tmp_path / "solution"
    solution.mkdir()
    (solution / "adder.py").write_text(
        "def add(a, b):\n    raise ValueError(" + repr(" ".join(HOSTILE)) + ")\n")
    for i, text in enumerate(HOSTILE):
        (solution / f"notes{i}{text}.txt").write_text("x")
    done = sb("grade", "fixture_add", str(solution), env=fixture_env)
    assert done.returncode == 0, done.stderr
    assert "dropped (not declared by the starter)" in done.stdout and "\\n" + FORGED in done.stdout
    assert_no_forged_line(done.stdout + done.stderr)


def hostile_results(folder, both=True):
    failing = [f"test_x.py::test_a[{text}]" for text in HOSTILE[:3]]
    bad = {**entry("gamma", "failed", failing), "detail": " ".join(HOSTILE)}
    broken = {**entry("delta", "collection_error"), "detail": "\n".join(HOSTILE)}
    make_doc(folder, "fake-a", "ga", 1, [bad, broken, entry("alpha", "passed")])
    if both:
        make_doc(folder, "fake-b", "gb", 1, [entry("gamma", "passed"), entry("alpha", "failed", failing)])
    return folder


def test_the_run_table_of_a_results_file(tmp_path):
    done = sb("report", "--last", "--results", str(hostile_results(tmp_path, both=False)))
    assert done.returncode == 0, done.stderr
    assert "BROKEN delta" in done.stdout
    assert_no_forged_line(done.stdout + done.stderr)


def test_failure_shapes(tmp_path):
    done = sb("report", "--failures", "gamma", "--results", str(hostile_results(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert "test_x.py::test_a[\\n" + FORGED in done.stdout
    assert_no_forged_line(done.stdout + done.stderr)


def test_compare(tmp_path):
    done = sb("compare", "fake-a", "fake-b", "--results", str(hostile_results(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert_no_forged_line(done.stdout + done.stderr)


def test_speed_table_with_a_hostile_served_model_name(capsys):
    from sb.speed.terminal import print_speed
    print_speed({"columns": ["streams", "served as"], "rows": [["1", text] for text in HOSTILE],
                 "lines": [f"model served: {text}" for text in HOSTILE]}, [("results", f"/tmp/x{HOSTILE[0]}.json")])
    out = capsys.readouterr().out
    assert "model served: \\n" + FORGED in out
    assert_no_forged_line(out)


def test_an_error_line_stays_one_line(tmp_path):
    done = sb("grade", "no_such_task\n" + FORGED, str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("sb: error: ")
    assert_no_forged_line(done.stderr)
