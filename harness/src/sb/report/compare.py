"""`sb compare A B`: two models on the tasks both have evidence for.

The unit is the task, not the draw: draws of one task are not independent evidence about
the model in general, so pooling them would claim a precision the task set cannot give.
Per task each model's pass rate over its measured draws decides who wins that task (a tie
is dropped); an exact two-sided sign test on those wins says whether the difference is
distinguishable from chance. With one draw each that is McNemar's exact test.
"""

from __future__ import annotations

from sb.errors import SbError
from sb.report.draws import of_model, tally_tasks, task_versions
from sb.report.stats import fewest_for_significance, sign_test

ALPHA = 0.05


def compare(docs: list[dict], model_a: str, model_b: str) -> dict:
    docs_a, docs_b = of_model(docs, model_a), of_model(docs, model_b)
    versions = task_versions(docs_a + docs_b)  # another version of a task is another task
    tallies_a, tallies_b = tally_tasks(docs_a, versions), tally_tasks(docs_b, versions)
    shared = [s for s in tallies_a if s in tallies_b]
    if not shared:
        raise SbError(f"{model_a} and {model_b} have no task in common")
    rows = [_row(tallies_a[s], tallies_b[s]) for s in shared]
    paired = [r for r in rows if r["winner"] is not None]
    wins_a = sum(1 for r in paired if r["winner"] == "a")
    wins_b = sum(1 for r in paired if r["winner"] == "b")
    p = sign_test(wins_a, wins_b)
    return {"a": model_a, "b": model_b, "tasks": rows, "paired_tasks": len(paired),
            "ties": sum(1 for r in paired if r["winner"] == "tie"),
            "wins_a": wins_a, "wins_b": wins_b, "p_value": p, "alpha": ALPHA,
            "distinguishable": p < ALPHA, "needs_discordant": fewest_for_significance(ALPHA),
            "not_measured": [r["slug"] for r in rows if r["winner"] is None],
            "verdict": verdict(model_a, model_b, wins_a, wins_b, p)}


def _row(a, b) -> dict:
    """A task's counts for both models; winner None when either has no evidence on it."""
    winner = None
    if a.measured and b.measured:
        rate_a, rate_b = a.passed / a.measured, b.passed / b.measured
        winner = "a" if rate_a > rate_b else "b" if rate_b > rate_a else "tie"
    return {"slug": a.slug, "tier": a.tier, "a": a.to_dict(), "b": b.to_dict(), "winner": winner}


def verdict(model_a: str, model_b: str, wins_a: int, wins_b: int, p: float) -> str:
    """The plain sentence: who is better, or that these draws cannot tell them apart."""
    tally = f"{wins_a} task(s) favour {model_a}, {wins_b} favour {model_b}; exact sign test p = {p:.3g}"
    if p < ALPHA:
        better = model_a if wins_a > wins_b else model_b
        return f"{better} is better on these tasks ({tally})"
    need = fewest_for_significance(ALPHA)
    return (f"not distinguishable at {ALPHA:.0%}: {tally} "
            f"(at least {need} tasks all favouring one side are needed)")
