"""Interruption: the first Ctrl-C or SIGTERM stops a command within seconds, whatever is
running, and leaves nothing behind.

Every process group the command starts (sandboxes, runners, external agents) and every
temporary folder it makes is tracked here. On the first SIGINT or SIGTERM the handler
kills every tracked group, removes every tracked folder, says what was kept and exits
130 (SIGINT) or 143 (SIGTERM) at once: in-flight model calls and gradings are abandoned,
never waited for. A sweep loses nothing that finished, because each finished task is
already in its results file (written atomically as it finishes): `--resume` continues. A
second signal while the first is handled exits immediately.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
from contextlib import contextmanager

_lock = threading.Lock()
_groups: set = set()
_folders: set = set()
_state = {"handling": False, "note": ""}


def track_group(pgid: int) -> None:
    with _lock:
        _groups.add(pgid)


def untrack_group(pgid: int) -> None:
    with _lock:
        _groups.discard(pgid)


@contextmanager
def temporary_directory(prefix: str):
    """tempfile.TemporaryDirectory, removed by the interrupt handler too."""
    path = tempfile.mkdtemp(prefix=prefix)
    with _lock:
        _folders.add(path)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
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
        shutil.rmtree(folder, ignore_errors=True)
