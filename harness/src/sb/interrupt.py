"""Interruption: the first Ctrl-C or SIGTERM stops a command within seconds, whatever is
running, and leaves nothing behind.

Every process group the command starts (sandboxes, judges, external agents) and every
temporary folder it makes is tracked here. On the first SIGINT or SIGTERM the handler
kills every tracked group, removes every tracked folder, says what was kept and exits
130 (SIGINT) or 143 (SIGTERM) at once: in-flight model calls and gradings are abandoned,
never waited for. A sweep loses nothing that finished, because each finished task is
already in its results file (written atomically as it finishes): `--resume` continues. A
second signal while the first is handled exits immediately.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from contextlib import contextmanager

_lock = threading.Lock()
_groups: set = set()
_folders: set = set()
_state = {"handling": False, "note": "", "sandboxes_reaped": False}


def track_group(pgid: int) -> None:
    with _lock:
        _groups.add(pgid)


def untrack_group(pgid: int) -> None:
    with _lock:
        _groups.discard(pgid)


@contextmanager
def temporary_directory(prefix: str):
    """tempfile.TemporaryDirectory, removed by the interrupt handler too. A process killed
    outright (SIGKILL, a lost Ray worker) runs no handler: its folders carry an owner
    marker, and the next one made on this machine removes those whose owner is gone."""
    path = lasting_directory(prefix)
    try:
        yield path
    finally:
        remove_directory(path)


def lasting_directory(prefix: str) -> str:
    """A folder like temporary_directory's that outlives a block (a warm judge's): the
    caller removes it with remove_directory; an interrupt or the next command does otherwise."""
    reap_orphaned_folders()
    path = tempfile.mkdtemp(prefix=prefix)
    _mark_owner(path)
    with _lock:
        _folders.add(path)
    return path


def remove_directory(path: str) -> None:
    remove_marker_last(path)
    with _lock:
        _folders.discard(path)


def set_note(text: str) -> None:
    """What to tell the user about kept work if this command is interrupted."""
    _state["note"] = text


def install() -> None:
    """SIGINT and SIGTERM handlers for this command (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, _handle)
    signal.signal(signal.SIGTERM, _handle)


