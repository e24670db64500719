"""The workspace root: one hatch environment per tier, every task a member, torch pinned.

(Checked by hand with hatch 1.18.2: `hatch env show --json` lists default, laptop, cuda and
metal with these members; the tests read the same file without needing hatch.)
"""

import tomllib

from conftest import REPO


def workspace() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["envs"]


def test_one_environment_per_tier():
    envs = workspace()
    assert {"default", "laptop", "cuda", "metal"} <= set(envs)
    assert envs["laptop"]["template"] == "default"
    assert envs["metal"]["platforms"] == ["macos"]
    assert any(dep.startswith("triton") for dep in envs["cuda"]["dependencies"])


def test_the_laptop_tier_pins_the_cpu_torch():
    assert "torch==2.13.0" in workspace()["default"]["dependencies"]


def test_every_task_package_is_a_workspace_member():
    members = workspace()["default"]["workspace"]["members"]
    assert members == ["harness", "tasks/*"]
    packages = [p.parent.name for p in (REPO / "tasks").glob("*/pyproject.toml")]
    folders = [p.name for p in (REPO / "tasks").iterdir() if p.is_dir()]
    assert sorted(packages) == sorted(folders)
