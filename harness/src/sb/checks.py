"""`sb validate` and `sb mutants`: the two halves of every task's contract, and its mutants.

validate: the reference passes every hidden test, and the untouched starter fails EVERY
hidden test with an assertion or NotImplementedError (never an import or collection
error). mutants: every plausible wrong version gets the verdict its mutant.yaml expects.
"""

from __future__ import annotations

from dataclasses import dataclass

from sb.grading import ALLOWED_EXCEPTIONS_FOR_STARTER, decide, execute, grade, precheck, starter_exceptions
from sb.grading.expected import settle
from sb.outcome import Outcome, Status


@dataclass
class Validation:
    slug: str
    verdict: str  # ok | broken | skipped | unchecked
    reason: str = ""
    reference: Outcome | None = None
    starter: Outcome | None = None
    trusted: tuple = ()  # the contract's clauses a pass does not prove (contract.yaml `trusted`)
    worker_observed: tuple = ()  # (clause, its tests that used a probe), derived from the reference's run

    def to_dict(self) -> dict:
        return {"slug": self.slug, "verdict": self.verdict, "reason": self.reason,
                "reference": _brief(self.reference), "starter": _brief(self.starter),
                "trusted": [{"clause": c.clause, "why": c.trusted} for c in self.trusted],
                "worker_observed": [{"clause": clause, "tests": list(tests)} for clause, tests in self.worker_observed]}


def worker_observed(task, probed_tests: list) -> tuple:
    """The contract's clauses that rest, at least in part, on an observation made in the
    solution's process: each clause with those of its tests that used a probe in the
    reference's grading. Derived from what the tests did, never declared by hand; a
    solution aimed at the probe could forge what these tests saw."""
    probed = set(probed_tests)
    found = []
    for clause in task.contract:
        tests = sorted(t for t in probed if t in clause.tests or t.split("[", 1)[0] in clause.tests)
        if tests:
            found.append((clause.clause, tuple(tests)))
    return tuple(found)


def _brief(outcome: Outcome | None):
    if outcome is None:
        return None
    return {"status": outcome.status.value, "counts": outcome.counts, "duration_s": outcome.duration_s,
            "failed_tests": outcome.failed_tests, "detail": outcome.detail}


def validate_task(task, sandbox, leaderboard=None) -> Validation:
    early = precheck(task)
    if early is not None:
        verdict = "skipped" if early.status == Status.MISSING_DEPS else "unchecked"
        return Validation(task.slug, verdict, early.detail)
    reference = grade(task, task.reference_files, sandbox)
    ids = settle(task, reference).ids
    if ids is None:
        return Validation(task.slug, "broken", f"reference: {reference.summary()}", reference)
    starter, problem = _grade_starter(task, sandbox, ids)
    if problem:
        return Validation(task.slug, "broken", f"starter: {problem}", reference, starter)
    problem = contract_problem(task, ids) or mutants_problem(task) or version_problem(task, leaderboard)
    if problem:
        return Validation(task.slug, "broken", problem, reference, starter)
    return Validation(task.slug, "ok", "", reference, starter)


def validate_all(tasks: list, executor, leaderboard=None, on_result=None) -> list:
    """validate_task for every task, each one unit of work on the executor; the results in
    order. The version check reads the leaderboard here, on the driver."""
    from sb.parallel import in_order
    return in_order([_validation(task, executor, leaderboard) for task in tasks], on_result)


def _validation(task, executor, leaderboard):
    from sb.executors.base import Work, resolved
    from sb.parallel import then
    early = executor.precheck(task)
    if early is not None:
        return resolved(Validation(task.slug, "skipped" if early.status == Status.MISSING_DEPS else "unchecked",
                                   early.detail))
    checked = executor.submit(Work.validation(task, executor.sandbox.name))
    return then(checked, lambda result: _validation_of(task, result, leaderboard))


def _validation_of(task, result: dict, leaderboard) -> Validation:
    from sb.executors.base import outcome_from_data
    if "validation" not in result:
        return Validation(task.slug, "broken", f"not checked: {result.get('not_graded')}")
    data = result["validation"]
    reference, starter = (outcome_from_data(data[k]) if data[k] else None for k in ("reference", "starter"))
    observed = worker_observed(task, reference.probed_tests) if reference is not None else ()
    found = Validation(task.slug, data["verdict"], data["reason"], reference, starter,
                       tuple(c for c in task.contract if c.trusted), observed)
    if reference is not None:
        settle(task, reference)  # the driver's cache too, when a node elsewhere graded it
    problem = version_problem(task, leaderboard) if found.verdict == "ok" else ""
    return Validation(task.slug, "broken", problem, reference, starter) if problem else found


def version_problem(task, leaderboard) -> str:
    """The first published result of a task version fixes its content hash; a task whose
    content changed since must bump its version, or its draws would pool with the old."""
    from sb.report.published_hashes import published_hash
    fixed = published_hash(leaderboard, task.slug, task.meta.version)
    if fixed and fixed[0] != task.content_hash:
        return (f"version: the content changed since v{task.meta.version} was published ({fixed[1]}: hash {fixed[0]}, "
                f"now {task.content_hash}); bump version in meta.yaml")
    return ""


