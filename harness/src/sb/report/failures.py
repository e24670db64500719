"""`sb report --failures SLUG`: the failure shape of one task across draws.

Which hidden test ids fail, in how many of the measured draws, and the draws grouped by
identical signature (status plus the exact set of failing ids): one signature repeated in
every draw is one consistent mistake; many signatures are a model guessing.
"""

from __future__ import annotations

from collections import Counter

from sb.errors import SbError
from sb.outcome import is_evidence
from sb.report.draws import by_key


def signature(entry: dict) -> tuple[str, tuple[str, ...]]:
    """What identifies a failure shape: the status and the sorted failing test ids."""
    return entry["status"], tuple(sorted(entry.get("failed_tests") or ()))


def failure_shape(docs: list[dict], slug: str) -> list[dict]:
    """One block per model that attempted `slug`: failing ids by frequency, and the signatures."""
    blocks = []
    for model, group in by_key(docs, "model").items():
        entries = [e for d in group for e in d["tasks"] if e["slug"] == slug]
        if entries:
            blocks.append(_model_block(model, entries))
    if not blocks:
        raise SbError(f"no finished draw attempted task {slug!r}")
    return blocks


def _model_block(model: str, entries: list[dict]) -> dict:
    measured = [e for e in entries if is_evidence(e["status"])]
    unmeasured = Counter(e["status"] for e in entries if not is_evidence(e["status"]))
    ids = Counter(test for e in measured for test in set(e.get("failed_tests") or ()))
    shapes = Counter(signature(e) for e in measured)
    return {"model": model, "draws": len(entries), "measured": len(measured),
            "passed": sum(1 for e in measured if e["passed"]),
            "unmeasured": sum(unmeasured.values()),
            "reason": ", ".join(f"{n} {s}" for s, n in sorted(unmeasured.items())),
            "failing_tests": [{"test": t, "draws": n} for t, n in sorted(ids.items(), key=lambda kv: (-kv[1], kv[0]))],
            "signatures": [{"status": status, "failed_tests": list(tests), "draws": n}
                           for (status, tests), n in sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0]))]}
