"""Reports over draws: statistics, --variance, --failures, compare, the leaderboard; CLI contracts.

The documents here are synthetic fixtures written by `make_doc` (models named fake-*), built
to exercise every branch (splits, no-evidence draws, ties); they are never published. The
published numbers come from real control runs in leaderboard/ (test_leaderboard.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import sb_env
from sb import results
from sb.report import stats
from sb.report.compare import compare
from sb.report.draws import load_dir, tally_tasks
from sb.report.failures import failure_shape
from sb.report.leaderboard import leaderboard
from sb.report.variance import variance

SB = [sys.executable, "-c", "from sb.cli import main; main()"]


def sb(*args, cwd=None):
    return subprocess.run([*SB, *args], capture_output=True, text=True, env=sb_env(), cwd=cwd, timeout=300)


def entry(slug: str, status: str, failed=(), tier: str = "laptop", usd=None, tokens=None) -> dict:
    """A task entry shaped like run.task_entry's, for a synthetic draw."""
    from sb.outcome import is_evidence
    return {"slug": slug, "version": 1, "suite": "ml", "category": "numerics", "tier": tier,
            "difficulty": "medium", "status": status, "passed": status == "passed", "evidence": is_evidence(status),
            "duration_s": 1.0, "counts": {"passed": 3 - len(failed), "failed": len(failed), "skipped": 0, "missing": 0},
            "failed_tests": list(failed), "detail": "", "isolation": "none", "dropped_files": [],
            "tokens": tokens, "usd_cost": usd, "model_answered": None, "transport_retries": 0}


def make_doc(folder: Path, model: str, group: str, draw: int, entries: list, draws: int = 1,
             task_set: str = "custom", run_at: str = "2026-01-02T03:04:05+00:00", adapter: str = "fake",
             complete: bool = True) -> Path:
    doc = {"schema_version": 1, "run_id": f"{group}-d{draw}", "group_id": group, "sweep_key": "k" * 12,
           "draw": draw, "draws": draws, "model": model, "adapter": adapter, "run_at": run_at,
           "harness_version": "0.1.0", "task_set": task_set, "tasks_requested": [e["slug"] for e in entries],
           "headline_tier": "laptop", "attempts": 1, "settings": {}, "base_url": None, "isolation": "none",
           "environment": {}, "wall_clock_s": 1.0, "complete": complete, "resumed": 0, "tasks": entries}
    path = Path(folder) / f"{group}-{model}-{'k' * 12}-d{draw}.json"
    results.write_atomic(path, results.summarise(doc))
    return path


@pytest.fixture
def draws(tmp_path) -> Path:
    """fake-a: 3 draws (alpha always, beta split 2/3, gamma never, delta unmeasured once);
    fake-b: 3 draws (alpha always, beta never, gamma never, delta never measured)."""
    shapes = [("passed", "passed", ("failed", ["t::a", "t::b"]), "passed"),
              ("passed", ("failed", ["t::x"]), ("failed", ["t::a", "t::b"]), "missing_deps"),
              ("passed", "passed", ("timeout", []), "passed")]
    for draw, shape in enumerate(shapes, 1):
        make_doc(tmp_path, "fake-a", "ga", draw,
                 [_entry(s, x) for s, x in zip("alpha beta gamma delta".split(), shape)],
                 draws=3, run_at=f"2026-01-0{draw}T00:00:00+00:00")
        make_doc(tmp_path, "fake-b", "gb", draw,
                 [entry("alpha", "passed"), entry("beta", "failed", ["t::y"]), entry("gamma", "failed", ["t::a"]),
                  entry("delta", "needs_accelerator")], draws=3, run_at=f"2026-02-0{draw}T00:00:00+00:00")
    return tmp_path


def _entry(slug, shape):
    return entry(slug, shape) if isinstance(shape, str) else entry(slug, shape[0], shape[1])


def test_wilson_interval_matches_known_values():
    low, high = stats.wilson(5, 5)
    assert (round(low, 4), high) == (0.5655, 1.0)
    low, high = stats.wilson(0, 10)
    assert (low, round(high, 4)) == (0.0, 0.2775)
    low, high = stats.wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert stats.wilson(0, 0) is None


