"""Which content hash each published task version was first graded with."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path


def published_hash(leaderboard, slug: str, version: int):
    """(hash, file) of the earliest published draw of slug@version that carries a hash, or None."""
    if leaderboard is None or not Path(leaderboard).is_dir():
        return None
    return _first_hashes(str(Path(leaderboard).resolve())).get((slug, version))


@lru_cache(maxsize=4)
def _first_hashes(folder: str) -> dict:
    found: dict = {}
    docs = []
    for path in sorted(Path(folder).rglob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("tasks"), list):
            docs.append((str(doc.get("run_at", "")), path.name, doc))
    for _, name, doc in sorted(docs, key=lambda item: item[:2]):
        for entry in doc["tasks"]:
            if isinstance(entry, dict) and entry.get("content_hash"):
                found.setdefault((entry.get("slug"), entry.get("version")), (entry["content_hash"], name))
    return found
