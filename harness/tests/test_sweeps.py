"""Sweeps that survive: resume after kill -9, repeat as independent draws, --jobs verdicts."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURE_TASK_DIR, sb_env
from test_cli import SB

SLUGS = [f"fixture_add{i}" for i in range(4)]


@pytest.fixture
def many_tasks_env(tmp_path):
    """Four copies of the fixture task, installed as four distributions."""
    site = tmp_path / "site"
    site.mkdir()
    for slug in SLUGS:
        package = site / f"sb_task_{slug}"
        shutil.copytree(FIXTURE_TASK_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
        meta = yaml.safe_load((package / "meta.yaml").read_text())
        (package / "meta.yaml").write_text(yaml.safe_dump({**meta, "slug": slug}))
        dist = site / f"sb_task_{slug}-1.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sb-task-{slug}\nVersion: 1.0\n")
        (dist / "entry_points.txt").write_text(f"[sb]\n{slug} = sb_task_{slug}\n")
    return sb_env(PYTHONPATH=str(site), SB_LOAD_PLUGINS=",".join(SLUGS))


def results_of(folder: Path) -> list:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def test_a_sweep_killed_with_sigkill_resumes_without_losing_a_finished_task(many_tasks_env, tmp_path):
    out = tmp_path / "results"
    argv = [*SB, "run", "--model", "reference", "--results", str(out), "--jobs", "1", "--isolation", "none"]
    proc = subprocess.Popen(argv, env=many_tasks_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    finished_before = []
    while time.monotonic() < deadline:
        docs = [d for d in _readable(out)]
        if docs and 1 <= len(docs[0]["tasks"]) < len(SLUGS):
            finished_before = docs[0]["tasks"]
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert finished_before, "the sweep never persisted a task before it was killed"
    killed = results_of(out)[0]
    assert not killed["complete"] and len(killed["tasks"]) >= len(finished_before)

    again = subprocess.run([*argv, "--resume"], env=many_tasks_env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    (final,) = results_of(out)  # the same file, completed: no second sweep started
    assert final["complete"] and final["resumed"] == 1
    assert [e["slug"] for e in final["tasks"]] == SLUGS
    for entry in killed["tasks"]:  # finished tasks were kept as they were, not solved again
        assert entry in final["tasks"]
    for entry in killed["tasks"]:
        assert f"{entry['slug']} ..." not in again.stdout


def _readable(folder: Path):
    for path in sorted(folder.glob("*.json")):
        try:
            yield json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # never happens with atomic writes; tolerated while polling


def test_repeat_writes_one_file_per_draw_in_one_group(many_tasks_env, tmp_path):
    done = subprocess.run([*SB, "run", "--model", "starter", "--tasks", "fixture_add0", "--repeat", "3",
                           "--results", str(tmp_path), "--isolation", "none"],
                          env=many_tasks_env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    docs = results_of(tmp_path)
    assert sorted(d["draw"] for d in docs) == [1, 2, 3]
    assert len({d["group_id"] for d in docs}) == 1 and len({d["run_id"] for d in docs}) == 3
    assert all(d["complete"] and d["pass_rate"] == 0.0 for d in docs)


def test_jobs_do_not_change_verdicts(many_tasks_env, tmp_path):
    verdicts = {}
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        done = subprocess.run([*SB, "run", "--model", "reference", "--jobs", jobs, "--results", str(out),
                               "--isolation", "none"], env=many_tasks_env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        (doc,) = results_of(out)
        verdicts[jobs] = [(e["slug"], e["status"], e["counts"]["passed"]) for e in doc["tasks"]]
    assert verdicts["1"] == verdicts["2"]


def test_an_answer_killed_while_graded_is_graded_on_resume_never_asked_again(many_tasks_env, tmp_path):
    """SIGKILL while the first task's answer is being graded (its grading held open by the
    answer itself until the test lets it go): the answer was already in the results file,
    so --resume grades it, and the model is asked exactly once per task."""
    out, calls, hold = tmp_path / "results", tmp_path / "calls.log", tmp_path / "hold"
    hold.write_text("held")
    agent = tmp_path / "agent.sh"
    agent.write_text(f'#!/bin/sh\necho "$SB_TASK" >> {calls}\ncat > adder.py <<EOF\nimport os, time\n'
                     f'while os.path.exists("{hold}"):\n    time.sleep(0.05)\n'
                     'def add(a, b):\n    return a + b\nEOF\n')
    agent.chmod(0o755)
    argv = [*SB, "run", "--model", f"cmd:{agent}", "--results", str(out), "--jobs", "1", "--isolation", "none"]
    proc = subprocess.Popen(argv, env=many_tasks_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    # Every answer kept (each grading is held open), so no model call is in flight at the
    # kill: a call still in flight has delivered nothing, and is asked again on resume.
    deadline, kept = time.monotonic() + 300, {}  # four reference gradings come first: slow on a busy machine
    while time.monotonic() < deadline and len(kept) < len(SLUGS):
        docs = list(_readable(out))
        kept = docs[0].get("received", {}) if docs else {}
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and the grading it started
    proc.wait()
    assert len(kept) == len(SLUGS), "the answers were not kept before their gradings finished"
    killed = results_of(out)[0]
    assert not killed["complete"] and killed["tasks"] == []  # nothing graded yet: every answer held
    hold.unlink()
    again = subprocess.run([*argv, "--resume"], env=many_tasks_env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    (final,) = results_of(out)
    assert final["complete"] and "received" not in final
    assert [(e["slug"], e["status"]) for e in final["tasks"]] == [(slug, "passed") for slug in SLUGS]
    asked = calls.read_text().split()
    assert sorted(asked) == SLUGS, asked  # every task asked exactly once, across both processes
