"""Costs re-derived from tokens: one place for the run total and for checking a document.

A run's `usd_cost` is the sum of the task costs that exist; `cost_complete` says whether
every task that used tokens has one (an unpriced snapshot does not). A task that used no
tokens (a 500 on every try, a control run) costs nothing and never makes a run "unpriced".
`tools/check_cost.py` (CI) and `sb publish` both call `check_document`.
"""

from __future__ import annotations

from collections import Counter
from datetime import date

TOLERANCE = 1e-9


def run_cost(entries: list) -> tuple:
    """(usd_cost or None when no task has a cost, cost_complete)."""
    costs = [e["usd_cost"] for e in entries if e.get("usd_cost") is not None]
    complete = all(e.get("usd_cost") is not None for e in entries if e.get("tokens"))
    return (round(sum(costs), 6) if costs else None), complete


def check_document(doc: dict, where: str) -> tuple[list, Counter]:
    """(mismatch lines, counts of priced / unpriced / no-usage tasks) for one results document."""
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
    from sb.models import prices
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
    total, complete = run_cost(entries)
    recorded = doc.get("usd_cost")
    if (recorded is None) != (total is None) or (total is not None and abs(recorded - total) > 1e-6):
        problems.append(f"run usd_cost {recorded} is not the sum of its tasks ({total})")
    if "cost_complete" in doc and doc["cost_complete"] != complete:
        problems.append(f"run cost_complete {doc['cost_complete']} should be {complete}")
    summed = Counter()
    for entry in entries:
        summed.update({k: v for k, v in (entry.get("tokens") or {}).items() if isinstance(v, int)})
    if (doc.get("tokens") or None) != (dict(summed) or None):
        problems.append(f"run tokens {doc.get('tokens')} are not the sum of its tasks ({dict(summed)})")
    return problems
