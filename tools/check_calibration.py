"""Re-derive every task's meta.yaml calibration block from the draws in calibration/; fail on any mismatch.

    python tools/check_calibration.py [--calibration DIR] [--tasks DIR]

A block entry (model, draws, passed, date) must equal what the results files under
calibration/ say for that task and model: draws with evidence, how many passed, the day
of the newest. A block with no draws behind it, draws behind no block, and control runs
(reference, starter: they prove a task, they do not calibrate it) are all mismatches.
Exit 0 when every block re-derives, 1 otherwise. CI runs it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sb.report.calibration import check, repo_metas
from sb.report.draws import load_dir

REPO = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="check_calibration")
    parser.add_argument("--calibration", type=Path, default=REPO / "calibration")
    parser.add_argument("--tasks", type=Path, default=REPO / "tasks")
    args = parser.parse_args(argv)
    metas = repo_metas(args.tasks)
    docs = load_dir(args.calibration, complete_only=False)
    problems = check(metas, docs)
    unfinished = [Path(d["_path"]).name for d in docs if not d.get("complete")]
    problems += [f"{name}: an unfinished draw (complete is false)" for name in unfinished]
    for line in problems:
        print(f"check_calibration: MISMATCH {line}")
    blocks = sum(len(m.calibration) for m in metas)
    print(f"check_calibration: {len(metas)} task(s), {blocks} calibration entr{'y' if blocks == 1 else 'ies'}, "
          f"{len(docs)} draw file(s), {len(problems)} mismatch(es)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
