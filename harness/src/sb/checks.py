"""`sb validate` and `sb mutants`: the two halves of every task's contract, and its mutants.

validate: the reference passes every hidden test, and the untouched starter fails EVERY
hidden test with an assertion or NotImplementedError (never an import or collection
error). mutants: every plausible wrong version gets the verdict its mutant.yaml expects.
"""

from __future__ import annotations

from dataclasses import dataclass

from sb.grading import ALLOWED_EXCEPTIONS_FOR_STARTER, decide, execute, grade, precheck, starter_exceptions
from sb.outcome import Outcome, Status


@dataclass
class Validation:
    slug: str
    verdict: str  # ok | broken | skipped | unchecked
    reason: str = ""
    reference: Outcome | None = None
    starter: Outcome | None = None

    def to_dict(self) -> dict:
        return {"slug": self.slug, "verdict": self.verdict, "reason": self.reason,
                "reference": _brief(self.reference), "starter": _brief(self.starter)}


def _brief(outcome: Outcome | None):
    if outcome is None:
        return None
    return {"status": outcome.status.value, "counts": outcome.counts, "duration_s": outcome.duration_s,
            "failed_tests": outcome.failed_tests, "detail": outcome.detail}


def validate_task(task, sandbox) -> Validation:
    early = precheck(task)
    if early is not None:
        verdict = "skipped" if early.status == Status.MISSING_DEPS else "unchecked"
        return Validation(task.slug, verdict, early.detail)
    reference = grade(task, task.reference_files, sandbox)
    if not reference.passed:
        return Validation(task.slug, "broken", f"reference: {reference.summary()}", reference)
    starter, problem = _grade_starter(task, sandbox, reference.test_ids)
    if problem:
        return Validation(task.slug, "broken", f"starter: {problem}", reference, starter)
    return Validation(task.slug, "ok", "", reference, starter)


def _grade_starter(task, sandbox, expected: list):
    record, completed = execute(task, task.starter_files, sandbox)
    starter = decide(task, record, completed, expected, sandbox)
    if starter.status != Status.FAILED:
        return starter, f"{starter.summary()} (it must fail every hidden test cleanly)"
    passing = [n for n in expected if n not in starter.failed_tests]
    if passing:
        return starter, f"passes {len(passing)} hidden test(s), e.g. {passing[0]}"
    for nodeid, excs in sorted(starter_exceptions(record).items()):
        bad = sorted(e for e in excs if e not in ALLOWED_EXCEPTIONS_FOR_STARTER)
        if bad:
            return starter, f"{nodeid} fails with {bad[0]}, not an assertion or NotImplementedError"
    return starter, ""


@dataclass
class MutantCheck:
    slug: str
    mutant: str
    description: str
    expected: str
    actual: str  # caught | survives | unchecked
    detail: str = ""

    @property
    def ok(self) -> bool:
        """Agreement, or no evidence either way (no device, no deps): unchecked is not a disagreement."""
        return self.actual in (self.expected, "unchecked")

    def to_dict(self) -> dict:
        return {"slug": self.slug, "mutant": self.mutant, "description": self.description,
                "expected": self.expected, "actual": self.actual, "ok": self.ok, "detail": self.detail}


def check_mutants(task, sandbox) -> list:
    """Grade every mutant against the reference's test ids."""
    early = precheck(task)
    if early is not None:
        return [MutantCheck(task.slug, m.name, m.description, m.expected, "unchecked", early.detail)
                for m in task.mutants]
    reference = grade(task, task.reference_files, sandbox)
    if not reference.passed:
        return [MutantCheck(task.slug, m.name, m.description, m.expected, "unchecked",
                            f"reference does not pass: {reference.summary()}") for m in task.mutants]
    return [_check_one(task, m, sandbox, reference.test_ids) for m in task.mutants]


def _check_one(task, mutant, sandbox, expected: list) -> MutantCheck:
    outcome = grade(task, task.mutant_solution(mutant), sandbox, expected)
    if outcome.passed:
        actual, detail = "survives", "every hidden test passed"
    elif outcome.evidence:
        actual = "caught"
        detail = f"{outcome.status.value}: {len(outcome.failed_tests)} failing, e.g. {outcome.failed_tests[0]}" \
            if outcome.failed_tests else outcome.summary()
    else:
        actual, detail = "unchecked", outcome.summary()
    return MutantCheck(task.slug, mutant.name, mutant.description, mutant.expected, actual, detail)
