"""tools/check_calibration.py: every meta.yaml calibration block re-derives from calibration/."""

from __future__ import annotations

import shutil

import pytest
import yaml

from conftest import FIXTURE_TASK_DIR, REPO
from sb.report.calibration import derive_blocks
from sb.report.draws import load_dir
from test_docs import load_tool
from test_report import entry, make_doc

SLUG = "fixture_add"


def test_the_repository_calibration_rederives(capsys):
    assert load_tool("check_calibration").main([]) == 0, capsys.readouterr().out


@pytest.fixture
def repo(tmp_path):
    """A tasks/ folder holding the fixture task, with a v2 calibration block, and its draws."""
    tasks = tmp_path / "tasks" / SLUG / "src" / "sb_task_fixture_add"
    shutil.copytree(FIXTURE_TASK_DIR, tasks, ignore=shutil.ignore_patterns("__pycache__"))
    calibration = tmp_path / "calibration"
    for draw in range(1, 6):
        make_doc(calibration, "fake-a", "ga", draw, [entry(SLUG, "passed")], draws=5,
                 run_at=f"2026-01-0{draw}T00:00:00+00:00")
        make_doc(calibration, "fake-b", "gb", draw, [entry(SLUG, "passed" if draw <= 2 else "failed", ["t::x"])],
                 draws=5, run_at="2026-01-09T00:00:00+00:00")
    make_doc(calibration, "fake-b", "gc", 1, [entry(SLUG, "missing_deps")], run_at="2026-02-01T00:00:00+00:00")
    write_block(tmp_path, [{"model": "fake-a", "draws": 5, "passed": 5, "date": "2026-01-05"},
                           {"model": "fake-b", "draws": 5, "passed": 2, "date": "2026-01-09"}])
    return tmp_path


def write_block(root, block) -> None:
    meta_path = root / "tasks" / SLUG / "src" / "sb_task_fixture_add" / "meta.yaml"
    meta = yaml.safe_load(meta_path.read_text())
    meta.update(frozen_set="v2", calibration=block)
    meta_path.write_text(yaml.safe_dump(meta))


def check(root, capsys) -> tuple[int, str]:
    code = load_tool("check_calibration").main(["--calibration", str(root / "calibration"),
                                                "--tasks", str(root / "tasks")])
    return code, capsys.readouterr().out


def test_blocks_derive_from_evidence_only(repo):
    assert derive_blocks(load_dir(repo / "calibration")) == {SLUG: [
        {"model": "fake-a", "draws": 5, "passed": 5, "date": "2026-01-05"},
        {"model": "fake-b", "draws": 5, "passed": 2, "date": "2026-01-09"}]}


def test_matching_blocks_pass(repo, capsys):
    code, out = check(repo, capsys)
    assert code == 0, out
    assert out.endswith("1 task(s), 2 calibration entries, 11 draw file(s), 0 mismatch(es)\n")


def test_a_block_that_does_not_rederive_fails(repo, capsys):
    write_block(repo, [{"model": "fake-a", "draws": 5, "passed": 5, "date": "2026-01-05"},
                       {"model": "fake-b", "draws": 5, "passed": 3, "date": "2026-01-09"}])
    code, out = check(repo, capsys)
    assert code == 1
    assert ("MISMATCH fixture_add: meta.yaml declares fake-a 5/5 on 2026-01-05, fake-b 3/5 on 2026-01-09; "
            "calibration/ gives fake-a 5/5 on 2026-01-05, fake-b 2/5 on 2026-01-09") in out


def test_draws_behind_no_block_and_control_runs_fail(repo, capsys):
    make_doc(repo / "calibration", "fake-c", "gd", 1, [entry(SLUG, "passed")])
    make_doc(repo / "calibration", "reference", "ge", 1, [entry(SLUG, "passed")], adapter="reference")
    make_doc(repo / "calibration", "fake-a", "gf", 1, [entry("elsewhere", "passed")])
    code, out = check(repo, capsys)
    assert code == 1
    assert "fake-c 1/1" in out
    assert "a reference control run is no calibration" in out
    assert "elsewhere: calibration/ holds draws for a task that is not in the repository" in out


def test_calibration_folder_exists_with_its_readme():
    assert (REPO / "calibration" / "README.md").is_file()
