"""`sb report`: the leaderboard of published results (leaderboard/), newest first.

A row is one sweep (one group id: the N draws of one `--repeat N`), so a model run five
times is one row with five draws, not five rows. The headline is the laptop tier; the
accelerated tier sits beside it and is never folded in. Cost per solved task is the
sweep's cost over its passes, and says so when there is no cost (the controls, an adapter
that reports no tokens) or no price.
"""

from __future__ import annotations

from pathlib import Path

from sb import results
from sb.report.calibration import CONTROL_ADAPTERS
from sb.report.draws import by_key, load_dir
from sb.report.served import served_at
from sb.report.variance import tier_spread

ACCELERATED = "accelerated"


def leaderboard(folder: Path) -> list[dict]:
    """Rows for every published sweep under `folder`, newest first."""
    rows = [sweep_row(group) for group in by_key(load_dir(folder), "group_id").values()]
    return sorted(rows, key=lambda r: (r["run_at"], r["group_id"]), reverse=True)


def sweep_row(docs: list[dict]) -> dict:
    first = docs[0]
    headline = tier_spread(docs, results.HEADLINE_TIER)
    return {"group_id": first["group_id"], "model": first["model"], "adapter": first["adapter"],
            "run_at": min(d["run_at"] for d in docs), "task_set": first["task_set"],
            "tasks": len(first["tasks_requested"]), "draws": len(docs), "draws_planned": first.get("draws", 1),
            "harness_version": first.get("harness_version"), "isolation": first.get("isolation"),
            "headline": headline, "accelerated": tier_spread(docs, ACCELERATED),
            "cost": cost_figures(docs, headline["passed"] + _accelerated_passes(docs)),
            "files": [Path(d["_path"]).name for d in docs], "served_at": served_at(first)}


def _accelerated_passes(docs: list[dict]) -> int:
    return sum(1 for d in docs for e in d["tasks"] if e["tier"] == ACCELERATED and e["passed"])


def cost_figures(docs: list[dict], solved: int) -> dict:
    """{usd, per_solved, note}: note is 'no cost (control run)', 'no cost (no tokens used)',
    'unpriced' or '' when priced."""
    costs = [d["usd_cost"] for d in docs if d.get("usd_cost") is not None]
    if len(costs) < len(docs):
        return {"usd": None, "per_solved": None, "note": no_cost_note(docs)}
    total = round(sum(costs), 6)
    return {"usd": total, "per_solved": total / solved if solved else None,
            "note": "" if solved else "nothing solved"}


def no_cost_note(docs: list[dict]) -> str:
    """Why a sweep has no cost, in `sb run`'s words: a control run only for the controls
    (reference, starter); any other adapter without tokens (a `cmd:` agent) used none counted."""
    if any(d.get("tokens") for d in docs):
        return "unpriced"
    if all(d.get("adapter") in CONTROL_ADAPTERS for d in docs):
        return "no cost (control run)"
    return "no cost (no tokens used)"
