"""Where scratchbench keeps what it caches between commands: `$SB_CACHE_DIR`, else
`$XDG_CACHE_HOME/scratchbench`, else `~/.cache/scratchbench`. Outside every sandbox; each
cache that lives here treats a corrupt or foreign entry as missing, never as true.

A module of its own, importing nothing but os and pathlib: `sb grade`'s head start reads
its remembered judge from here before the command imports anything else (sb/entry.py).
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    explicit = os.environ.get("SB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "scratchbench"
