"""A task package from outside this repository, pip-installed into a temporary environment,
is discovered and graded with no change to the harness."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import FIXTURE_TASK_DIR, sb_env


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
