"""leaderboard/SET_MANIFESTS.yaml: which tasks (and task versions) each published set contained.

Derived from the published results files, never written by hand: a set's contents are
what its published draws asked for. Two published draws of one set that disagree are an
error, so a set cannot quietly change under a published score. Sweeps over `all` or a
`custom` selection are not sets and are left out.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from sb.errors import SbError

NOT_SETS = ("all", "custom")
HEADER = ("# Which tasks each published set contained. Derived from the results files in this\n"
          "# folder by `sb publish`; a test re-derives it. Do not edit by hand.\n")


def set_contents(doc: dict) -> dict[str, int | None]:
    """slug -> task version, for the tasks this draw asked for."""
    versions = {e["slug"]: e.get("version") for e in doc["tasks"]}
    return {slug: versions.get(slug) for slug in sorted(doc["tasks_requested"])}


def derive(docs: list[dict]) -> dict[str, dict[str, int]]:
    """{set name: {slug: version}} over published draws; SbError when two draws of a set disagree."""
    manifests: dict[str, dict] = {}
    first_seen: dict[str, str] = {}
    for doc in docs:
        name = doc["task_set"]
        if name in NOT_SETS:
            continue
        contents = set_contents(doc)
        if name in manifests and manifests[name] != contents:
            raise SbError(f"set {name} differs between published files {first_seen[name]} and "
                          f"{Path(doc.get('_path', '?')).name}")
        manifests.setdefault(name, contents)
        first_seen.setdefault(name, Path(doc.get("_path", "?")).name)
    return dict(sorted(manifests.items()))


def render(manifests: dict) -> str:
    body = yaml.safe_dump({"sets": manifests}, sort_keys=True, default_flow_style=False) if manifests else "sets: {}\n"
    return HEADER + body


def read(path: Path) -> dict:
    if not Path(path).exists():
        return {}
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    return data.get("sets") or {}
