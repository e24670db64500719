"""The reference's test ids, graded once per task content and toolchain, cached on disk.

Every grading of a solution compares its record with these ids, so they must come from
the reference graded on this very toolchain. A sweep, `sb grade`, `sb mutants` and a
second sweep of another model share one cache entry instead of grading the reference
again each time. The cache lives outside every sandbox (`$SB_CACHE_DIR`, else
`$XDG_CACHE_HOME/scratchbench`, else `~/.cache/scratchbench`); a corrupt or foreign entry
is ignored and rewritten, never trusted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from sb.cache import cache_dir
from sb.outcome import Outcome, Status, is_evidence


@dataclass(frozen=True)
class ReferenceIds:
    """What grading the reference gave: its test ids, or the failure that makes the task
    ungradable here (then `ids` is None and `failure` says why)."""

    ids: list | None
    failure: Outcome | None = None
    outcome: Outcome | None = None  # the reference's own Outcome, when it was graded now

    @property
    def ok(self) -> bool:
        return self.ids is not None


def cache_key(task) -> str:
    """The task's content, the toolchain and the grader: a change to any can change the ids."""
    from sb.grading import grader_hash
    from sb.toolchain import fingerprint
    key = f"{task.slug}\0{task.content_hash}\0{fingerprint()}\0{grader_hash()}"
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def _entry_path(task) -> Path:
    return cache_dir() / "expected" / f"{task.slug}-{cache_key(task)}.json"


def cached_ids(task) -> list | None:
    """The reference's ids for this task content and toolchain, if they were cached."""
    return _read(_entry_path(task), task)


def from_cache(task) -> ReferenceIds | None:
    """The cached ids as a ReferenceIds, or None when none are cached for this task."""
    ids = cached_ids(task)
    return None if ids is None else ReferenceIds(ids)


def reference_ids(task, sandbox, use_cache: bool = True) -> ReferenceIds:
    """The ids from the cache, or from grading the reference now (and caching them)."""
    cached = from_cache(task) if use_cache else None
    if cached is not None:
        return cached
    from sb.grading import grade
    return settle(task, grade(task, task.reference_files, sandbox))


def settle(task, reference: Outcome) -> ReferenceIds:
    """What the reference graded now gives, wherever it was graded (here, or on an
    executor's node): its ids, cached, or why nothing of the task can be graded here."""
    if reference.passed:
        record(task, reference)
        return ReferenceIds(reference.test_ids, None, reference)
    return ReferenceIds(None, reference_failure(task, reference), reference)


def reference_failure(task, reference: Outcome) -> Outcome:
    """Why nothing of `task` can be graded: the reference's own no-evidence status where it
    has one (no device, missing deps, a refused node, a judge that never started), else the
    task is broken here."""
    if not is_evidence(reference.status):
        detail = f"the task's reference could not be graded here: {reference.detail or reference.status.value}"
        return Outcome(task.slug, reference.status, detail=detail)
    return Outcome(task.slug, Status.COLLECTION_ERROR,
                   detail=f"the task's reference does not pass here: {reference.summary()}")


def record(task, reference: Outcome) -> None:
    """Cache a passing reference's ids (validate and mutants call this after their own run)."""
    if not reference.passed:
        return
    path = _entry_path(task)
    doc = {"slug": task.slug, "content_hash": task.content_hash, "ids": reference.test_ids}
    from sb.results import write_atomic
    try:
        write_atomic(path, doc)
    except OSError:
        pass  # a read-only cache costs a regrade next time, nothing else


def _read(path: Path, task):
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    ids = doc.get("ids") if isinstance(doc, dict) else None
    if doc.get("slug") != task.slug or doc.get("content_hash") != task.content_hash:
        return None
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        return None
    return ids
