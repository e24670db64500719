"""Results documents read from a folder and regrouped: by model, by group, by task.

Every figure built from these counts evidence only (`sb.results.rate`); an entry without
evidence is counted beside, with its status as the reason, never as a failure.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from sb import results
from sb.errors import SbError
from sb.outcome import is_evidence
from sb.report.served import model_label


def load_dir(folder: Path, complete_only: bool = True) -> list[dict]:
    """Every results document under `folder` (recursively), oldest first; unfinished draws left out."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SbError(f"no results folder {folder}")
    docs = []
    for path in sorted(folder.rglob("*.json")):
        doc = _load_or_none(path)
        if doc is not None and (doc.get("complete") or not complete_only):
            doc["_path"] = str(path)
            doc["model"] = model_label(doc)  # every report shows and selects a draw by where it was served
            docs.append(doc)
    docs = sorted(docs, key=lambda d: (d.get("run_at", ""), d.get("run_id", "")))
    check_poolable(docs)
    return docs


def check_poolable(docs: list[dict]) -> None:
    """Refuse to pool draws of one task version graded with different task content (its
    tests or reference changed without a version bump): they are not the same task."""
    seen: dict = {}
    for doc in docs:
        for entry in doc["tasks"]:
            digest = entry.get("content_hash")
            if not digest:
                continue  # written before tasks carried a hash: nothing to compare
            key = (entry["slug"], entry.get("version"))
            first = seen.setdefault(key, (digest, doc.get("_path", doc.get("run_id"))))
            if first[0] != digest:
                raise SbError(f"{entry['slug']} v{entry.get('version')} was graded with different task content in "
                              f"{first[1]} ({first[0]}) and {doc.get('_path', doc.get('run_id'))} ({digest}): its "
                              "tests changed without a version bump, so these draws are not pooled")


def toolchain_note(docs: list[dict]) -> str:
    """'' when every draw ran on one toolchain; else which packages differ between them."""
    envs: dict = {}
    for doc in docs:
        env = doc.get("environment") or {}
        if env.get("fingerprint"):
            envs.setdefault(env["fingerprint"], env.get("distributions") or env.get("packages") or {})
    if len(envs) < 2:
        return ""
    names = sorted({n for dists in envs.values() for n in dists})
    differing = [n for n in names if len({dists.get(n) for dists in envs.values()}) > 1]
    listed = ", ".join(differing[:8]) + (" ..." if len(differing) > 8 else "")
    return (f"these draws ran on {len(envs)} different toolchains (fingerprints {', '.join(sorted(envs))}); "
            f"packages that differ: {listed or 'none recorded'}")


def _load_or_none(path: Path):
    """A results document, or None for any other JSON file (a chart's data, a manifest). A
    file that is a results document but a broken one is refused, never silently skipped."""
    try:
        return results.load(path)
    except SbError:
        if results.claims_to_be_results(path):
            raise
        return None


def of_model(docs: list[dict], model: str) -> list[dict]:
    chosen = [d for d in docs if d["model"] == model or f"{d['adapter']}:{d['model']}" == model]
    if not chosen:
        known = ", ".join(sorted({d["model"] for d in docs})) or "none"
        raise SbError(f"no finished draws of model {model!r} (models with results: {known})")
    return chosen


def by_key(docs: list[dict], key: str) -> dict[str, list[dict]]:
    """Documents grouped by `key` ('model', 'group_id'), in first-seen order."""
    groups: dict[str, list[dict]] = {}
    for doc in docs:
        groups.setdefault(doc[key], []).append(doc)
    return groups


@dataclass
class TaskTally:
    """One task across draws: passes of measured draws, and the draws without evidence."""

    slug: str
    tier: str
    passed: int = 0
    measured: int = 0
    unmeasured: Counter = field(default_factory=Counter)

    @property
    def draws(self) -> int:
        return self.measured + sum(self.unmeasured.values())

    @property
    def reason(self) -> str:
        return ", ".join(f"{n} {status}" for status, n in sorted(self.unmeasured.items()))

    def to_dict(self) -> dict:
        from sb.report.stats import classify
        return {"slug": self.slug, "tier": self.tier, "passed": self.passed, "measured": self.measured,
                "draws": self.draws, "unmeasured": sum(self.unmeasured.values()), "reason": self.reason,
                "verdict": classify(self.passed, self.measured)}


def task_label(entry: dict, versions: dict[str, set]) -> str:
    """The slug, with '@vN' only where the draws hold several versions of that task."""
    slug = entry["slug"]
    return f"{slug}@v{entry.get('version')}" if len(versions.get(slug, ())) > 1 else slug


def task_versions(docs: list[dict]) -> dict[str, set]:
    versions: dict[str, set] = {}
    for entry in (e for d in docs for e in d["tasks"]):
        versions.setdefault(entry["slug"], set()).add(entry.get("version"))
    return versions


def tally_tasks(docs: list[dict], versions: dict[str, set] | None = None) -> dict[str, TaskTally]:
    """Per task (in first-seen order): k passes of N measured draws, and why others were not measured.
    `versions` (default: those in `docs`) decides where a slug needs its version to stay one task."""
    versions = task_versions(docs) if versions is None else versions
    tallies: dict[str, TaskTally] = {}
    for entry in (e for d in docs for e in d["tasks"]):
        label = task_label(entry, versions)
        tally = tallies.setdefault(label, TaskTally(label, entry["tier"]))
        if is_evidence(entry["status"]):
            tally.measured += 1
            tally.passed += bool(entry["passed"])
        else:
            tally.unmeasured[entry["status"]] += 1
    return tallies
