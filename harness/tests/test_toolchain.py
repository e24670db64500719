"""Toolchains and task content: sb env, fingerprints and hashes in results, pooling refused
across content changes, validate against a published hash, the holdout and --drift."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HERE, fake_install, sb_env
from test_report import entry, make_doc

SB = [sys.executable, "-c", "from sb.cli import main; main()"]
HOLDOUT_DIR = HERE / "fixtures" / "holdout_task" / "src" / "sb_task_fixture_secret"


def sb(*args, env=None, cwd=None):
    return subprocess.run([*SB, *args], capture_output=True, text=True, env=env or sb_env(), cwd=cwd, timeout=600)


def test_env_json_has_the_fingerprint_and_every_part_it_covers():
    done = sb("env", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert {"fingerprint", "python", "platform", "cpu_count", "thread_settings", "sandbox", "accelerator",
            "distributions"} <= set(doc)
    assert len(doc["fingerprint"]) == 16 and doc["distributions"]["scratchbench"]
    assert doc["thread_settings"]["OMP_NUM_THREADS"] == "1"
    assert sb("env", "--json").stdout == done.stdout  # stable on one machine


def test_the_fingerprint_moves_when_a_distribution_does(monkeypatch):
    from sb import toolchain
    before = toolchain.fingerprint()
    changed = {**toolchain.document(), "distributions": {**toolchain.document()["distributions"], "numpy": "0.0.1"}}
    monkeypatch.setattr(toolchain, "_facts", lambda: changed)
    toolchain.fingerprint.cache_clear()
    try:
        assert toolchain.fingerprint() != before
    finally:
        toolchain.fingerprint.cache_clear()


def test_a_run_records_the_fingerprint_and_each_tasks_content_hash(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    from conftest import FIXTURE_TASK_DIR
    fake_install(site, FIXTURE_TASK_DIR, "fixture_add")
    env = sb_env(PYTHONPATH=str(site), SB_LOAD_PLUGINS="fixture_add")
    done = sb("run", "--model", "reference", "--json", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    fingerprint = json.loads(sb("env", "--json", env=env).stdout)["fingerprint"]
    assert doc["toolchain_fingerprint"] == fingerprint == doc["environment"]["fingerprint"]
    (task,) = doc["tasks"]
    from sb.task import load_task_dir
    assert task["content_hash"] == load_task_dir(FIXTURE_TASK_DIR).content_hash


def test_the_content_hash_covers_prompt_tests_reference_starter_and_deps(tmp_path):
    import shutil
    from conftest import FIXTURE_TASK_DIR
    from sb.task import load_task_dir
    base = load_task_dir(FIXTURE_TASK_DIR).content_hash
    for i, (path, text) in enumerate([("prompt.md", "changed"), ("hidden_tests/test_add.py", "# changed\n"),
                                      ("reference/adder.py", "# changed\n"), ("starter/adder.py", "# changed\n"),
                                      ("meta.yaml", "")]):
        folder = tmp_path / f"copy{i}"
        shutil.copytree(FIXTURE_TASK_DIR, folder)
        if path == "meta.yaml":
            (folder / path).write_text((folder / path).read_text().replace("deps: []", "deps: [numpy]"))
        else:
            (folder / path).write_text((folder / path).read_text() + text)
        assert load_task_dir(folder).content_hash != base, path


def test_draws_of_one_version_with_different_content_are_not_pooled(tmp_path):
    first, second = entry("alpha", "passed"), entry("alpha", "failed")
    first["content_hash"], second["content_hash"] = "a" * 16, "b" * 16
    make_doc(tmp_path, "m", "g1", 1, [first])
    make_doc(tmp_path, "m", "g2", 1, [second], run_at="2026-01-03T03:04:05+00:00")
    done = sb("report", "--variance", "--results", str(tmp_path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "alpha v1 was graded with different task content" in done.stderr and "not pooled" in done.stderr


def test_after_a_version_bump_the_draws_are_separate_rows(tmp_path):
    first, second = entry("alpha", "passed"), entry("alpha", "failed")
    first["content_hash"], second["content_hash"], second["version"] = "a" * 16, "b" * 16, 2
    make_doc(tmp_path, "m", "g1", 1, [first])
    make_doc(tmp_path, "m", "g2", 1, [second], run_at="2026-01-03T03:04:05+00:00")
    done = sb("report", "--variance", "--results", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    slugs = [t["slug"] for block in json.loads(done.stdout) for t in block["tasks"]]
    assert slugs == ["alpha@v1", "alpha@v2"]


def test_draws_on_different_toolchains_are_flagged_with_the_packages(tmp_path):
    a, b = make_doc(tmp_path, "m", "g1", 1, [entry("alpha", "passed")]), \
        make_doc(tmp_path, "m", "g2", 1, [entry("alpha", "passed")], run_at="2026-01-03T03:04:05+00:00")
    for path, version in ((a, "2.4.6"), (b, "2.5.0")):
        doc = json.loads(path.read_text())
        doc["environment"] = {"fingerprint": f"fp-{version}", "distributions": {"numpy": version, "pytest": "9.2.0"}}
        path.write_text(json.dumps(doc))
    done = sb("report", "--variance", "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "2 different toolchains" in done.stderr and "packages that differ: numpy" in done.stderr


def test_validate_fails_a_task_changed_since_its_version_was_published(tmp_path, task_copy):
    from sb.checks import version_problem
    from sb.task import load_task_dir
    task = load_task_dir(task_copy(), package="fixture_add")
    published = entry("fixture_add", "passed")
    published["content_hash"] = "0" * 16
    make_doc(tmp_path, "m", "g1", 1, [published])
    assert "bump version in meta.yaml" in version_problem(task, tmp_path)
    published["content_hash"] = task.content_hash
    make_doc(tmp_path, "m", "g1", 1, [published])
    from sb.report.published_hashes import _first_hashes
    _first_hashes.cache_clear()
    assert version_problem(task, tmp_path) == ""


# ---------------------------------------------------------------- the holdout


def test_a_holdout_task_never_reaches_the_published_leaderboard(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    from conftest import FIXTURE_TASK_DIR
    fake_install(site, FIXTURE_TASK_DIR, "fixture_add")
    fake_install(site, HOLDOUT_DIR, "fixture_secret")
    env = sb_env(PYTHONPATH=str(site), SB_LOAD_PLUGINS="fixture_add,fixture_secret")
    done = sb("run", "--model", "reference", "--json", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert {e["slug"]: e["holdout"] for e in doc["tasks"]} == {"fixture_add": False, "fixture_secret": True}
    path = next((tmp_path / "results").glob("*.json"))
    leaderboard = tmp_path / "leaderboard"
    assert sb("publish", str(path), "--leaderboard", str(leaderboard), env=env).returncode == 0
    text = "".join(p.read_text() for p in leaderboard.iterdir() if p.is_file())
    assert "fixture_secret" not in text and '"holdout_withheld": 1' in text
    site_dir = tmp_path / "html"
    sb("report", "--html", str(site_dir), "--leaderboard", str(leaderboard), env=env)
    assert "fixture_secret" not in "".join(p.read_text() for p in site_dir.rglob("*") if p.is_file())


def _drift_docs(folder: Path, public_pass: int, holdout_pass: int, n: int = 12) -> None:
    entries = []
    for i in range(n):
        e = entry(f"pub{i}", "passed" if i < public_pass else "failed")
        entries.append(e)
    for i in range(n):
        e = entry(f"hold{i}", "passed" if i < holdout_pass else "failed")
        e["holdout"] = True
        entries.append(e)
    make_doc(folder, "leaky", "g1", 1, entries)


def test_drift_flags_a_model_much_better_on_public_tasks(tmp_path):
    _drift_docs(tmp_path, public_pass=11, holdout_pass=3)
    done = sb("report", "--drift", "--results", str(tmp_path), "--json")
    (row,) = json.loads(done.stdout)
    assert row["flagged"] and row["p_value"] < 0.05
    assert row["public"] == {"passed": 11, "measured": 12} and row["holdout"] == {"passed": 3, "measured": 12}


def test_drift_does_not_flag_balanced_results(tmp_path):
    _drift_docs(tmp_path, public_pass=7, holdout_pass=6)
    (row,) = json.loads(sb("report", "--drift", "--results", str(tmp_path), "--json").stdout)
    assert not row["flagged"] and row["p_value"] > 0.05


def test_fisher_matches_a_brute_force_enumeration():
    from itertools import combinations
    from sb.report.stats import fisher_greater
    a_pass, a_fail, b_pass, b_fail = 5, 2, 1, 4
    outcomes = [1] * (a_pass + b_pass) + [0] * (a_fail + b_fail)
    n_a = a_pass + a_fail
    splits = list(combinations(range(len(outcomes)), n_a))
    as_extreme = sum(1 for chosen in splits if sum(outcomes[i] for i in chosen) >= a_pass)
    assert fisher_greater(a_pass, a_fail, b_pass, b_fail) == pytest.approx(as_extreme / len(splits), rel=1e-12)


def test_drift_without_holdout_evidence_says_there_is_nothing_to_compare(tmp_path):
    make_doc(tmp_path, "plain", "g1", 1, [entry("pub0", "passed"), entry("pub1", "failed")])
    done = sb("report", "--drift", "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("plain: nothing to compare (no holdout task measured")
    assert "p (public better)" not in done.stdout and "1.0000" not in done.stdout
