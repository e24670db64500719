"""The CLI: JSON contracts, exit codes, one-line errors. Run as a real subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURE_TASK_DIR, fake_install, sb_env

SB = [sys.executable, "-c", "from sb.cli import main; main()"]


def sb(*args, env=None, cwd=None):
    return subprocess.run([*SB, *args], capture_output=True, text=True, env=env or sb_env(), cwd=cwd, timeout=600)


def test_list_json_has_the_contract_keys():
    done = sb("list", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows and {"slug", "suite", "category", "tier", "accelerator", "set"} <= set(rows[0])


def test_list_imports_no_torch():
    code = ("import sys\nfrom sb.cli import main\ntry:\n    main(['list', '--json'])\nexcept SystemExit:\n    pass\n"
            "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=sb_env())
    assert done.stderr.strip().endswith("NO-TORCH")


def test_validate_json(fixture_env):
    done = sb("validate", "fixture_add", "--json", env=fixture_env)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    assert row["verdict"] == "ok"
    assert row["reference"]["status"] == "passed" and row["starter"]["status"] == "failed"
    assert row["starter"]["counts"]["passed"] == 0


def test_mutants_json(fixture_env):
    done = sb("mutants", "fixture_add", "--json", env=fixture_env)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {r["mutant"] for r in rows} == {"off_by_one", "ignores_negatives"}
    assert all(r["ok"] and r["actual"] == "caught" and r["expected"] == "caught" for r in rows)


def test_mutants_first_failure_gives_the_same_verdicts_naming_where_each_stopped(fixture_env):
    done = sb("mutants", "fixture_add", "--json", "--first-failure", env=fixture_env)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {r["mutant"] for r in rows} == {"off_by_one", "ignores_negatives"}
    assert all(r["ok"] and r["actual"] == "caught" for r in rows)
    assert all(r["detail"].startswith("failed: first failure test_") for r in rows), rows


def test_run_reference_writes_results(fixture_env, tmp_path):
    done = sb("run", "--model", "reference", "--results", str(tmp_path / "res"), env=fixture_env)
    assert done.returncode == 0, done.stderr
    assert "fixture_add ... pass (5 passed)" in done.stdout
    assert "laptop 100% (1/1) · headline" in done.stdout
    (path,) = (tmp_path / "res").glob("*.json")
    doc = json.loads(path.read_text())
    for key in ("model", "run_at", "harness_version", "task_set", "headline_tier", "pass_rate", "pass_rate_by_tier",
                "pass_rate_by_category", "attempts", "wall_clock_s", "tokens", "usd_cost", "environment", "isolation"):
        assert key in doc, key
    assert doc["pass_rate"] == 1.0 and doc["tokens"] is None and doc["usd_cost"] is None
    assert doc["task_set"] == "all"
    (task,) = doc["tasks"]
    for key in ("slug", "version", "status", "passed", "duration_s", "counts", "failed_tests", "detail"):
        assert key in task, key
    last = sb("report", "--last", "--results", str(tmp_path / "res"), env=fixture_env)
    assert last.returncode == 0 and "fixture_add" in last.stdout


def test_run_starter_scores_zero_and_prints_it(fixture_env, tmp_path):
    done = sb("run", "--model", "starter", "--results", str(tmp_path), env=fixture_env)
    assert done.returncode == 0, done.stderr
    assert "laptop 0% (0/1) · headline" in done.stdout


def test_grade_and_export_round_trip(fixture_env, tmp_path):
    dest = tmp_path / "solution"
    assert sb("export", "fixture_add", str(dest), "--mutant", "off_by_one", env=fixture_env).returncode == 0
    assert "+ 1" in (dest / "adder.py").read_text()
    graded = json.loads(sb("grade", "fixture_add", str(dest), "--json", env=fixture_env).stdout)
    assert graded["status"] == "failed" and not graded["passed"] and graded["failed_tests"]
    assert sb("export", "fixture_add", str(dest), "--reference", env=fixture_env).returncode == 0
    graded = json.loads(sb("grade", "fixture_add", str(dest), "--json", env=fixture_env).stdout)
    assert graded["status"] == "passed" and graded["counts"]["passed"] == 5


@pytest.mark.parametrize("args, culprit", [
    (["validate", "no_such_task"], "unknown task 'no_such_task'"),
    (["run", "--model", "no-such-model"], "unknown model 'no-such-model'"),
    (["list", "--tier", "moon"], "--tier"),
    (["run", "--model", "reference", "--isolation", "chroot"], "unknown isolation 'chroot'"),
    (["list", "--no-such-flag"], "--no-such-flag"),
    (["report", "--last", "--results", "/nonexistent/results"], "no results"),
])
def test_bad_input_is_one_line_and_exit_2(args, culprit):
    done = sb(*args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("sb: error: ")
    assert culprit in done.stderr
    assert "Traceback" not in done.stderr


def broken_package(tmp_path, mutate) -> dict:
    site = tmp_path / "site"
    site.mkdir()
    fake_install(site, FIXTURE_TASK_DIR, "fixture_add")
    mutate(site / FIXTURE_TASK_DIR.name)
    return sb_env(PYTHONPATH=str(site), SB_LOAD_PLUGINS="fixture_add")


@pytest.mark.parametrize("mutate, culprit", [
    (lambda p: (p / "meta.yaml").write_text("slug: fixture_add\nsuite: [oops"), "sb_task_fixture_add/meta.yaml"),
    (lambda p: shutil.rmtree(p / "starter"), "sb_task_fixture_add/starter"),
    (lambda p: (p / "reference" / "adder.py").unlink(), "sb_task_fixture_add/reference"),
    (lambda p: (p / "mutants" / "off_by_one.patch").write_text("maybe: adds one\n--- a/adder.py\n+++ b/adder.py\n"),
     "mutants/off_by_one.patch"),
    (lambda p: (p / "reference" / "adder.py").write_text("def add(a, b):\n    return b + a\n"),
     "mutants/ignores_negatives.patch"),
])
def test_a_malformed_package_names_the_culprit(tmp_path, mutate, culprit):
    done = sb("mutants", "fixture_add", env=broken_package(tmp_path, mutate))
    assert done.returncode == 1, done.stdout  # asked for by name: the broken package is the failure
    assert culprit in done.stderr and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_models_lists_the_builtin_adapters():
    rows = json.loads(sb("models", "--json").stdout)
    names = {r["name"] for r in rows}
    assert {"reference", "starter"} <= names
    assert all({"name", "routes", "extra", "installed"} <= set(r) for r in rows)


@pytest.mark.parametrize("args, culprit", [
    (["run", "--model", "claude-sonnet-4-5"], "ANTHROPIC_API_KEY is not set"),
    (["run", "--model", "openai-compatible:tiny"], "needs --base-url"),
])
def test_a_run_that_cannot_work_stops_before_any_task(args, culprit):
    env = {k: v for k, v in sb_env().items() if not k.endswith("API_KEY")}
    done = sb(*args, env=env)
    assert done.returncode == 2 and culprit in done.stderr and done.stderr.count("\n") == 1


def test_export_with_the_prompt_writes_what_a_solver_sees(fixture_env, tmp_path):
    dest = tmp_path / "by_hand"
    done = sb("export", "fixture_add", str(dest), "--prompt", "--json", env=fixture_env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"] == ["adder.py", "prompt.md"]
    from conftest import FIXTURE_TASK_DIR
    assert (dest / "prompt.md").read_text() == (FIXTURE_TASK_DIR / "prompt.md").read_text()


@pytest.mark.parametrize("command", ["grade", "export"])
def test_a_command_naming_one_malformed_package_names_the_culprit(tmp_path, command):
    """`sb grade` and `sb export` read only the package they name: still one line saying why."""
    env = broken_package(tmp_path, lambda p: (p / "meta.yaml").write_text("slug: fixture_add\nsuite: [oops"))
    folder = tmp_path / "answer"
    folder.mkdir()
    done = sb(command, "fixture_add", str(folder), env=env)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "sb_task_fixture_add/meta.yaml" in done.stderr and "Traceback" not in done.stderr


def test_named_tasks_are_a_custom_set_and_a_filter_beside_them_only_checks(fixture_task):
    """--tasks with --set: the results would carry the set's name for what the names chose."""
    from dataclasses import replace

    from sb.catalog import select_tasks
    from sb.errors import SbError
    other = replace(fixture_task, meta=replace(fixture_task.meta, slug="other", frozen_set="v1", suite="ml"))
    tasks = {"fixture_add": fixture_task, "other": other}
    assert select_tasks(tasks, slugs=["other"], set_name="v1", names_must_match=True) == [other]
    with pytest.raises(SbError, match="'fixture_add' is in set 'unvalidated', not 'v1': drop --set"):
        select_tasks(tasks, slugs=["other", "fixture_add"], set_name="v1", names_must_match=True)
    with pytest.raises(SbError, match="'fixture_add' is in suite 'coding', not 'ml'"):
        select_tasks(tasks, slugs=["fixture_add"], suite="ml", names_must_match=True)
    assert select_tasks(tasks, slugs=["fixture_add"], set_name="v1") == [fixture_task]  # validate: names win
    assert select_tasks(tasks, set_name="v1") == [other]


@pytest.mark.parametrize("narrowing", [["--tasks", "fixture_add"], ["--suite", "coding"], ["--tier", "laptop"]])
def test_a_run_narrowed_beside_its_set_records_the_set_custom(fixture_env, tmp_path, narrowing):
    done = sb("run", "--model", "reference", *narrowing, "--set", "unvalidated", "--results", str(tmp_path),
              env=fixture_env)
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.glob("*.json")
    assert json.loads(path.read_text())["task_set"] == "custom"


def test_grading_a_folder_without_any_declared_file_is_bad_input(fixture_env, tmp_path):
    (tmp_path / "notes.txt").write_text("the answer is somewhere else\n")
    done = sb("grade", "fixture_add", str(tmp_path), env=fixture_env)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "holds none of fixture_add's files (adder.py)" in done.stderr
