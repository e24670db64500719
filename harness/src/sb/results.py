"""The results document (schema in docs/results.md), its rates, and atomic writes.

Rates count evidence only: a task that could not be measured (missing deps, no device,
an adapter failure) is out of the numerator AND the denominator, and a tier with nothing
measured has rate None, printed as "not measured (reason)", never 0%.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from sb.outcome import is_evidence

SCHEMA_VERSION = 1
HEADLINE_TIER = "laptop"


def harness_version() -> str:
    try:
        return version("scratchbench")
    except PackageNotFoundError:
        return "0+unknown"


def environment(isolation: str) -> dict:
    """The `sb env` document, with the isolation of this run and the four versions that
    older readers of results files look for under `packages`."""
    from sb.toolchain import document, fingerprint
    return {**document(), "fingerprint": fingerprint(), "isolation": isolation,
            "packages": {name: _version_or_none(name) for name in ("torch", "numpy", "pytest", "triton")}}


def _version_or_none(name: str):
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def rate_text(summary: dict | None) -> str:
    """'80% (4/5)' or 'not measured (reason)': never 0% for no evidence (terminal and site)."""
    if not summary or summary.get("rate") is None:
        return f"not measured ({(summary or {}).get('reason') or 'no tasks'})"
    return f"{summary['rate']:.0%} ({summary['passed']}/{summary['measured']})"


def rate(entries: list) -> dict:
    """{rate, passed, measured, unmeasured, reason} over task entries; rate None if none measured."""
    measured = [e for e in entries if is_evidence(e["status"])]
    unmeasured = [e for e in entries if not is_evidence(e["status"])]
    passed = sum(1 for e in measured if e["passed"])
    reasons = Counter(e["status"] for e in unmeasured)
    reason = ", ".join(f"{n} {status}" for status, n in sorted(reasons.items()))
    return {"rate": passed / len(measured) if measured else None, "passed": passed, "measured": len(measured),
            "unmeasured": len(unmeasured), "reason": reason}


def rates_by(entries: list, key: str) -> dict:
    groups: dict = {}
    for entry in entries:
        groups.setdefault(entry[key], []).append(entry)
    return {name: rate(group) for name, group in sorted(groups.items())}


def summarise(doc: dict) -> dict:
    """Fill the derived figures of a results document from its task entries."""
    entries = doc["tasks"]
    by_tier = rates_by(entries, "tier")
    doc["pass_rate_by_tier"] = by_tier
    doc["pass_rate_by_category"] = rates_by(entries, "category")
    doc["pass_rate_by_suite"] = rates_by([e for e in entries if e.get("tier") == HEADLINE_TIER], "suite")
    doc["pass_rate"] = by_tier.get(HEADLINE_TIER, {}).get("rate")
    doc["tokens"] = _sum_tokens(entries)
    from sb.costs import run_cost
    doc["usd_cost"], doc["cost_complete"] = run_cost(entries)
    from sb.report.served import served_at
    doc["served_at"] = served_at(doc)  # the host, when not the provider's own API (docs/results.md)
    return doc


def _sum_tokens(entries: list):
    usages = [e.get("tokens") for e in entries if e.get("tokens")]
    if not usages:
        return None
    total: Counter[str] = Counter()
    for usage in usages:
        total.update({k: v for k, v in usage.items() if isinstance(v, int)})
    return dict(total)


def write_atomic(path: Path, doc: dict) -> None:
    """`doc` as JSON, written through write_text_atomic: never a torn file."""
    write_text_atomic(path, json.dumps(doc, indent=2, sort_keys=False, allow_nan=False) + "\n")  # always valid JSON


def write_text_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Write to a temporary file beside `path`, fsync, then rename: never a torn file. The
    file is private (0600) unless `mode` says otherwise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: Path) -> dict:
    from sb.errors import SbError
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SbError(f"cannot read results file {path}: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION:
        raise SbError(f"{path}: not a scratchbench results file (schema_version {SCHEMA_VERSION})")
    from sb.schema import validate_results
    return validate_results(doc, str(path))


def claims_to_be_results(path: Path) -> bool:
    """A JSON object with our schema_version: a results file, valid or not (other JSON beside
    results, a chart's data say, is not one)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return path.name.endswith(".json") and not path.name.startswith(("speed-", "."))
    return isinstance(doc, dict) and "schema_version" in doc and "tasks" in doc


def newest(results_dir: Path) -> Path | None:
    files = sorted((p for p in Path(results_dir).glob("*.json") if not p.name.startswith("speed-")),
                   key=lambda p: (p.stat().st_mtime, p.name))
    return files[-1] if files else None
