"""The lock (locks/*.txt, tools/lock.sh, tools/check_lock.py, tools/install.sh): every pyproject's
requirements are locked, the check names what is not, and two fresh venvs built from the lock
are the same toolchain."""

from __future__ import annotations

import json
import os
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
    """A copy of what the check reads: every pyproject of the workspace (the root's hatch
    environments too) and the locks."""
    shutil.copytree(REPO / "locks", tmp_path / "locks")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
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
    assert lines == ["check_lock: locks/laptop.txt, locks/dev.txt, locks/laptop-macos-arm64.txt, "
                     "locks/laptop-linux-aarch64.txt, locks/cuda.txt satisfy every pyproject"]


def test_a_task_asking_for_an_unlocked_package_fails_with_one_line_naming_it(workspace):
    task = workspace / "tasks" / "zz_new_task"
    task.mkdir()
    (task / "pyproject.toml").write_text(
        '[project]\nname = "sb-task-zz-new-task"\nversion = "1.0.0"\n'
        'dependencies = ["scratchbench", "numpy>=1.24", "quillweave>=0.3"]\n')
    code, lines = check(workspace)
    assert code == 1
    # one line per lock (make run's, make test's and each platform lock), each naming the package and the relock command
    assert lines == [f"check_lock: tasks/zz_new_task/pyproject.toml asks for quillweave>=0.3 but locks/{tier}.txt "
                     f"has no quillweave: run bash tools/lock.sh"
                     for tier in ("laptop", "dev", "laptop-macos-arm64", "laptop-linux-aarch64", "cuda")]


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


PLATFORM_LOCKS = ("laptop-macos-arm64", "laptop-linux-aarch64", "cuda")


def test_the_platform_locks_pin_the_laptop_tier_with_hashes_at_the_laptop_locks_versions():
    """Each platform lock is tools/lock.sh's, pins every requirement of the laptop tier (but what
    its platform has no wheel of), hashes every pin, and shares every version with locks/laptop.txt
    but the pins it replaces (torch; triton, which it leaves out on macOS)."""
    assert tuple(check_lock.PLATFORM_LOCKS) == PLATFORM_LOCKS
    laptop = check_lock.read_lock(REPO / "locks" / "laptop.txt")["pins"]
    workspace = check_lock.workspace_names()
    for name in PLATFORM_LOCKS:
        path = REPO / "locks" / f"{name}.txt"
        text = path.read_text()
        assert text.startswith("# The ") and "# Generated by bash tools/lock.sh (uv 0.13.9)" in text
        header = [line for line in text.splitlines() if line.startswith("# sb-lock-")]
        assert header[:-2] == check_lock.header_lines(name)[:-1]   # platform, overrides, left out
        assert header[-2:] == ["# sb-lock-sdists: ", check_lock.extras_line(name)]
        lock = check_lock.read_lock(path)
        pins = lock["pins"]
        assert not lock["unhashed"] and not lock["sdists"]
        assert str(pins["torch"]) == "2.13.0"                       # PyPI's build, not the +cpu one
        assert not set(pins) & workspace
        for where, req in check_lock.asked(name):
            n = canonicalize_name(req.name)
            if n in workspace or n in check_lock.PLATFORM_LOCKS[name].left_out:
                continue
            assert req.specifier.contains(pins[n], prereleases=True), (name, where, req)
        replaced = {"torch", "triton"}
        assert {n: v for n, v in pins.items() if n in laptop and n not in replaced} == {
            n: v for n, v in laptop.items() if n not in replaced}     # every other laptop pin, same version
    macos = check_lock.read_lock(REPO / "locks" / "laptop-macos-arm64.txt")["pins"]
    assert "triton" not in macos and not [n for n in macos if n.startswith(("nvidia-", "cuda-"))]
    for name in ("laptop-linux-aarch64", "cuda"):
        pins = check_lock.read_lock(REPO / "locks" / f"{name}.txt")["pins"]
        assert str(pins["triton"]) == "3.9.0" and "nvidia-cudnn-cu13" in pins


def test_a_platform_lock_is_checked_with_its_own_platforms_markers_and_pins(workspace):
    """A requirement only macOS asks for fails the macOS lock alone; triton, which macOS has no
    wheel of, is not asked of it; torch==2.13.0+cpu (locks/laptop.in) is replaced by PyPI's."""
    edit(workspace / "tasks" / "sharded_dataloader" / "pyproject.toml", '"numpy>=1.24"',
         '"numpy>=1.24", "quillweave>=0.3; sys_platform == \'darwin\'"')
    code, lines = check(workspace)
    assert code == 1
    assert lines == ['check_lock: tasks/sharded_dataloader/pyproject.toml asks for quillweave>=0.3; '
                     'sys_platform == "darwin" but locks/laptop-macos-arm64.txt has no quillweave: '
                     'run bash tools/lock.sh']