def test_sign_test_is_exact_and_two_sided():
    assert stats.sign_test(0, 0) == 1.0
    assert stats.sign_test(5, 0) == pytest.approx(2 / 32)
    assert stats.sign_test(6, 0) == pytest.approx(2 / 64)
    assert stats.sign_test(3, 3) == 1.0
    assert stats.sign_test(1, 9) == stats.sign_test(9, 1) == pytest.approx(2 * 11 / 1024)
    assert stats.fewest_for_significance(0.05) == 6


def test_classify_across_draws():
    assert [stats.classify(k, n) for k, n in ((3, 3), (0, 3), (1, 3), (0, 0))] == [
        "always", "never", "split", "not measured"]


def test_tally_counts_evidence_only(draws):
    tallies = tally_tasks([d for d in load_dir(draws) if d["model"] == "fake-a"])
    assert {s: (t.passed, t.measured, t.reason) for s, t in tallies.items()} == {
        "alpha": (3, 3, ""), "beta": (2, 3, ""), "gamma": (0, 3, ""), "delta": (2, 2, "1 missing_deps")}


def test_variance_per_task_and_set_spread(draws):
    block_a, block_b = variance(load_dir(draws))
    assert [(t["slug"], t["verdict"]) for t in block_a["tasks"]] == [
        ("alpha", "always"), ("beta", "split"), ("gamma", "never"), ("delta", "always")]
    laptop = block_a["tiers"]["laptop"]
    assert (laptop["passed"], laptop["measured"], laptop["unmeasured"]) == (7, 11, 1)
    assert (laptop["low"], laptop["high"]) == (1 / 3, 3 / 4)
    assert laptop["ci"] == stats.wilson(7, 11)
    assert [t["verdict"] for t in block_b["tasks"]][-1] == "not measured"


def test_failure_shape_groups_identical_signatures(draws):
    block_a = failure_shape(load_dir(draws), "gamma")[0]
    assert block_a["failing_tests"] == [{"test": "t::a", "draws": 2}, {"test": "t::b", "draws": 2}]
    assert block_a["signatures"] == [{"status": "failed", "failed_tests": ["t::a", "t::b"], "draws": 2},
                                     {"status": "timeout", "failed_tests": [], "draws": 1}]


def test_compare_counts_tasks_not_draws_and_says_when_not_distinguishable(draws):
    data = compare(load_dir(draws), "fake-a", "fake-b")
    winners = {r["slug"]: r["winner"] for r in data["tasks"]}
    assert winners == {"alpha": "tie", "beta": "a", "gamma": "tie", "delta": None}
    assert (data["wins_a"], data["wins_b"], data["distinguishable"]) == (1, 0, False)
    assert data["verdict"].startswith("not distinguishable at 5%")
    assert data["not_measured"] == ["delta"]


def test_compare_distinguishable_with_enough_discordant_tasks(tmp_path):
    slugs = [f"task{i}" for i in range(7)]
    make_doc(tmp_path, "fake-a", "ga", 1, [entry(s, "passed") for s in slugs])
    make_doc(tmp_path, "fake-b", "gb", 1, [entry(s, "failed", ["t::z"]) for s in slugs])
    data = compare(load_dir(tmp_path), "fake-a", "fake-b")
    assert data["distinguishable"] and data["p_value"] == pytest.approx(2 / 128)
    assert data["verdict"].startswith("fake-a is better")


def test_compare_keeps_task_versions_apart(tmp_path):
    make_doc(tmp_path, "fake-a", "ga", 1, [entry("alpha", "passed"), entry("beta", "passed")])
    newer = entry("alpha", "failed", ["t::a"])
    newer["version"] = 2
    make_doc(tmp_path, "fake-b", "gb", 1, [newer, entry("beta", "failed", ["t::b"])])
    data = compare(load_dir(tmp_path), "fake-a", "fake-b")
    assert [r["slug"] for r in data["tasks"]] == ["beta"]


def test_leaderboard_groups_draws_newest_first_and_never_prints_zero_for_no_evidence(tmp_path):
    make_doc(tmp_path, "fake-old", "g1", 1, [entry("alpha", "passed")], run_at="2026-01-01T00:00:00+00:00")
    for draw in (1, 2):
        make_doc(tmp_path, "fake-new", "g2", draw, [entry("alpha", "needs_accelerator", tier="laptop")], draws=2,
                 run_at="2026-03-01T00:00:00+00:00")
    rows = leaderboard(tmp_path)
    assert [(r["model"], r["draws"]) for r in rows] == [("fake-new", 2), ("fake-old", 1)]
    assert rows[0]["headline"]["rate"] is None and rows[0]["headline"]["reason"] == "2 needs_accelerator"
    assert rows[1]["cost"]["note"] == "no cost (no tokens used)"


