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
from pathlib import Path

from sb.costs import check_document

REPO = Path(__file__).resolve().parent.parent


def results_files(paths: list) -> list:
    found = []
    for path in map(Path, paths):
        found += sorted(path.rglob("*.json")) if path.is_dir() else [path]
    return found


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
