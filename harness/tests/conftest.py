"""Shared fixtures: a fresh plugin manager per test, the fixture task, sandboxes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FIXTURE_TASK_DIR = HERE / "fixtures" / "fixture_task" / "src" / "sb_task_fixture_add"
REPO = HERE.parent.parent


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Each test session caches reference ids in a folder of its own, never the user's."""
    os.environ["SB_CACHE_DIR"] = str(tmp_path_factory.mktemp("sb-cache"))


@pytest.fixture(autouse=True)
def _a_session_per_test(monkeypatch):
    """Each test gets the session its own environment builds, on first use, as a command in
    a fresh process would: one test's SB_LOAD_PLUGINS or fixture plugin never reaches the next."""
    from sb import session
    monkeypatch.setattr(session, "_default", None)


@pytest.fixture
def pm():
    from sb.plugins import load_plugins
    return load_plugins()


@pytest.fixture
def fixture_task():
    from sb.task import load_task_dir
    return load_task_dir(FIXTURE_TASK_DIR, package="sb_task_fixture_add")


@pytest.fixture
def plain_sandbox():
    from sb.sandbox.plain import PlainSandbox
    return PlainSandbox()


@pytest.fixture
def bwrap_sandbox():
    from sb.sandbox.bwrap import BwrapSandbox
    reason = BwrapSandbox.unavailable_reason()
    if reason:
        pytest.fail(f"bubblewrap is required for the sandbox tests: {reason}")
    return BwrapSandbox()


@pytest.fixture
def task_copy(tmp_path):
    """A writable copy of the fixture task folder, to break on purpose."""
    def make(**meta_overrides):
        import yaml
        dest = tmp_path / "sb_task_fixture_add"
        shutil.copytree(FIXTURE_TASK_DIR, dest, ignore=shutil.ignore_patterns("__pycache__"))
        meta = yaml.safe_load((dest / "meta.yaml").read_text())
        meta.update(meta_overrides)
        (dest / "meta.yaml").write_text(yaml.safe_dump(meta))
        return dest
    return make


def fake_install(site: Path, package_dir: Path, entry_name: str) -> None:
    """Make `package_dir` importable from `site` with an `sb` entry point, as pip would."""
    shutil.copytree(package_dir, site / package_dir.name, ignore=shutil.ignore_patterns("__pycache__"))
    dist = site / f"sb_task_{entry_name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sb-task-{entry_name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[sb]\n{entry_name} = {package_dir.name}\n")


@pytest.fixture
def fixture_env(tmp_path):
    """An environment where the fixture task is installed (and only it is loaded)."""
    site = tmp_path / "site"
    site.mkdir()
    fake_install(site, FIXTURE_TASK_DIR, "fixture_add")
    return sb_env(PYTHONPATH=str(site), SB_LOAD_PLUGINS="fixture_add")


def sb_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("SB_LOAD_PLUGINS",)}
    env.update({"NO_COLOR": "1", "COLUMNS": "200"}, **extra)
    return env
