"""`--isolation bwrap` (the default on Linux): graded code in a bubblewrap jail.

New user, pid, network, ipc and uts namespaces (no route out, the host's loopback and
abstract sockets unreachable); an allow-listed filesystem: the system's libraries, a few
files of /etc, and only what the job names readable or writable (the interpreter, the
distributions it needs, its own grading folders); its own session keyring; rlimits on
memory, processes, file size and CPU time; no capabilities and no nested user namespace;
die-with-parent; the whole tree killed at the time limit. See docs/sandbox.md.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import subprocess
import tempfile
from contextlib import contextmanager, suppress
from functools import lru_cache
from pathlib import Path

from sb.sandbox.base import Completed, Job, Sandbox
from sb.sandbox.process import closed_unless_started, limits_preexec, run_process

SCRATCH_MOUNTS = ("/tmp", "/var/tmp", "/run", "/dev/shm")


class BwrapSandbox(Sandbox):
    name = "bwrap"
    keeps_warm_judges = True
    private_scratch = SCRATCH_MOUNTS  # each a fresh tmpfs
    description = "bubblewrap: no network, read-only root, only the grading directory writable"

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return _why_bwrap_cannot_run()

    def run(self, job: Job) -> Completed:
        if not job.private_writes_mb:
            with closed_unless_started(job):
                argv, preexec = bwrap_argv(job, hidden_paths(job)), limits_preexec(job)
            return run_process(argv, job, "bwrap", preexec=preexec)
        with closed_unless_started(job), private_copies(job) as (copies, fds):
            argv, preexec = bwrap_argv(job, hidden_paths(job), copies), limits_preexec(job)
            job = dataclasses.replace(job, pass_fds=(*job.pass_fds, *fds))
            fds.clear()  # handed to run_process, which closes what it passes: never closed twice
        return run_process(argv, job, "bwrap", preexec=preexec)


@lru_cache(maxsize=1)
def _why_bwrap_cannot_run() -> str | None:
    """Whether bwrap exists and can create its namespaces here (a container may forbid it)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    trial = [exe, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
             "true"]
    try:
        done = subprocess.run(trial, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    if done.returncode != 0:
        first = (done.stderr.decode(errors="replace").strip().splitlines() or ["unknown error"])[0]
        return f"bwrap cannot create namespaces here: {first}"
    return None


SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd",
             "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives")
SCRATCH_MB = {"/tmp": 512, "/var/tmp": 16, "/run": 16, "/dev/shm": 256}  # all in memory: each one bounded


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


def bwrap_argv(job: Job, hidden: list, copies: list | None = None) -> list:
    """An allow-list, never the host's root: the system's libraries, a few files of /etc,
    the job's readable and writable paths and its devices. No checkout, no .git, no $HOME,
    no host sockets (/run, /tmp and /var are fresh or absent). With `copies` (a private
    job) the writable folders are copies on the sized /tmp, never the host's folders."""
    argv = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
    argv += _no_privileges()
    argv += _system_mounts()
    argv += ["--dev", "/dev", "--proc", "/proc"]
    for mount in SCRATCH_MOUNTS:
        size = job.private_writes_mb if (mount == "/tmp" and job.private_writes_mb) else SCRATCH_MB[mount]
        argv += ["--size", str(size * 1024 * 1024), "--tmpfs", mount]
    inside_mask = [p for p in job.readable if any(_under(p, m) for m in job.masked)]
    argv += _ro_binds(p for p in job.readable if p not in inside_mask)
    for path in job.masked:
        argv += ["--tmpfs", str(path)]
    argv += _ro_binds(inside_mask)
    for path in hidden:
        argv += ["--tmpfs", str(path)] if Path(path).is_dir() else ["--ro-bind", "/dev/null", str(path)]
    argv += _writable_mounts(job, copies)
    for device in job.devices:
        argv += ["--dev-bind", str(device), str(device)]
    if job.devices:
        argv += ["--ro-bind", "/sys", "/sys"]
    argv += ["--remount-ro", "/"]  # the folders bwrap made for mount points are not a place to write
    argv += ["--chdir", str(job.cwd), "--"]
    return argv + list(job.argv)