def mutants_problem(task) -> str:
    """Every hand mutant's patch loads against today's reference (`sb mutants` grades them)."""
    from sb.errors import TaskError
    try:
        _ = task.mutants
    except TaskError as exc:
        return f"mutants: {exc}"
    return ""


def contract_problem(task, test_ids: list) -> str:
    """The contract map exists, every clause names a test, and every name is a real test."""
    if not task.contract:
        return ("contract: contract.yaml is missing or empty "
                "(list each rule of prompt.md with the tests that enforce it)")
    known = set(test_ids) | {nodeid.split("[", 1)[0] for nodeid in test_ids}
    for clause in task.contract:
        unknown = [t for t in clause.tests if t not in known]
        if unknown:
            return f"contract: clause {clause.clause[:60]!r} names {unknown[0]!r}, which is not a hidden test id"
    return ""


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


def mutants_all(tasks: list, executor, references, on_result=None, first_failure: bool = False) -> list:
    """Every mutant of every task, each one unit of work on the executor, against the
    reference's ids (`references`: sb.parallel.References); a list of checks per task.
    `first_failure`: each grading stops at its first failing test (the same verdicts)."""
    from sb.parallel import in_order
    return in_order([_mutants(task, executor, references, first_failure) for task in tasks], on_result)


def _mutants(task, executor, references, first_failure: bool):
    from sb.executors.base import resolved
    from sb.parallel import then
    early = executor.precheck(task)
    if early is not None:
        return resolved(_unchecked(task, early.detail))
    return then(references.future(task),
                lambda reference: _graded_mutants(task, executor, reference, first_failure))


def _graded_mutants(task, executor, reference, first_failure: bool):
    from sb.executors.base import outcome_of
    from sb.parallel import gather, then
    if not reference.ok:
        return _unchecked(task, reference.failure.detail)
    return gather([then(executor.grading(task, task.mutant_solution(m), reference.ids, first_failure),
                        lambda result, m=m: mutant_check(task, m, outcome_of(task.slug, result)))
                   for m in task.mutants])


def _unchecked(task, detail: str) -> list:
    return [MutantCheck(task.slug, m.name, m.description, m.expected, "unchecked", detail) for m in task.mutants]


def mutant_check(task, mutant, outcome: Outcome) -> MutantCheck:
    """What grading `mutant` gave, against what its mutant.yaml expects."""
    if outcome.passed:
        actual, detail = "survives", "every hidden test passed"
    elif outcome.evidence:
        actual = "caught"
        detail = _caught_detail(outcome)
    else:
        actual, detail = "unchecked", outcome.summary()
    return MutantCheck(task.slug, mutant.name, mutant.description, mutant.expected, actual, detail)


def _caught_detail(outcome: Outcome) -> str:
    if not outcome.failed_tests:
        return outcome.summary()
    ran = outcome.failures_that_ran
    if outcome.counts.get("missing") and len(ran) == 1:  # stopped at its first failure
        return f"{outcome.status.value}: first failure {ran[0]}"
    return f"{outcome.status.value}: {len(outcome.failed_tests)} failing, e.g. {(ran or outcome.failed_tests)[0]}"


@dataclass
class GeneratedReport:
    """One task's generated mutants: counts by verdict, the survivors, stale equivalents."""

    slug: str
    results: list
    stale: list
    problem: str = ""
    wall_s: float = 0.0

    def count(self, verdict: str) -> int:
        return sum(1 for r in self.results if r.verdict == verdict)

    @property
    def survivors(self) -> list:
        return [r.id for r in self.results if r.verdict == "survived"]

    @property
    def ok(self) -> bool:
        return not self.problem and not self.survivors and not self.stale

    def to_dict(self) -> dict:
        return {"slug": self.slug, "ok": self.ok, "problem": self.problem, "wall_s": self.wall_s,
                "total": len(self.results), **{v: self.count(v) for v in ("killed", "equivalent", "survived",
                                                                          "unchecked")},
                "survivors": self.survivors, "stale_equivalents": self.stale,
                "results": [r.to_dict() for r in self.results]}


def generated_for_task(task, executor, references, first_failure: bool = False) -> GeneratedReport:
    """Every generated mutant of `task` graded on the executor (`references`:
    sb.parallel.References, shared by the command's tasks)."""
    import time
    from sb.generated import check_generated, generate, stale_equivalents
    started = time.monotonic()
    early = executor.precheck(task)
    if early is not None:
        return GeneratedReport(task.slug, [], [], problem="")
    reference = references.future(task).result()
    if not reference.ok:
        return GeneratedReport(task.slug, [], [], problem=reference.failure.detail)
    results = check_generated(task, executor, reference.ids, first_failure=first_failure)
    stale = stale_equivalents(task, {m.id for m in generate(task)})
    return GeneratedReport(task.slug, results, stale, wall_s=round(time.monotonic() - started, 1))
