"""The lock (locks/*.txt, tools/lock.sh, tools/check_lock.py, tools/install.sh): every pyproject's
requirements are locked, the check names what is not, and two fresh venvs built from the lock
are the same toolchain."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from packaging.utils import canonicalize_name

from conftest import REPO, sb_env

sys.path.insert(0, str(REPO / "tools"))
import check_lock  # noqa: E402

CHECK = [sys.executable, str(REPO / "tools" / "check_lock.py")]


def check(root=REPO):
    done = subprocess.run([*CHECK, "--root", str(root)], capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout.splitlines()


@pytest.fixture
def workspace(tmp_path):
    """A copy of what the check reads: every pyproject of the workspace and the locks."""
    shutil.copytree(REPO / "locks", tmp_path / "locks")
    for member in check_lock.members():
        dest = tmp_path / member.relative_to(REPO)
        dest.mkdir(parents=True)
        shutil.copy(member / "pyproject.toml", dest / "pyproject.toml")
    return tmp_path


def edit(path, old, new):
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def test_the_committed_locks_satisfy_every_pyproject():
    code, lines = check()
    assert code == 0, lines
    assert lines == ["check_lock: locks/laptop.txt, locks/dev.txt satisfy every pyproject"]


def test_a_task_asking_for_an_unlocked_package_fails_with_one_line_naming_it(workspace):
    task = workspace / "tasks" / "zz_new_task"
    task.mkdir()
    (task / "pyproject.toml").write_text(
        '[project]\nname = "sb-task-zz-new-task"\nversion = "1.0.0"\n'
        'dependencies = ["scratchbench", "numpy>=1.24", "quillweave>=0.3"]\n')
    code, lines = check(workspace)
    assert code == 1
    # one line per lock (make run's and make test's), each naming the package and the relock command
    assert lines == [f"check_lock: tasks/zz_new_task/pyproject.toml asks for quillweave>=0.3 but locks/{tier}.txt "
                     f"has no quillweave: run bash tools/lock.sh" for tier in ("laptop", "dev")]


def test_a_version_outside_the_locked_pin_fails(workspace):
    edit(workspace / "tasks" / "sharded_dataloader" / "pyproject.toml", '"numpy>=1.24"', '"numpy>=99"')
    code, lines = check(workspace)
    pinned = check_lock.read_lock(REPO / "locks" / "dev.txt")["pins"]["numpy"]
    assert code == 1
    assert lines[0] == (f"check_lock: tasks/sharded_dataloader/pyproject.toml asks for numpy>=99 but "
                        f"locks/laptop.txt pins numpy=={pinned}: run bash tools/lock.sh")


def test_a_new_harness_extra_fails_the_dev_lock_only(workspace):
    edit(workspace / "harness" / "pyproject.toml", "[project.optional-dependencies]\n",
         '[project.optional-dependencies]\nnewthing = ["quillweave[parquet]>=0.3"]\n')
    code, lines = check(workspace)
    assert code == 1
    assert lines == ["check_lock: harness/pyproject.toml [newthing] asks for quillweave[parquet]>=0.3 but "
                     "locks/dev.txt has no quillweave: run bash tools/lock.sh"]


def test_an_extra_the_lock_was_not_resolved_with_fails(workspace):
    edit(workspace / "locks" / "dev.in", "llama-cpp-python[server]==", "llama-cpp-python[server,vision]==")
    code, lines = check(workspace)
    assert code == 1
    assert lines == ["check_lock: locks/dev.in asks for llama-cpp-python[server,vision]==0.3.16 but locks/dev.txt "
                     "holds llama-cpp-python without [vision]: run bash tools/lock.sh"]


def test_a_pin_without_a_hash_or_a_source_build_without_locked_tools_fails(workspace):
    lock = workspace / "locks" / "dev.txt"
    text = lock.read_text()
    lock.write_text(text.replace("# sb-lock-sdists:", "# sb-lock-sdists: quillweave", 1) + "zzz-unhashed==1.0\n")
    code, lines = check(workspace)
    assert code == 1
    assert "check_lock: locks/dev.txt pins zzz-unhashed without a hash: run bash tools/lock.sh" in lines
    assert any(line.startswith("check_lock: locks/dev.txt builds quillweave from source but locks/build.in")
               for line in lines)


def test_the_lock_inputs_cover_the_whole_workspace_and_the_locks_hash_every_pin():
    dev = check_lock.input_lines("dev")
    tasks = sorted(p.parent.name for p in (REPO / "tasks").glob("*/pyproject.toml"))
    assert [line for line in dev if line.startswith("-e ./tasks/")] == [f"-e ./tasks/{t}" for t in tasks]
    integrations = sorted(p.parent.name for p in (REPO / "integrations").glob("*/pyproject.toml"))
    assert [line for line in dev if line.startswith("-e ./integrations/")] == [
        f"-e ./integrations/{i}" for i in integrations]
    assert not [line for line in check_lock.input_lines("laptop") if "integrations" in line]
    assert f"-e ./harness[{','.join(check_lock.harness_extras('dev'))}]" in dev
    assert check_lock.harness_extras("laptop") == ["report", "speed"]
    for tier in ("laptop", "dev"):
        lock = check_lock.read_lock(REPO / "locks" / f"{tier}.txt")
        assert not lock["unhashed"]
        assert str(lock["pins"]["torch"]) == "2.13.0+cpu"        # the CPU build, locked like the rest
        assert not set(lock["pins"]) & check_lock.workspace_names()  # the workspace is installed editable
    laptop = check_lock.read_lock(REPO / "locks" / "laptop.txt")["pins"]
    dev_pins = check_lock.read_lock(REPO / "locks" / "dev.txt")["pins"]
    assert {n: v for n, v in dev_pins.items() if n in laptop} == laptop  # one version per package across tiers


@pytest.mark.integration
def test_two_fresh_venvs_from_the_lock_are_one_toolchain(tmp_path):
    """tools/install.sh, as `make run` runs it, into two new venvs (the harness alone: the task
    packages are not part of the fingerprint); uv's cache makes the second and later builds a
    matter of seconds."""
    def build(name, before=None):
        venv = tmp_path / name
        env = sb_env(VENV=str(venv), SB_INSTALL_NO_APT="1", SB_INSTALL_TASKS="0")
        if before:
            before(venv)
        start = time.monotonic()
        done = subprocess.run(["bash", "tools/install.sh"], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr + done.stdout
        shown = subprocess.run([str(venv / "bin" / "sb"), "env", "--json"], capture_output=True, text=True,
                               env=env, timeout=120)
        assert shown.returncode == 0, shown.stderr
        return json.loads(shown.stdout), time.monotonic() - start

    with ThreadPoolExecutor(2) as pool:
        (a, took_a), (b, took_b) = pool.map(build, ["a", "b"])
    assert a["fingerprint"] == b["fingerprint"], {k: (a["distributions"].get(k), b["distributions"].get(k))
                                                 for k in set(a["distributions"]) ^ set(b["distributions"])}
    assert a["distributions"] == b["distributions"]
    locked = {n: str(v) for n, v in check_lock.read_lock(REPO / "locks" / "laptop.txt")["pins"].items()}
    installed = {canonicalize_name(n): v for n, v in a["distributions"].items() if n != "scratchbench"}
    assert installed == locked  # exactly the lock: nothing more, nothing less, no other version
    assert a["distributions"]["torch"] == "2.13.0+cpu"

    def drift(venv):  # a locked package gone, an unlocked one added: the next install undoes both
        site = next((venv / "lib").glob("python3*/site-packages"))
        shutil.rmtree(next(site.glob("six-*.dist-info")))
        extra = site / "zzz_unlocked-1.0.dist-info"
        extra.mkdir()
        (extra / "METADATA").write_text("Metadata-Version: 2.1\nName: zzz-unlocked\nVersion: 1.0\n")
        (extra / "RECORD").write_text("zzz_unlocked-1.0.dist-info/METADATA,,\nzzz_unlocked-1.0.dist-info/RECORD,,\n")
    again, _ = build("a", before=drift)
    assert again["distributions"] == a["distributions"]
    print(f"two venvs from the lock in {took_a:.0f}s and {took_b:.0f}s (in parallel)", file=sys.stderr)
