"""`sb report --drift`: does a model do better on the public tasks than on the private
holdout? A public pass rate significantly above the holdout's, on tasks of the same suite
and difficulty, is the sign that the public tasks leaked into its training data.

Only strata (suite, difficulty) that have both public and holdout tasks count, so a model
is never flagged because the holdout happens to be harder. Per model the measured
task-draws are pooled over those strata into a 2x2 table (public / holdout x pass / fail)
and tested with Fisher's exact test, one-sided (public better); flagged below `alpha`.
No-evidence draws stay out, as everywhere.
"""

from __future__ import annotations

from sb.outcome import is_evidence
from sb.report.draws import by_key
from sb.report.stats import fisher_greater

ALPHA = 0.05


def drift(docs: list[dict], alpha: float = ALPHA) -> list[dict]:
    return [_model_drift(model, group, alpha) for model, group in by_key(docs, "model").items()]


def _model_drift(model: str, docs: list[dict], alpha: float) -> dict:
    entries = [e for d in docs for e in d["tasks"] if is_evidence(e["status"])]
    strata = {_stratum(e) for e in entries if e.get("holdout")} & {_stratum(e) for e in entries if not e.get("holdout")}
    counted = [e for e in entries if _stratum(e) in strata]
    public = [e for e in counted if not e.get("holdout")]
    private = [e for e in counted if e.get("holdout")]
    pub_pass, hold_pass = sum(e["passed"] for e in public), sum(e["passed"] for e in private)
    p_value = fisher_greater(pub_pass, len(public) - pub_pass, hold_pass, len(private) - hold_pass)
    return {"model": model, "strata": sorted("/".join(s) for s in strata),
            "public": {"passed": pub_pass, "measured": len(public)},
            "holdout": {"passed": hold_pass, "measured": len(private)},
            "p_value": p_value, "flagged": bool(public and private and p_value < alpha), "alpha": alpha}


def _stratum(entry: dict) -> tuple:
    return entry.get("suite", "?"), entry.get("difficulty", "?")
