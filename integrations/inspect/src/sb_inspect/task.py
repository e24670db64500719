"""The `scratchbench` Inspect task: one sample per scratchbench task, answered in one turn."""

from __future__ import annotations

import logging

import sb
from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ResponseSchema
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema

from sb_inspect.scoring import in_grading_slot, pass_rate_over_epochs, sb_grader, task_named

logger = logging.getLogger(__name__)

TOOL_LOOP_REASON = ("a tool_loop task's conversation is driven by `sb run` with the task's own tools and "
                    "recorded by the harness; the Inspect task answers in one turn only (run it with `sb run`)")


@task
def scratchbench(tasks: str | list[str] | None = None, suite: str | None = None, tier: str = "all",
                 set_name: str | None = None, isolation: str | None = None) -> Task:
    """scratchbench's hidden-test tasks, graded by scratchbench in its sandbox.

    Args:
        tasks: slugs, comma-separated or a list (default: every installed task that fits the filters).
        suite: only this suite (ml, coding, production).
        tier: laptop, accelerated or all.
        set_name: only the tasks of this set (v1, ...).
        isolation: the grading sandbox: bwrap (default) or none (no isolation, trusted models only).
    """
    sb.choose_sandbox(isolation)  # an unusable sandbox stops here, before any model is asked
    slugs = _slugs(tasks)
    chosen = sb.find_tasks(slugs, suite=suite, tier=tier, set_name=set_name)
    tool_loops = [t.slug for t in chosen if t.meta.kind == "tool_loop"]
    if tool_loops and slugs:
        raise ValueError(f"cannot run {', '.join(tool_loops)} in Inspect: {TOOL_LOOP_REASON}")
    if tool_loops:
        logger.warning("left out %s: %s", ", ".join(tool_loops), TOOL_LOOP_REASON)
    samples = [_sample(t) for t in chosen if t.meta.kind != "tool_loop"]
    if not samples:
        raise ValueError("no scratchbench task matches the selection")
    return Task(dataset=MemoryDataset(samples, name="scratchbench"), solver=answer_once(isolation),
                scorer=sb_grader(isolation), epochs=Epochs(1, pass_rate_over_epochs()),
                metadata={"scratchbench": sb_version(), "left_out": {s: "tool_loop" for s in tool_loops}})


def _slugs(tasks) -> list | None:
    if tasks is None or tasks == "all":
        return None
    names = tasks.split(",") if isinstance(tasks, str) else list(tasks)
    return [n.strip() for n in names if n.strip()] or None


def _sample(task: sb.Task) -> Sample:
    """The input is the very messages `sb` sends, the system message included as a message:
    Inspect's system_message() solver would format sb's braces as a template."""
    system, user = sb.solver_messages(task)
    meta = task.meta
    return Sample(id=task.slug, input=[ChatMessageSystem(content=system["content"]),
                                       ChatMessageUser(content=user["content"])],
                  target="the hidden tests pass",
                  metadata={"slug": task.slug, "version": meta.version, "content_hash": task.content_hash,
                            "kind": meta.kind, "suite": meta.suite, "category": meta.category, "tier": meta.tier,
                            "difficulty": meta.difficulty, "declared_files": list(task.declared_files)})


@solver
def answer_once(isolation: str | None = None) -> Solver:
    """One generate, with the files schema as structured output where the task wants files. A
    task that cannot be measured here (missing deps, no device, a reference that fails on
    this toolchain) is not sent to the model at all, as `sb run` does not send it."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = task_named(str(state.sample_id))
        if await in_grading_slot(sb.precheck, task, isolation) is not None:
            state.completed = True
            return state
        schema = sb.reply_schema(task)
        if schema is None:
            return await generate(state)
        files = ResponseSchema(name="files", json_schema=JSONSchema.model_validate(schema), strict=True)
        return await generate(state, response_schema=files)
    return solve


def sb_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("scratchbench")
    except PackageNotFoundError:
        return "0+unknown"
