"""Re-derive every cost in the published results files from their tokens; fail on any mismatch.

    python tools/check_cost.py [PATH ...]     (default: leaderboard/)

For each results file (every *.json under the paths that carries a `schema_version` and
`tasks`), each task's cost is recomputed with sb.models.prices: the adapter's price table,
the model that answered (a dated snapshot priced as its model), the price in effect on the
run's date, and the task's tokens. A recorded cost that differs, a cost where the model is
unpriced, a missing cost where it is priced, or run totals (tokens, usd_cost) that are not
the sum of the tasks: each is a mismatch, and any mismatch exits 1. CI runs it.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import date
from pathlib import Path

from sb.models import prices

REPO = Path(__file__).resolve().parent.parent
TOLERANCE = 1e-9


def results_files(paths: list) -> list:
    found = []
    for path in map(Path, paths):
        found += sorted(path.rglob("*.json")) if path.is_dir() else [path]
    return found


def check_document(doc: dict, where: str) -> tuple[list, Counter]:
    """(mismatch lines, counts of priced/unpriced/no-usage tasks) for one results document."""
    on = date.fromisoformat(str(doc["run_at"])[:10])
    problems, counts = [], Counter()
    for entry in doc["tasks"]:
        problem, kind = check_entry(doc, entry, on)
        counts[kind] += 1
        if problem:
            problems.append(f"{where}: {entry.get('slug')}: {problem}")
    problems += [f"{where}: {p}" for p in check_totals(doc)]
    return problems, counts


def check_entry(doc: dict, entry: dict, on: date) -> tuple[str | None, str]:
    tokens, recorded = entry.get("tokens"), entry.get("usd_cost")
    if not tokens:
        return (None if recorded is None else f"cost {recorded} recorded without tokens"), "no usage"
    model = entry.get("model_answered") or doc["model"]
    derived, price = prices.cost(doc.get("adapter", ""), model, tokens, on)
    if derived is None:
        return (None if recorded is None else f"cost {recorded} recorded for {model}, which is unpriced"), "unpriced"
    if recorded is None or abs(recorded - derived) > TOLERANCE:
        return f"cost {recorded} recorded, {derived} derived from {tokens} at {price}", "priced"
    return None, "priced"


def check_totals(doc: dict) -> list:
    entries, problems = doc["tasks"], []
    costs = [e.get("usd_cost") for e in entries]
    total = None if not costs or any(c is None for c in costs) else round(sum(costs), 6)
    if doc.get("usd_cost") != total and (total is None or doc.get("usd_cost") is None
                                         or abs(doc["usd_cost"] - total) > 1e-6):
        problems.append(f"run usd_cost {doc.get('usd_cost')} is not the sum of its tasks ({total})")
    summed = Counter()
    for entry in entries:
        summed.update({k: v for k, v in (entry.get("tokens") or {}).items() if isinstance(v, int)})
    if (doc.get("tokens") or None) != (dict(summed) or None):
        problems.append(f"run tokens {doc.get('tokens')} are not the sum of its tasks ({dict(summed)})")
    return problems


def main(argv: list) -> int:
    if any(arg.startswith("-") for arg in argv):
        print(__doc__.strip())
        return 0 if argv in (["-h"], ["--help"]) else 2
    paths = argv or [str(REPO / "leaderboard")]
    problems, counts, checked = [], Counter(), 0
    for path in results_files(paths):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: unreadable ({exc})")
            continue
        if not (isinstance(doc, dict) and "schema_version" in doc and "tasks" in doc):
            continue
        found, seen = check_document(doc, str(path))
        problems += found
        counts += seen
        checked += 1
    for line in problems:
        print(f"check_cost: MISMATCH {line}")
    print(f"check_cost: {checked} results file(s), {counts['priced']} task cost(s) re-derived, "
          f"{counts['unpriced']} unpriced, {counts['no usage']} without usage, {len(problems)} mismatch(es)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
