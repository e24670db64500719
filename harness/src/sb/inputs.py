"""Checks on what the user typed, made before anything is paid for: one line each.

Selections mean what they say (an empty or comma-only `--tasks` is a mistake, not "all";
a duplicate is a mistake, not a task graded three times), names are not empty, numbers are
finite, and every place the command will write is writable before the first model call.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from sb.errors import SbError


def task_selection(text: str) -> list | None:
    """None for `all`; else the slugs, refusing empty, blank and duplicate entries."""
    if text.strip() == "all":
        return None
    slugs = [s.strip() for s in text.split(",")]
    if not any(slugs):
        raise SbError(f"--tasks {text!r} names no task (give slugs separated by commas, or all)")
    if not all(slugs):
        raise SbError(f"--tasks {text!r} has an empty entry")
    seen = set()
    for slug in slugs:
        if slug in seen:
            raise SbError(f"--tasks names {slug!r} twice (each task is attempted once per draw; use --repeat)")
        seen.add(slug)
    return slugs


def model_name(text: str) -> str:
    prefix, sep, rest = text.partition(":")
    if not text.strip() or (sep and not rest.strip()):
        raise SbError(f"--model {text!r}: the model name is empty" + (f" (write {prefix}:NAME)" if sep else ""))
    return text


def finite(name: str, value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise SbError(f"{name} must be a finite number, not {value}")
    return value


def writable_dir(path: Path, option: str) -> Path:
    """Create `path` if needed and prove a file can be written there, or one line why not."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".sb-write-check-"):
            pass
    except OSError as exc:
        raise SbError(f"{option} {path}: cannot write there ({exc.strerror or exc})") from None
    return path


def no_kept_folders(keep: Path, slugs: list) -> None:
    """`--keep DIR` without --resume: no chosen task's folder there (DIR/SLUG, or
    DIR/MODEL-dN/SLUG for several draws) already holds files, which the run would write
    its starter over and leave mixed with its own."""
    parents = [Path(keep)] + sorted(p for p in Path(keep).iterdir() if p.is_dir() and not p.is_symlink())
    for parent in parents:
        for slug in slugs:
            folder = parent / slug
            if folder.exists() and not folder.is_dir() or folder.is_dir() and any(folder.iterdir()):
                raise SbError(f"--keep {keep}: {folder} holds files from an earlier run; choose another folder or "
                              "remove it (--resume continues the sweep that wrote it)")


def base_url(url: str) -> str:
    """An http(s) URL with a host, or one line saying what is wrong with it."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https"):
        raise SbError(f"--base-url {url!r}: must start with http:// or https://")
    if not parsed.hostname:
        raise SbError(f"--base-url {url!r}: has no host")
    try:
        _ = parsed.port  # the property raises ValueError for a port that is not a number
    except ValueError:
        raise SbError(f"--base-url {url!r}: the port is not a number") from None
    return url


def require_reachable(url: str, timeout_s: float = 10.0) -> None:
    """One request before the first task: a closed port or a dead host stops the run here."""
    import socket
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname, port), timeout=timeout_s):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SbError(f"--base-url {url}: cannot connect to {parsed.hostname}:{port} ({reason}); "
                      "is the server running?") from None
