"""`--isolation bwrap` (the default on Linux): graded code in a bubblewrap jail.

New user, pid, network, ipc and uts namespaces (no route out, the host's loopback and
abstract sockets unreachable); an allow-listed filesystem: the system's libraries, a few
files of /etc, and only what the job names readable or writable (the interpreter, the
distributions it needs, its own grading folders); its own session keyring; rlimits on
memory, processes, file size and CPU time; die-with-parent; the whole tree killed at the
time limit. See docs/sandbox.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from sb.hookspecs import hookimpl
from sb.sandbox.base import Completed, Job, Sandbox, limits_preexec, run_process

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


SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd",
             "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives")
SCRATCH_MOUNTS = ("/tmp", "/var/tmp", "/run", "/dev/shm")


@lru_cache(maxsize=1)
def bwrap_version() -> str | None:
    """`bwrap --version`'s answer, or None when bubblewrap is not installed."""
    exe = shutil.which("bwrap")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.split()[-1] if out else "unknown"


def bwrap_argv(job: Job, hidden: list) -> list:
    """An allow-list, never the host's root: the system's libraries, a few files of /etc,
    the job's readable and writable paths and its devices. No checkout, no .git, no $HOME,
    no host sockets (/run, /tmp and /var are fresh or absent)."""
    argv = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
    argv += _system_mounts()
    argv += ["--dev", "/dev", "--proc", "/proc"]
    for mount in SCRATCH_MOUNTS:
        argv += ["--tmpfs", mount]
    inside_mask = [p for p in job.readable if any(_under(p, m) for m in job.masked)]
    argv += _ro_binds(p for p in job.readable if p not in inside_mask)
    for path in job.masked:
        argv += ["--tmpfs", str(path)]
    argv += _ro_binds(inside_mask)
    for path in hidden:
        argv += ["--tmpfs", str(path)] if Path(path).is_dir() else ["--ro-bind", "/dev/null", str(path)]
    for path in job.writable:
        argv += ["--bind", str(path), str(path)]
    for device in job.devices:
        argv += ["--dev-bind", str(device), str(device)]
    if job.devices:
        argv += ["--ro-bind", "/sys", "/sys"]
    argv += ["--remount-ro", "/"]  # the folders bwrap made for mount points are not a place to write
    argv += ["--chdir", str(job.cwd), "--"]
    return argv + list(job.argv)


@lru_cache(maxsize=1)
def _system_mounts() -> tuple:
    argv = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    argv += ["--dir", "/etc"]
    argv += _ro_binds(p for p in ETC_FILES if os.path.exists(p))
    return tuple(argv)


def _ro_binds(paths) -> list:
    argv = []
    for path in paths:
        argv += ["--ro-bind", str(path), str(path)]
    return argv


def _under(path, folder) -> bool:
    path, folder = str(path), str(folder)
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def hidden_paths(job: Job) -> list:
    """Paths the job asks to hide that its allow-list would otherwise show."""
    shown = [*job.readable, *job.writable]
    return sorted(p for p in job.hidden if Path(p).exists() and any(_under(p, s) for s in shown))


@hookimpl
def register_sandboxes(register):
    register(BwrapSandbox)
