"""`sb report --variance`: how much a model's score moves between independent draws.

Per task: k passes of N draws, called always / never / split. Per tier: the range of the
per-draw pass rates (lowest to highest draw) and a Wilson 95% interval on the pooled
passes over every measured task-draw. The pooled interval treats task-draws as independent
trials: it says how precisely these draws pin the rate down on this task set, not how the
model would do on other tasks.
"""

from __future__ import annotations

from sb import results
from sb.report.draws import by_key, tally_tasks
from sb.report.stats import wilson


def tier_spread(docs: list[dict], tier: str) -> dict:
    """{rate, passed, measured, unmeasured, reason, low, high, ci, draws} for one tier over the draws."""
    per_draw = [results.rate([e for e in d["tasks"] if e["tier"] == tier]) for d in docs]
    pooled = results.rate([e for d in docs for e in d["tasks"] if e["tier"] == tier])
    rates = [r["rate"] for r in per_draw if r["rate"] is not None]
    if not pooled["measured"] and not pooled["unmeasured"]:
        pooled["reason"] = f"no {tier} task"
    pooled.update(draws=len(docs), measured_draws=len(rates),
                  low=min(rates) if rates else None, high=max(rates) if rates else None,
                  ci=wilson(pooled["passed"], pooled["measured"]))
    return pooled


def variance(docs: list[dict], group_by: str = "model") -> list[dict]:
    """One block per model (or per group id): task tallies and the spread of every tier present."""
    blocks = []
    for name, group in by_key(docs, group_by).items():
        tiers = sorted({e["tier"] for d in group for e in d["tasks"]} | {results.HEADLINE_TIER})
        blocks.append({group_by: name, "model": group[0]["model"], "draws": len(group),
                       "task_set": _one_or_mixed(d["task_set"] for d in group),
                       "headline_tier": results.HEADLINE_TIER,
                       "tasks": [t.to_dict() for t in tally_tasks(group).values()],
                       "tiers": {tier: tier_spread(group, tier) for tier in tiers}})
    return blocks


def _one_or_mixed(values) -> str:
    distinct = sorted(set(values))
    return distinct[0] if len(distinct) == 1 else "mixed (" + ", ".join(distinct) + ")"
