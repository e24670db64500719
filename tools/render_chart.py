"""Render the per-model, per-task chart from the published draws; --check compares it with the committed one.

    python tools/render_chart.py           write leaderboard/charts/task_grid.svg
    python tools/render_chart.py --check   exit 1 if the committed chart differs from a fresh render

The SVG is deterministic (sb.report.charts: no date, fixed ids, text as paths in the
font bundled with matplotlib), so "differs" means the draws or the drawing code changed
and the chart was not re-rendered. CI runs --check.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from sb.report.charts import task_grid_svg
from sb.report.draws import load_dir

REPO = Path(__file__).resolve().parent.parent
CHART = Path("charts") / "task_grid.svg"


def render(leaderboard: Path) -> str:
    return task_grid_svg(load_dir(leaderboard))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="render_chart")
    parser.add_argument("--leaderboard", type=Path, default=REPO / "leaderboard")
    parser.add_argument("--check", action="store_true", help="compare with the committed chart instead of writing")
    args = parser.parse_args(argv)
    target, fresh = args.leaderboard / CHART, render(args.leaderboard)
    if not args.check:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(fresh, encoding="utf-8")
        print(f"render_chart: wrote {target}")
        return 0
    committed = target.read_text(encoding="utf-8") if target.exists() else ""
    if committed == fresh:
        print(f"render_chart: {target} matches a fresh render")
        return 0
    diff = list(difflib.unified_diff(committed.splitlines(), fresh.splitlines(), "committed", "fresh",
                                     lineterm="", n=0))
    print(f"render_chart: {target} differs from a fresh render ({len(diff)} diff lines); "
          "run: python tools/render_chart.py", *diff[:10], sep="\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())
