"""`--isolation bwrap` (the default on Linux): graded code in a bubblewrap jail.

New user, pid, network, ipc and uts namespaces (no route out, the host's loopback
unreachable); the root filesystem read-only; only the grading directory writable; every
installed task package and the repository's tasks/ replaced by empty folders; the usual
credential files of the invoking user hidden; rlimits on memory, processes, file size and
CPU time; die-with-parent; the whole tree killed at the time limit. See docs/sandbox.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from sb.hookspecs import hookimpl
from sb.sandbox.base import Completed, Job, Sandbox, limits_preexec, run_process

CREDENTIAL_PATHS = (".ssh", ".aws", ".config", ".gnupg", ".docker", ".kube", ".azure", ".netrc",
                    ".git-credentials", ".pypirc", ".npmrc", ".anthropic", ".openai", ".huggingface",
                    ".cache/huggingface")


class BwrapSandbox(Sandbox):
    name = "bwrap"
    description = "bubblewrap: no network, read-only root, only the grading directory writable"

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return _probe()

    def run(self, job: Job) -> Completed:
        argv = bwrap_argv(job, hidden_paths(job))
        return run_process(argv, job, "bwrap", preexec=limits_preexec(job))


@lru_cache(maxsize=1)
def _probe() -> str | None:
    """Whether bwrap exists and can create its namespaces here (a container may forbid it)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    probe = [exe, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
             "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    if done.returncode != 0:
        first = (done.stderr.decode(errors="replace").strip().splitlines() or ["unknown error"])[0]
        return f"bwrap cannot create namespaces here: {first}"
    return None


def bwrap_argv(job: Job, hidden: list) -> list:
    argv = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm",
            "--tmpfs", "/run", "--tmpfs", "/var/tmp"]
    for path in _python_paths_under_scratch():
        argv += ["--ro-bind", path, path]
    for path in hidden:
        argv += ["--tmpfs", str(path)] if Path(path).is_dir() else ["--ro-bind", "/dev/null", str(path)]
    grading_root = Path(job.cwd).parent
    argv += ["--ro-bind", str(grading_root), str(grading_root)]
    for path in job.writable:
        argv += ["--bind", str(path), str(path)]
    argv += ["--chdir", str(job.cwd), "--"]
    return argv + list(job.argv)


SCRATCH_MOUNTS = ("/tmp", "/var/tmp", "/run", "/dev/shm")


def _python_paths_under_scratch() -> list:
    """The interpreter and its import paths, where they live under a folder replaced by a
    tmpfs inside (a virtual environment in /tmp): bound back read-only so Python still runs."""
    import sys
    candidates = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable)), *sys.path}
    return sorted(p for p in candidates if p and os.path.isdir(p)
                  and any(p == m or p.startswith(m + "/") for m in SCRATCH_MOUNTS))


def hidden_paths(job: Job) -> list:
    """Task packages, the repository's tasks/, and credential files: never visible inside."""
    paths = set(job.hidden) | set(task_package_paths())
    home = Path(os.path.expanduser("~"))
    paths |= {home / name for name in CREDENTIAL_PATHS if (home / name).exists()}
    grading_root = Path(job.cwd).parent.resolve()
    kept = sorted(p for p in paths if p.exists() and not _contains(p, grading_root))
    return [p for p in kept if not any(_contains(q, p) for q in kept if q != p)]  # an ancestor hides it already


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer.resolve() or outer.resolve() in inner.parents


@lru_cache(maxsize=1)
def task_package_paths() -> tuple:
    """The folder of every installed task package, and the tasks/ folder of a checkout."""
    from importlib import resources
    from sb.catalog import load_tasks
    found = set()
    for task in load_tasks().values():
        root = Path(str(resources.files(task.package)))
        found.add(root)
        for parent in list(root.parents)[:4]:
            if parent.name == "tasks" and (parent.parent / "harness").is_dir():
                found.add(parent)
    return tuple(sorted(found))


@hookimpl
def register_sandboxes(register):
    register(BwrapSandbox)