def test_a_missing_or_unhashed_platform_lock_fails(workspace):
    (workspace / "locks" / "cuda.txt").unlink()
    lock = workspace / "locks" / "laptop-linux-aarch64.txt"
    lock.write_text(lock.read_text() + "zzz-unhashed==1.0\n")
    code, lines = check(workspace)
    assert code == 1
    assert lines == ["check_lock: locks/laptop-linux-aarch64.txt pins zzz-unhashed without a hash: "
                     "run bash tools/lock.sh",
                     "check_lock: locks/cuda.txt is missing: run bash tools/lock.sh"]


def test_a_platform_locks_inputs_are_its_tiers_with_its_own_pins():
    for name in check_lock.PLATFORM_LOCKS:
        assert check_lock.input_lines(name)[:len(check_lock.input_lines("laptop"))] == check_lock.input_lines("laptop")
        assert all(line.split("==")[0].split(" ")[0] in {"torch", "triton"} for line in check_lock.overrides(name))
        kept = {line.split("==")[0] for line in check_lock.constraints(name)}
        assert "torch" not in kept and "triton" not in kept and "numpy" in kept
    assert 'triton ; sys_platform == "never"' in check_lock.overrides("laptop-macos-arm64")   # left out
    assert "triton==3.9.0" in check_lock.overrides("cuda")   # over PyPI torch 2.13.0's own triton==3.7.1
    assert "triton>=3.1" in check_lock.input_lines("cuda")   # the root pyproject's hatch cuda environment


def which_lock(tmp_path, system, machine, *args, tier=None):
    """tools/install.sh --which-lock with uname faked: the selection alone, before any install."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "uname").write_text(f'#!/bin/sh\ncase $1 in -s) echo {system};; -m) echo {machine};; esac\n')
    (fake / "uname").chmod(0o755)
    env = sb_env(PATH=f"{fake}:{os.environ['PATH']}", VENV=str(tmp_path / "never-made"))
    env.pop("SB_TIER", None)
    if tier:
        env["SB_TIER"] = tier
    done = subprocess.run(["bash", "tools/install.sh", "--which-lock", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert not (tmp_path / "never-made").exists()
    return done.returncode, done.stdout.splitlines(), done.stderr.splitlines()


@pytest.mark.parametrize("system, machine, args, tier, lock", [
    ("Linux", "x86_64", (), None, "locks/laptop.txt"),
    ("Linux", "x86_64", ("--dev",), None, "locks/dev.txt"),
    ("Linux", "x86_64", (), "cuda", "locks/cuda.txt"),
    ("Linux", "x86_64", (), "laptop", "locks/laptop.txt"),
    ("Darwin", "arm64", (), None, "locks/laptop-macos-arm64.txt"),
    ("Linux", "aarch64", (), None, "locks/laptop-linux-aarch64.txt"),
])
def test_install_picks_the_lock_of_the_machine_it_runs_on(tmp_path, system, machine, args, tier, lock):
    assert which_lock(tmp_path, system, machine, *args, tier=tier) == (0, [lock], [])
    assert (REPO / lock).exists()


@pytest.mark.parametrize("system, machine, args, tier, what", [
    ("Linux", "riscv64", (), None, "the laptop tier on Linux riscv64"),
    ("Darwin", "x86_64", (), None, "the laptop tier on Darwin x86_64"),
    ("Darwin", "arm64", ("--dev",), None, "the dev tier on Darwin arm64"),
    ("Linux", "aarch64", (), "cuda", "the cuda tier on Linux aarch64"),
    ("Linux", "x86_64", ("--dev",), "cuda", "the cuda tier with --dev on Linux x86_64"),
    ("Linux", "x86_64", (), "metal", "the metal tier on Linux x86_64"),
])
def test_install_on_a_platform_without_a_lock_fails_with_one_line_naming_it(tmp_path, system, machine, args,
                                                                               tier, what):
    assert which_lock(tmp_path, system, machine, *args, tier=tier) == (1, [], [
        f"install: no lock for {what}: locks/ has laptop, dev and cuda (SB_TIER=cuda) for Linux x86_64, "
        "laptop for Darwin arm64 and Linux aarch64"])


@pytest.mark.integration
def test_two_fresh_venvs_from_the_lock_are_one_toolchain(tmp_path):
    """tools/install.sh, as `make run` runs it, into two new venvs (the harness alone: the task
    packages are not part of the fingerprint); uv's cache makes the second and later builds a
    matter of seconds."""
    def build(name, before=None):
        venv = tmp_path / name
        env = sb_env(VENV=str(venv), SB_INSTALL_NO_APT="1", SB_INSTALL_TASKS="0", SB_INSTALL_NO_BYTECODE="1")
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
