"""The toolchain a grading ran on, and its fingerprint: two machines that print the same
fingerprint resolve the same interpreter and the same distributions, so their verdicts
are comparable. (`sb env` prints the whole document.)"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from functools import lru_cache
from importlib import metadata

PINNED_THREAD_SETTINGS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                          "PYTHONHASHSEED")


@lru_cache(maxsize=1)
def distributions() -> dict:
    """Every distribution installed in the grading environment: name -> version (kept on
    disk while nothing is installed or removed: sb/installed.py)."""
    from sb import installed
    return dict(sorted(installed.cached("versions", _read_versions, installed.strings_to_strings).items()))


def _read_versions() -> dict:
    found = {}
    for dist in metadata.distributions():
        name = (dist.metadata.get_all("Name") or [""])[0].strip()
        if name:
            found[name.lower().replace("_", "-")] = dist.version
    return found


def _graded_distributions() -> dict:
    """What a grading can import: everything but the task packages themselves (whose
    content is hashed per task) and the harness (whose version is recorded on its own)."""
    return {k: v for k, v in distributions().items() if not k.startswith("sb-task-")}


@lru_cache(maxsize=1)
def document() -> dict:
    facts = _facts()
    return {"python": facts["python"], "implementation": facts["implementation"], "platform": platform.platform(),
            "machine": facts["machine"], "cpu_count": os.cpu_count(),
            **{k: facts[k] for k in ("thread_settings", "sandbox", "accelerator", "distributions")}}


@lru_cache(maxsize=1)
def _facts() -> dict:
    """The document less what only describes the machine. Not platform.platform(): it runs
    `uname -p` in a child process, and a fresh `sb grade` keys its cached reference ids
    with the fingerprint before its grading can start."""
    from sb.grading import PINNED_ENV
    from sb.hardware import accelerator_summary
    from sb.sandbox.bwrap import bwrap_version
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "machine": platform.machine(), "thread_settings": {k: PINNED_ENV[k] for k in PINNED_THREAD_SETTINGS},
            "sandbox": {"bwrap": bwrap_version()}, "accelerator": accelerator_summary(),
            "distributions": _graded_distributions()}


def _fingerprinted(doc: dict) -> dict:
    """What decides a verdict: not the CPU count, the kernel build string, or the harness's
    own patch version of unrelated commands."""
    return {k: doc[k] for k in ("python", "implementation", "machine", "thread_settings", "sandbox", "accelerator",
                                "distributions")} | {"system": platform.system(), "executable": sys.implementation.name}


@lru_cache(maxsize=1)
def fingerprint() -> str:
    blob = json.dumps(_fingerprinted(_facts()), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