@pytest.mark.parametrize("adapter, note", [("reference", "no cost (control run)"), ("starter", "no cost (control run)"),
                                           ("cmd", "no cost (no tokens used)")])
def test_a_sweep_without_tokens_is_a_control_run_only_for_the_controls(tmp_path, adapter, note):
    """The leaderboard says what `sb run` said of the draw: a `cmd:` agent is no control run."""
    make_doc(tmp_path, adapter, "g", 1, [entry("alpha", "passed")], adapter=adapter)
    (row,) = leaderboard(tmp_path)
    assert row["cost"]["note"] == note


def test_cost_per_solved_task(tmp_path):
    tokens = {"input": 10, "output": 5}
    make_doc(tmp_path, "fake-a", "g", 1, [entry("alpha", "passed", usd=0.25, tokens=tokens),
                                          entry("beta", "failed", ["t::q"], usd=0.75, tokens=tokens)])
    (row,) = leaderboard(tmp_path)
    assert row["cost"] == {"usd": 1.0, "per_solved": 1.0, "note": ""}


# ---- the CLI: whole outputs with NO_COLOR and COLUMNS fixed ----------------------------------------

def test_cli_variance_output(draws):
    done = sb("report", "--variance", "--results", str(draws), "--model", "fake-b")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "fake-b · set custom · 3 draw(s)",
        "task   tier    passed                              across draws",
        "alpha  laptop  3/3                                 always",
        "beta   laptop  0/3                                 never",
        "gamma  laptop  0/3                                 never",
        "delta  laptop  not measured (3 needs_accelerator)  not measured",
        "1 always · 2 never · 1 not measured",
        "laptop 33% (3/9) · draws 33%–33% · 95% CI 12%–65% · 3 not measured (3 needs_accelerator) · headline",
        ""]


def test_cli_failures_output(draws):
    done = sb("report", "--failures", "gamma", "--results", str(draws), "--model", "fake-a")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "gamma · fake-a · 0/3 measured draws passed",
        "  2/3  t::a",
        "  2/3  t::b",
        "  signature 1: 2 draw(s) · failed, 2 failing test(s)",
        "  signature 2: 1 draw(s) · timeout, 0 failing test(s)",
        ""]


def test_cli_compare_output_and_json(draws):
    done = sb("compare", "fake-a", "fake-b", "--results", str(draws))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "not distinguishable at 5%: 1 task(s) favour fake-a, 0 favour fake-b; exact sign test p = 1 "
        "(at least 6 tasks all favouring one side are needed)")
    assert "not compared (no evidence)" in done.stdout
    data = json.loads(sb("compare", "fake-a", "fake-b", "--results", str(draws), "--json").stdout)
    assert {"a", "b", "tasks", "wins_a", "wins_b", "p_value", "distinguishable", "verdict"} <= set(data)


def test_cli_leaderboard_and_json(draws):
    done = sb("report", "--leaderboard", str(draws))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("fake-b ") and lines[2].startswith("fake-a ")
    assert "0%" not in lines[1].split("accelerated")[0] or "not measured" in lines[1]
    rows = json.loads(sb("report", "--leaderboard", str(draws), "--json").stdout)
    assert [r["model"] for r in rows] == ["fake-b", "fake-a"]


@pytest.mark.parametrize("args, message", [
    (("report", "--variance", "--last"), "sb: error: choose one of --last, --variance"),
    (("report", "--variance", "--results", "{tmp}/none"), "sb: error: no results folder"),
    (("report", "--failures", "nosuch", "--results", "{draws}"), "sb: error: no finished draw attempted task 'nosuch'"),
    (("compare", "fake-a", "fake-z", "--results", "{draws}"), "sb: error: no finished draws of model 'fake-z'"),
])
def test_cli_bad_input_is_one_line_and_exit_2(draws, tmp_path, args, message):
    done = sb(*(a.format(tmp=tmp_path, draws=draws) for a in args))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(message), done.stderr


def test_cli_last_json_is_the_document(draws):
    data = json.loads(sb("report", "--last", "--results", str(draws), "--json").stdout)
    assert data["schema_version"] == 1 and "_path" not in data
