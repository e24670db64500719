"""A task package from outside this repository, pip-installed into a temporary environment,
is discovered and graded with no change to the harness."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import FIXTURE_TASK_DIR, REPO, sb_env


def test_pip_installed_third_party_task_is_found_and_graded(tmp_path):
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # the harness and its dependencies come from the developer environment; the task does not
    # (addsitedir, so the editable installs' own .pth files there are honoured too)
    (site / "_sb_harness.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    package = FIXTURE_TASK_DIR.parent.parent
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", str(package)], check=True, env=sb_env())
    assert (site / "sb_task_fixture_add" / "meta.yaml").is_file()  # a real wheel install, not editable

    def sb(*args):
        return subprocess.run([str(python), "-c", "from sb.cli import main; main()", *args],
                              capture_output=True, text=True, env=sb_env(), timeout=600)

    listed = json.loads(sb("list", "--json").stdout)
    assert "fixture_add" in {row["slug"] for row in listed}
    validated = sb("validate", "fixture_add", "--json")
    assert validated.returncode == 0, validated.stderr
    assert json.loads(validated.stdout)[0]["verdict"] == "ok"
    ran = sb("run", "--model", "reference", "--tasks", "fixture_add", "--results", str(tmp_path / "res"))
    assert ran.returncode == 0, ran.stderr
    assert "fixture_add ... pass (5 passed)" in ran.stdout


def test_the_harness_wheel_installs_outside_a_checkout_and_a_new_task_beside_it(tmp_path):
    """A third-party author's path, with no checkout on the path: the harness built as a wheel
    into a fresh venv (its dependencies at the lock's versions), `sb new` there, the new
    package installed next to it (its declared harness range satisfied), validated and run."""
    uv = Path(sys.executable).parent / "uv"
    clean = {k: v for k, v in sb_env().items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "SB_LOAD_PLUGINS")}

    def run(*argv, cwd=tmp_path):
        done = subprocess.run([str(a) for a in argv], cwd=cwd, env=clean, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{argv}: {done.stderr[-2000:]}"
        return done.stdout

    run(uv, "build", "--wheel", "--offline", "--no-build-isolation", "--python", sys.executable, "-q",
        "-o", tmp_path / "dist", REPO / "harness")
    (wheel,) = (tmp_path / "dist").glob("scratchbench-*.whl")
    run(uv, "venv", "-q", "--python", sys.executable, tmp_path / "env")
    python, sb = tmp_path / "env" / "bin" / "python", tmp_path / "env" / "bin" / "sb"
    run(uv, "pip", "install", "-q", "--python", python, wheel, "hatchling", "editables",
        "-c", REPO / "locks" / "dev.txt")
    where = run(python, "-c", "import sb; print(sb.__file__)").strip()
    assert where.startswith(str(tmp_path / "env")), where  # the wheel's copy, not the checkout's

    author = tmp_path / "author"
    author.mkdir()
    run(sb, "new", "my_clamp", cwd=author)
    declared = (author / "tasks" / "my_clamp" / "pyproject.toml").read_text()
    assert '"scratchbench>=0.1,<0.2"' in declared  # the harness series it works with
    run(uv, "pip", "install", "-q", "--python", python, "--no-build-isolation", "-e", "tasks/my_clamp", cwd=author)
    validated = json.loads(run(sb, "validate", "my_clamp", "--json", cwd=author))
    assert [v["verdict"] for v in validated] == ["ok"]
    ran = run(sb, "run", "--model", "reference", "--results", tmp_path / "results", cwd=author)
    assert "my_clamp" in ran and "laptop 100% (1/1)" in ran