@lru_cache(maxsize=1)
def _no_privileges() -> tuple:
    """No capabilities inside, and no user namespace of its own to regain them in. Run as
    root, bwrap would otherwise keep every capability in the sandbox's user namespace,
    and graded code could remount its read-only binds writable or unmount a mask."""
    flags: tuple[str, ...] = ("--cap-drop", "ALL")
    if _disables_userns():  # bubblewrap 0.8 and later
        flags = ("--unshare-user", "--disable-userns", *flags)
    return flags


USERNS_YES = b"--disable-userns\n"


def _disables_userns() -> bool:
    """Whether the installed bwrap has --disable-userns, from its --help. A yes is kept in
    the cache folder under the binary's identity (device, inode, size, modification time:
    an upgrade is asked again), so a command does not start bwrap once more before its
    first sandbox (`sb grade`'s head start waits on it, sb/entry.py). Only a yes is kept:
    a file there can add the option (a bwrap without it then fails at once), never take it
    away. Never raises: an unreadable or unwritable cache costs the question, nothing else."""
    exe = shutil.which("bwrap") or "bwrap"
    kept = _kept_answer(exe)
    if kept is not None and _says_yes(kept):
        return True
    try:
        usage = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    found = "--disable-userns" in usage
    if found and kept is not None:
        _keep_yes(kept)
    return found


def _kept_answer(exe: str) -> Path | None:
    """Where a yes for `exe` is kept; None when it cannot be looked at."""
    try:
        found = os.stat(exe)
        from sb.cache import cache_dir
        folder = cache_dir() / "bwrap"
    except (OSError, ValueError):
        return None
    return folder / f"disable-userns-{found.st_dev}-{found.st_ino}-{found.st_size}-{found.st_mtime_ns}"


def _says_yes(path: Path) -> bool:
    """The kept file is a regular file holding exactly USERNS_YES (never a link followed, never a
    FIFO waited on, never more than a few bytes read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(USERNS_YES) + 1) == USERNS_YES
    except OSError:
        return False
    finally:
        os.close(fd)


def _keep_yes(path: Path) -> None:
    """Written whole or not at all: a reader sees no file, or one holding USERNS_YES. The
    partial file is a new one of its own (never a link followed or a FIFO waited on)."""
    partial = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "wb") as file:
            file.write(USERNS_YES)
        os.replace(partial, path)
        partial = None
    except OSError:
        pass  # an unwritable cache costs the question next time, nothing else
    finally:
        if partial is not None:
            with suppress(OSError):
                os.unlink(partial)


def _writable_mounts(job: Job, copies: list | None) -> list:
    if copies is None:
        return [arg for path in job.writable for arg in ("--bind", str(path), str(path))]
    assert job.private_writes_mb is not None  # copies are made only for a job that sets it
    argv = []
    for path in job.writable:
        if not _under(path, "/tmp"):  # outside the sized /tmp: a sized file system of its own
            argv += ["--size", str(job.private_writes_mb * 1024 * 1024), "--tmpfs", str(path)]
    for kind, fd, path in copies:
        argv += ["--dir", path] if kind == "dir" else ["--file", str(fd), path]
    return argv


@contextmanager
def private_copies(job: Job):
    """Each writable folder's directories and files, as bwrap's `--dir` and `--file FD`
    operations (bwrap copies every file's bytes from its descriptor into the sandbox). The
    descriptors left in `fds` at the end are closed; a caller that hands them to a process
    empties it. A descriptor closed twice closes whatever another thread (a concurrent
    grading) has opened under the same number since: its Popen then fails with EBADF."""
    copies: list[tuple[str, int | None, str]] = []  # (kind, descriptor of a file, path)
    fds: list[int] = []
    try:
        for root in job.writable:
            copies.append(("dir", None, str(root)))
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames.sort()
                copies += [("dir", None, os.path.join(dirpath, name)) for name in dirnames]
                for name in sorted(filenames):
                    fd = os.open(os.path.join(dirpath, name), os.O_RDONLY | os.O_NOFOLLOW)
                    copies.append(("file", fd, os.path.join(dirpath, name)))
                    fds.append(fd)
        yield copies, fds
    finally:
        for fd in fds:
            os.close(fd)


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
