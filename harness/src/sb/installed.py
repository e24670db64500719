"""Facts read from every installed distribution's metadata, kept on disk between commands.

Reading them parses the metadata of every distribution (about a second each time, on a
checkout with every task installed), and a fresh `sb grade` needs three of them: which
distributions provide an import name, what a sandboxed process may read (the view of
sb/sandbox/view.py, built from those and the distributions' file lists) and every
distribution's version (the toolchain fingerprint). They change only when something is installed or
removed, which changes the listing, and so the modification time, of a folder on
sys.path: the cache key is those folders and their times, beside the interpreter. The
cache lives where the reference ids' does (`sb.cache.cache_dir`); a missing, damaged
or mistyped entry is computed again and rewritten, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path


def cached(name: str, compute: Callable[[], dict], valid: Callable[[dict], bool]) -> dict:
    """`compute()`'s mapping, read back from disk while nothing was installed or removed."""
    path = cache_path(name)
    try:
        found = json.loads(path.read_text())
        if isinstance(found, dict) and valid(found):
            return found
    except (OSError, ValueError):
        pass
    found = compute()
    from sb.results import write_atomic
    try:
        write_atomic(path, found)
    except OSError:
        pass  # a read-only cache costs the parse next time, nothing else
    return found


def cache_path(name: str) -> Path:
    from sb.cache import cache_dir
    stamp = [sys.executable, *(f"{p}\0{os.stat(p).st_mtime_ns}" for p in import_folders())]
    key = hashlib.sha256("\n".join(stamp).encode()).hexdigest()[:24]
    return cache_dir() / "installed" / f"{name}-{key}.json"


def import_folders() -> list[str]:
    """The folders on sys.path: what an install or removal changes."""
    return [p for p in sys.path if p and os.path.isdir(p)]


def strings_to_strings(found: dict) -> bool:
    return all(isinstance(k, str) and isinstance(v, str) for k, v in found.items())


def strings_to_string_lists(found: dict) -> bool:
    return all(isinstance(k, str) and isinstance(v, list) and all(isinstance(d, str) for d in v)
               for k, v in found.items())