def _handle(signum, frame) -> None:
    code = 128 + signum
    if _state["handling"]:
        os._exit(code)
    _state["handling"] = True
    clean_up()
    name = "interrupted" if signum == signal.SIGINT else "terminated"
    note = f"; {_state['note']}" if _state["note"] else ""
    try:
        sys.stderr.write(f"sb: {name}: stopped every task in flight{note}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def clean_up() -> None:
    """Kill every tracked process group, then remove every tracked folder."""
    with _lock:
        groups, folders = list(_groups), list(_folders)
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for folder in folders:
        remove_marker_last(folder)


OWNER_MARKER = ".sb-owner"
UNMARKED_GRACE_S = 60  # far beyond the moment between mkdtemp and writing the marker, even on a loaded machine
UNKNOWN_START = "unknown"
MARKER_BYTES = 256     # an identity is under 80 bytes
CMDLINE_BYTES = 128 << 10  # a sandbox's command line is under 10 KiB (a torch task's judge: 6.5 KiB)
MAX_FOLDERS_NAMED = 16   # a sandbox names one grading's folder; a command naming more is none of ours


def _process_identity(pid: int) -> str | None:
    """pid, start time and pid namespace: a reused pid never passes for the owner, and a
    folder made in another container is never judged from this one. None: no such process;
    a start time of "unknown": /proc could not be read (out of descriptors, say), so the
    process may well live."""
    try:
        start = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[19]
    except (FileNotFoundError, ProcessLookupError):
        return _identity_without_proc(pid)
    except (OSError, IndexError):
        return f"{pid} {UNKNOWN_START} unknown"
    try:
        namespace = os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        namespace = "unknown"
    return f"{pid} {start} {namespace}"


def _identity_without_proc(pid: int) -> str | None:
    if os.path.isdir("/proc/self"):
        return None  # /proc exists and has no such process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return f"{pid}"


def _mark_owner(path: str) -> None:
    """No marker when this process cannot read its own identity: an unmarked folder with
    anything in it is never removed, a wrongly marked one would be."""
    identity = _process_identity(os.getpid())
    if identity and UNKNOWN_START not in identity.split(" ")[1:2]:
        with open(os.path.join(path, OWNER_MARKER), "w") as handle:
            handle.write(identity)


def reap_orphaned_folders(parent: str | None = None) -> list:
    """Remove the `sb-*` folders under `parent` (the temporary folder) whose owning process
    is gone from this machine's pid namespace; returns what was removed. Folders owned by a
    live process or another namespace are never touched, nor is a folder without a marker
    unless it is empty and has not changed for UNMARKED_GRACE_S (what a process killed
    between making the folder and marking it, or between unmarking and removing it, leaves)."""
    parent = parent or tempfile.gettempdir()
    namespace = _own_namespace()
    removed: list[str] = []
    with _opened_directory(parent) as parent_fd:
        for name in _own_folder_names(parent_fd) if parent_fd is not None else []:
            if _reap_one(parent_fd, name, namespace):
                removed.append(os.path.join(parent, name))
    if removed or not _state["sandboxes_reaped"]:
        _state["sandboxes_reaped"] = True
        kill_abandoned_sandboxes(parent, namespace)
    return removed


def _own_folder_names(parent_fd: int) -> list:
    """The `sb-*` entries of the parent that are folders of this user (never a link): what
    another user made there, however it looks, is theirs to clean."""
    names = []
    try:
        with os.scandir(parent_fd) as entries:
            for entry in entries:
                try:
                    if entry.name.startswith("sb-") and entry.is_dir(follow_symlinks=False) \
                            and entry.stat(follow_symlinks=False).st_uid == os.geteuid():
                        names.append(entry.name)
                except OSError:
                    continue
    except OSError:
        return []
    return names


def _reap_one(parent_fd: int, name: str, namespace: str | None) -> bool:
    """Remove the folder `name` if it is abandoned; whether it was. Everything is done
    through a descriptor of the folder opened once, never through its path again, so a
    name swapped for a link to elsewhere meanwhile leads nowhere."""
    with _opened_folder(parent_fd, name) as fd:
        if fd is None:
            return False
        try:
            owner = _read_marker(fd)
        except OSError:
            return _remove_if_abandoned(parent_fd, name, fd)
        if not _orphaned(owner, namespace):
            return False
        _empty_marker_last(fd)
        _remove_entry(parent_fd, name, fd)  # a writer still there defeats it: the next reap finishes
        return True


@contextmanager
def _opened_directory(path: str):
    """A descriptor of the directory `path`, closed after; None when it cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        yield None
        return
    try:
        yield fd
    finally:
        os.close(fd)


@contextmanager
def _opened_folder(parent_fd: int, name: str):
    """A descriptor of the folder `name` of this user, never followed through a link; None
    when it is not one (gone, a link, another user's)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
    except OSError:
        yield None
        return
    try:
        yield fd if os.fstat(fd).st_uid == os.geteuid() else None
    finally:
        os.close(fd)


def _own_namespace() -> str | None:
    own = (_process_identity(os.getpid()) or "").split(" ")
    return own[2] if len(own) >= 3 else None


def kill_abandoned_sandboxes(parent: str, namespace: str | None = None) -> list[int]:
    """Kill each sandbox process (bubblewrap, the judge or worker program) whose command line
    names an `sb-*` folder under `parent` that is gone or whose owner is gone; returns their
    pids. A grader killed while bubblewrap sets a sandbox up leaves the sandbox's first
    process blocked for good on a signal from the bubblewrap that died with the grader; no
    death signal reaches it. Run by a process's first reap and by any reap that removed a folder.

    Anything can be named so: a sandboxed solution may start a process called bwrap that
    names a folder of its choosing. So every process is held by a pid file descriptor
    before its command line is read (a pid reused meanwhile is never signalled), and a
    process whose view of the files is not this one's (another mount namespace or root)
    is judged by whether the folder exists where it runs, never by reading what it holds."""
    killed: list[int] = []
    if _proc_is_not_ours():
        return killed
    namespace = namespace or _own_namespace()
    prefix = os.path.join(parent, "sb-").encode()
    own_view = _view("self")
    for entry in _listdir_quietly("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        with _held(int(entry)) as held:
            if held is None:
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    argv = handle.read(CMDLINE_BYTES).split(b"\0")
            except OSError:
                continue
            folders = _folders_named(argv, prefix) if argv and _is_sandbox(argv) else set()
            if not folders or len(folders) > MAX_FOLDERS_NAMED:
                continue
            # abandoned as this process sees the folder and as the sandbox does: a container's
            # sandbox names its own /tmp, which this command cannot see
            foreign = _view(entry) != own_view
            if not any(_abandoned(f, namespace) and (not foreign or _gone_where_it_runs(entry, f)) for f in folders):
                continue
            if held.kill():
                killed.append(int(entry))
    return killed


def _proc_is_not_ours() -> bool:
    """/proc mounted for another pid namespace (a `unshare --pid` without its own /proc): its
    numbers are not the pids this process can hold or signal."""
    try:
        return os.readlink("/proc/self") != str(os.getpid())
    except OSError:
        return True


def _view(pid: str) -> tuple | None:
    """A process's view of the files: its mount namespace and its root directory."""
    try:
        root = os.stat(f"/proc/{pid}/root")
        return os.readlink(f"/proc/{pid}/ns/mnt"), root.st_dev, root.st_ino
    except OSError:
        return None


def _gone_where_it_runs(pid: str, folder: str) -> bool:
    """Whether `folder` is missing in the process's own view: looked up, never opened (what
    it holds may be a FIFO or an endless file its owner planted)."""
    try:
        os.lstat(f"/proc/{pid}/root{folder}")
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


class _Held:
    """A process held by its pid file descriptor where the kernel has them (Linux 5.3):
    signalled only if it is the very process that was looked at."""

    def __init__(self, pid: int, pidfd: int | None):
        self.pid, self.pidfd = pid, pidfd

    def kill(self) -> bool:
        try:
            if self.pidfd is None:
                os.kill(self.pid, signal.SIGKILL)
            else:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return False
        return True


@contextmanager
def _held(pid: int):
    """The process `pid` held (None when it is already gone)."""
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            yield None
            return
        except OSError as exc:
            if exc.errno not in (errno.ENOSYS, errno.EPERM):
                yield None
                return
    try:
        yield _Held(pid, pidfd)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _is_sandbox(argv: list[bytes]) -> bool:
    """bubblewrap, or Python running the judge or worker program (never another command
    that merely names one of those files, like an editor)."""
    program = os.path.basename(argv[0])
    return program == b"bwrap" or (program.startswith(b"python") and any(
        a.endswith((b"/judge_process.py", b"/worker_process.py")) for a in argv[1:]))


def _folders_named(argv: list[bytes], prefix: bytes) -> set[str]:
    """The `sb-*` folders under the reaped parent that `argv` names: each path that starts
    an argument or follows a `=` or `:` (never a longer path that merely contains the
    parent's, like another command's `TMPDIR=/home/x/tmp` under a reap of `/tmp`). It
    stops past MAX_FOLDERS_NAMED: the caller then judges the command none of ours."""
    named: set[str] = set()
    for arg in argv:
        if prefix not in arg:
            continue
        for piece in arg.replace(b"=", b":").split(b":"):
            if piece.startswith(prefix):
                named.add(os.fsdecode(prefix + piece[len(prefix):].split(b"/", 1)[0]))
                if len(named) > MAX_FOLDERS_NAMED:
                    return named
    return named


def _abandoned(folder: str, namespace: str | None) -> bool:
    """Gone, or a folder of this user marked by an owner that is gone; a folder without a
    marker may be being made, and another user's (or a link) is not this reap's to judge."""
    try:
        os.lstat(folder)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    parent, name = os.path.split(folder)
    with _opened_directory(parent) as parent_fd:
        if parent_fd is None:
            return False
        with _opened_folder(parent_fd, name) as fd:
            try:
                return fd is not None and _orphaned(_read_marker(fd), namespace)
            except OSError:
                return False


def _read_marker(folder_fd: int) -> str:
    """The owner marker's text, read so that nothing planted in its place (by another user,
    or a sandbox's own /tmp) blocks, floods or crashes the reader: never through a symlink,
    only a regular file of at most MARKER_BYTES, undecodable bytes replaced. Raises
    FileNotFoundError where there is none, another OSError where it cannot be read so."""
    fd = os.open(OWNER_MARKER, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = os.read(fd, MARKER_BYTES + 1)
        if len(data) > MARKER_BYTES:
            raise OSError(errno.EFBIG, "longer than any marker")
        return data.decode("utf-8", "replace").strip()
    finally:
        os.close(fd)


def _remove_if_abandoned(parent_fd: int, name: str, fd: int) -> bool:
    """rmdir removes only an empty folder, atomically: nothing in one is ever lost, and a
    maker that stalled past the grace fails loudly when it writes its marker."""
    try:
        if time.time() - os.fstat(fd).st_mtime < UNMARKED_GRACE_S:
            return False
    except OSError:
        return False
    return _remove_entry(parent_fd, name, fd)


def _remove_entry(parent_fd: int, name: str, fd: int) -> bool:
    """rmdir of `name`, only while it is still the folder `fd` holds."""
    try:
        if not os.path.samestat(os.stat(name, dir_fd=parent_fd, follow_symlinks=False), os.fstat(fd)):
            return False
        os.rmdir(name, dir_fd=parent_fd)
    except OSError:
        return False
    return True


def remove_marker_last(folder: str) -> None:
    """Remove `folder` (one of this process's own), its owner marker last."""
    parent, name = os.path.split(folder)
    with _opened_directory(parent) as parent_fd:
        if parent_fd is None:
            return
        with _opened_folder(parent_fd, name) as fd:
            if fd is not None:
                _empty_marker_last(fd)
                _remove_entry(parent_fd, name, fd)


def _empty_marker_last(fd: int) -> None:
    """Empty the folder `fd` holds, its owner marker last: a removal that a process still
    writing there defeats leaves a folder the next reap recognises, never an unmarked one
    kept for good."""
    for name in _listdir_quietly(fd):
        if name == OWNER_MARKER:
            continue
        try:
            is_folder = stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
        except OSError:
            continue
        if is_folder:
            shutil.rmtree(name, ignore_errors=True, dir_fd=fd)
        else:
            _unlink_quietly(name, fd)
    if len(_listdir_quietly(fd)) <= 1:
        _unlink_quietly(OWNER_MARKER, fd)


def _unlink_quietly(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _listdir_quietly(folder) -> list:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _orphaned(owner: str, namespace: str | None) -> bool:
    parts = owner.split(" ")
    if not (parts[0].isascii() and parts[0].isdigit()) or (len(parts) >= 3 and namespace and parts[2] != namespace):
        return False
    try:
        current = _process_identity(int(parts[0]))
    except (ValueError, OverflowError):  # not a pid this machine can have: nothing to judge by
        return False
    if current is None:
        return True
    now = current.split(" ")
    return now[1:2] != [UNKNOWN_START] and now[:2] != parts[:2]
