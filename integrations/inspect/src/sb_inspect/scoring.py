"""The scorer (scratchbench's grader, in its sandbox), the rate that counts evidence only,
and the epoch reducer that keeps the two apart.

A no-evidence outcome (the model's output could not be parsed, it was cut off, the task's
dependencies are missing here...) scores INCORRECT with `evidence: false` in its metadata,
and `pass_rate` leaves it out of the numerator and the denominator, as `sb` does. Inspect's
`accuracy` would count it as a failure; with nothing measured, the rate is NaN, never 0.
"""

from __future__ import annotations

import functools
import math
import os

import anyio
import sb
from inspect_ai.scorer import (CORRECT, INCORRECT, Metric, SampleScore, Score, ScoreReducer, Scorer, Target, metric,
                               score_reducer, scorer, value_to_float)
from inspect_ai.solver import TaskState
from inspect_ai.util import concurrency

GRADING_SLOTS = "scratchbench-grading"
TRUNCATED_STOPS = ("max_tokens", "model_length")


@functools.lru_cache(maxsize=None)
def task_named(slug: str) -> sb.Task:
    return sb.find_tasks([slug])[0]


async def in_grading_slot(function, *args):
    """Run a grading (or the reference's, in a precheck) on a thread, at most one per core at once."""
    async with concurrency(GRADING_SLOTS, os.cpu_count() or 1, visible=False):
        return await anyio.to_thread.run_sync(functools.partial(function, *args))


def _evidence(item: SampleScore) -> bool:
    return bool((item.score.metadata or {}).get("evidence"))


@metric
def pass_rate() -> Metric:
    """Passed over measured: no-evidence samples are out of both (NaN when none was measured)."""
    to_float = value_to_float()

    def compute(scores: list[SampleScore]) -> float:
        counted = [to_float(item.score.value) for item in scores if _evidence(item)]
        return sum(counted) / len(counted) if counted else math.nan
    return compute


@metric
def measured() -> Metric:
    """How many samples gave evidence: the denominator of pass_rate."""
    def compute(scores: list[SampleScore]) -> int:
        return sum(1 for item in scores if _evidence(item))
    return compute


@scorer(metrics=[pass_rate(), measured()])
def sb_grader(isolation: str | None = None) -> Scorer:
    """CORRECT when every hidden test the reference passes passes; the failing test ids are the
    explanation and the whole Outcome is in the metadata."""
    async def score(state: TaskState, target: Target) -> Score:
        task = task_named(str(state.sample_id))
        outcome = await in_grading_slot(grade_output, task, state, isolation)
        return outcome_score(outcome, state)
    return score


def grade_output(task: sb.Task, state: TaskState, isolation: str | None) -> sb.Outcome:
    early = sb.precheck(task, isolation)
    if early is not None:
        return early
    output = state.output
    if output.stop_reason in TRUNCATED_STOPS:
        return sb.Outcome(task.slug, sb.Status.TRUNCATED, detail=f"cut off at the output limit ({output.stop_reason})")
    if output.stop_reason == "content_filter":
        return sb.Outcome(task.slug, sb.Status.ADAPTER_ERROR, detail="refused (content_filter)")
    return sb.grade_reply(task, output.completion, isolation)


def outcome_score(outcome: sb.Outcome, state: TaskState) -> Score:
    record = outcome.to_dict()
    if outcome.status == sb.Status.FAILED and outcome.failed_tests:
        explanation = "failing tests:\n" + "\n".join(outcome.failed_tests)
    else:
        explanation = outcome.summary()
    return Score(value=CORRECT if outcome.passed else INCORRECT, answer=outcome.status.value,
                 explanation=explanation, reason=None if outcome.evidence else outcome.status.value,
                 metadata={"status": outcome.status.value, "evidence": outcome.evidence, "outcome": record,
                           "model_answered": state.output.model or None})


@score_reducer(name="pass_rate_over_epochs")
def pass_rate_over_epochs() -> ScoreReducer:
    """A sample's epochs reduced as sb pools draws: the mean over the epochs that gave evidence,
    no evidence if none did (Inspect's mean would count every unmeasured epoch as a failure)."""
    to_float = value_to_float()

    def reduce(scores: list[Score]) -> Score:
        counted = [s for s in scores if (s.metadata or {}).get("evidence")]
        statuses = [(s.metadata or {}).get("status") for s in scores]
        first = (counted or scores)[0]
        if len(scores) == 1:
            return first
        value = sum(to_float(s.value) for s in counted) / len(counted) if counted else 0.0
        return Score(value=value, answer=first.answer, explanation=first.explanation,
                     reason=None if counted else first.reason,
                     metadata={**(first.metadata or {}), "evidence": bool(counted), "epoch_statuses": statuses,
                               "measured_epochs": len(counted)})
    return reduce
