"""Generated mutants: cosmic-ray's operators applied to a task's reference, each graded.

cosmic-ray (an optional dependency, in the `dev` extra) supplies the mutation operators
and the occurrence numbering; this module only generates each mutant's source, grades it
through the normal grader against the reference's test ids, and sorts the results:
killed, equivalent (listed in the task's equivalent_mutants.yaml with a reason), or
surviving (a test is missing). A mutant's id is `file:operator:occurrence`, stable for as
long as the reference file does not change.

The operators are a curated subset of cosmic-ray's: the mistakes a person makes (an
off-by-one comparison, a flipped sign or operator, a constant off by one, a negated
condition, a loop that never runs, a swallowed exception), not every cross product of
binary operators.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sb.errors import SbError

OPERATORS = (
    "core/NumberReplacer", "core/ReplaceTrueWithFalse", "core/ReplaceFalseWithTrue", "core/ReplaceAndWithOr",
    "core/ReplaceOrWithAnd", "core/AddNot", "core/ReplaceUnaryOperator_Delete_Not",
    "core/ReplaceUnaryOperator_Delete_USub", "core/ZeroIterationForLoop", "core/ReplaceBreakWithContinue",
    "core/ReplaceContinueWithBreak", "core/ExceptionReplacer", "core/RemoveDecorator",
    "core/ReplaceBinaryOperator_Add_Sub", "core/ReplaceBinaryOperator_Sub_Add", "core/ReplaceBinaryOperator_Mul_Div",
    "core/ReplaceBinaryOperator_Div_Mul", "core/ReplaceBinaryOperator_Div_FloorDiv",
    "core/ReplaceBinaryOperator_FloorDiv_Div", "core/ReplaceBinaryOperator_Pow_Mul",
    "core/ReplaceBinaryOperator_Mod_FloorDiv", "core/ReplaceComparisonOperator_Lt_LtE",
    "core/ReplaceComparisonOperator_LtE_Lt", "core/ReplaceComparisonOperator_Gt_GtE",
    "core/ReplaceComparisonOperator_GtE_Gt", "core/ReplaceComparisonOperator_Eq_NotEq",
    "core/ReplaceComparisonOperator_NotEq_Eq", "core/ReplaceComparisonOperator_Is_IsNot",
    "core/ReplaceComparisonOperator_IsNot_Is",
)
# No shorter limit than the task's own: under load a correct suite can take several times its
# quiet wall time, and a timeout counts as killed, so a tighter cap would invent kills.


@dataclass(frozen=True)
class GeneratedMutant:
    id: str
    file: str
    source: bytes


@dataclass
class GeneratedResult:
    slug: str
    id: str
    verdict: str  # killed | equivalent | survived | unchecked
    detail: str = ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _cosmic_ray():
    try:
        from cosmic_ray import mutating, plugins
    except ImportError:
        raise SbError("generated mutants need cosmic-ray: pip install 'scratchbench[dev]' "
                      "(or pip install cosmic-ray==8.7.0)") from None
    return mutating, plugins


def generate(task) -> list:
    """Every mutant of every Python file the reference declares, deduplicated by source."""
    mutating, plugins = _cosmic_ray()
    found, seen = [], set()
    for name in sorted(task.reference_files):
        if name not in task.starter_files or not name.endswith(".py"):
            continue
        original = task.reference_files[name].decode("utf-8")
        seen.add((name, original))
        for op_name in OPERATORS:
            operator = plugins.get_operator(op_name)()
            occurrence = 0
            while True:
                try:
                    code = mutating.mutate_code(original, operator, occurrence)
                except Exception:  # noqa: BLE001 - an operator cosmic-ray cannot apply to this syntax: skip it
                    break
                if code is None:
                    break
                if (name, code) not in seen:
                    seen.add((name, code))
                    found.append(GeneratedMutant(f"{name}:{op_name}:{occurrence}", name, code.encode("utf-8")))
                occurrence += 1
    return found


def check_generated(task, executor, expected: list, on_result=None, first_failure: bool = False) -> list:
    """Grade each generated mutant of `task` on the (started) executor, against the
    reference's test ids `expected`; the results in generation order. `first_failure`: each
    grading stops at its first failing test (the same killed or survived verdicts)."""
    from sb.executors.base import outcome_of
    from sb.parallel import in_order, then

    def verdict(mutant: GeneratedMutant, result: dict) -> GeneratedResult:
        outcome = outcome_of(task.slug, result)
        if outcome.passed:
            reason = task.equivalent_reason(mutant.id, mutant.file)
            return GeneratedResult(task.slug, mutant.id, "survived" if reason is None else "equivalent", reason or "")
        if not outcome.evidence:
            return GeneratedResult(task.slug, mutant.id, "unchecked", outcome.summary())
        detail = (outcome.failures_that_ran or outcome.failed_tests or [outcome.status.value])[0]
        return GeneratedResult(task.slug, mutant.id, "killed", detail)

    futures = [then(executor.grading(task, {**task.reference_files, m.file: m.source}, expected, first_failure),
                    lambda result, m=m: verdict(m, result)) for m in generate(task)]
    return in_order(futures, on_result)


def stale_equivalents(task, generated_ids: set) -> list:
    """Listed equivalents that no longer name a generated mutant (the reference changed): ids,
    and files no generated mutant changes."""
    files = {mutant_id.split(":", 1)[0] for mutant_id in generated_ids}
    return sorted(set(task.equivalent_mutants) - generated_ids) + sorted(set(task.equivalent_files) - files)


def mutant_diff(task, mutant_id: str) -> str:
    """The unified diff of one generated mutant against the reference (for `--show`)."""
    import difflib
    for mutant in generate(task):
        if mutant.id == mutant_id:
            before = task.reference_files[mutant.file].decode().splitlines(keepends=True)
            after = mutant.source.decode().splitlines(keepends=True)
            return "".join(difflib.unified_diff(before, after, f"reference/{mutant.file}", mutant.id))
    raise SbError(f"{task.slug}: no generated mutant {mutant_id!r}")
