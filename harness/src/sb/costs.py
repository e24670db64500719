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
    complete = all(e.get("usd_cost") is not None for e in entries if e.get("tokens")) and \
        not any(e.get("usage_missing") for e in entries)
    return (round(sum(costs), 6) if costs else None), complete


def check_document(doc: dict, where: str) -> tuple[list, Counter]:
    """(mismatch lines, counts of priced / unpriced / no-usage tasks) for one results document."""
    on = date.fromisoformat(str(doc["run_at"])[:10])
    problems: list[str] = []
    counts: Counter[str] = Counter()
    for entry in doc["tasks"]:
        problem, kind = check_entry(doc, entry, on)
        counts[kind] += 1
        if problem:
            problems.append(f"{where}: {entry.get('slug')}: {problem}")
    problems += [f"{where}: {p}" for p in check_totals(doc)]
    return problems, counts


def check_entry(doc: dict, entry: dict, on: date) -> tuple[str | None, str]:
    from sb.models import prices
    from sb.models.exchange import usage_problem
    tokens, recorded = entry.get("tokens"), entry.get("usd_cost")
    if recorded is not None and (not isinstance(recorded, (int, float)) or recorded < 0):
        return f"cost {recorded!r} is not a non-negative number", "priced"
    problem = usage_problem(tokens if isinstance(tokens, dict) else {"tokens": tokens})
    if problem:
        return problem.replace("the API reported", "recorded"), "priced"
    if entry.get("turn_costs"):
        return _check_turns(doc, entry, on)
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
    summed: Counter[str] = Counter()
    for entry in entries:
        summed.update({k: v for k, v in (entry.get("tokens") or {}).items() if isinstance(v, int)})
    if (doc.get("tokens") or None) != (dict(summed) or None):
        problems.append(f"run tokens {doc.get('tokens')} are not the sum of its tasks ({dict(summed)})")
    return problems


def _check_turns(doc: dict, entry: dict, on: date) -> tuple[str | None, str]:
    """A tool loop is priced turn by turn at the rate of the model that answered each."""
    from sb.models import prices
    total = 0.0
    for index, turn in enumerate(entry["turn_costs"]):
        derived, _ = prices.cost(doc.get("adapter", ""), turn.get("model") or doc["model"], turn.get("tokens"), on)
        if derived is None and turn.get("tokens"):
            return f"turn {index + 1} answered by {turn.get('model')!r} is unpriced", "unpriced"
        if (turn.get("usd_cost") is None) != (derived is None) or \
                (derived is not None and abs(turn["usd_cost"] - derived) > TOLERANCE):
            return f"turn {index + 1}: cost {turn.get('usd_cost')} recorded, {derived} derived", "priced"
        total += derived or 0.0
    if entry.get("usd_cost") is None or abs(entry["usd_cost"] - round(total, 8)) > 1e-6:
        return f"cost {entry.get('usd_cost')} is not the sum of its turns ({round(total, 8)})", "priced"
    return None, "priced"
