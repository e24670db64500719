"""`sb run`: one model, one attempt per task, every task graded, the results written.

Each finished task is written into the results file as soon as it is graded (atomic
replace), so an interrupted sweep loses nothing that finished.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from sb import results
from sb.grading import grade, precheck, write_files
from sb.models.base import Attempt, ModelOptions
from sb.outcome import Outcome, Status
from sb.task import Task, read_tree_from_path


@dataclass
class Sweep:
    tasks: list
    adapter: object
    model: str
    sandbox: object
    options: ModelOptions = field(default_factory=ModelOptions)
    results_dir: Path = Path("results")
    keep_dir: Path | None = None
    task_set: str = "all"


def run_sweep(sweep: Sweep, on_task=None) -> tuple[dict, Path]:
    """Run every task; `on_task(entry)` after each one. Returns the document and its path."""
    started = time.monotonic()
    doc = _new_document(sweep)
    path = Path(sweep.results_dir) / f"{doc['run_id']}.json"
    expected_cache: dict = {}
    for task in sweep.tasks:
        entry = task_entry(task, solve_and_grade(task, sweep, expected_cache))
        doc["tasks"].append(entry)
        doc["wall_clock_s"] = round(time.monotonic() - started, 3)
        results.write_atomic(path, results.summarise(doc))
        if on_task:
            on_task(entry)
    return doc, path


def _new_document(sweep: Sweep) -> dict:
    now = datetime.now(timezone.utc)
    run_id = f"{now:%Y%m%dT%H%M%SZ}-{_safe(sweep.model)}-{uuid.uuid4().hex[:6]}"
    return {"schema_version": results.SCHEMA_VERSION, "run_id": run_id, "model": sweep.model,
            "adapter": sweep.adapter.name, "run_at": now.isoformat(timespec="seconds"),
            "harness_version": results.harness_version(), "task_set": sweep.task_set,
            "headline_tier": results.HEADLINE_TIER, "attempts": 1, "settings": dict(sweep.options.settings),
            "isolation": sweep.sandbox.name, "environment": results.environment(sweep.sandbox.name),
            "wall_clock_s": 0.0, "tasks": []}


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]


def solve_and_grade(task: Task, sweep: Sweep, expected_cache: dict) -> tuple[Outcome, Attempt | None]:
    early = precheck(task)
    if early is not None:
        return early, None
    expected = reference_ids(task, sweep.sandbox, expected_cache)
    if isinstance(expected, Outcome):
        return expected, None
    with tempfile.TemporaryDirectory(prefix=f"sb-solve-{task.slug}-") as tmp:
        workdir = _workdir(task, sweep, Path(tmp))
        attempt = _attempt(task, sweep, workdir)
        if not attempt.produced_files:
            return Outcome(task.slug, attempt.status, detail=attempt.detail), attempt
        left = read_tree_from_path(workdir)
    outcome = grade(task, left, sweep.sandbox, expected)
    outcome.dropped_files = sorted(set(outcome.dropped_files) | set(attempt.dropped_files))
    return outcome, attempt


def _workdir(task: Task, sweep: Sweep, tmp: Path) -> Path:
    workdir = (Path(sweep.keep_dir) / task.slug) if sweep.keep_dir else tmp / "work"
    workdir.mkdir(parents=True, exist_ok=True)
    write_files(workdir, task.starter_files)
    return workdir


def _attempt(task: Task, sweep: Sweep, workdir: Path) -> Attempt:
    try:
        return sweep.adapter.solve(sweep.model, task, workdir, sweep.options)
    except Exception as exc:  # an adapter bug is that task's adapter_error, not a dead sweep
        return Attempt(status=Status.ADAPTER_ERROR, detail=f"{type(exc).__name__}: {exc}")


def reference_ids(task: Task, sandbox, cache: dict):
    """The hidden test ids the reference passes here; an Outcome if the reference fails."""
    if task.slug not in cache:
        reference = grade(task, task.reference_files, sandbox)
        cache[task.slug] = reference.test_ids if reference.passed else Outcome(
            task.slug, Status.COLLECTION_ERROR, detail=f"the task's reference does not pass here: {reference.summary()}")
    return cache[task.slug]


def task_entry(task: Task, graded: tuple) -> dict:
    outcome, attempt = graded
    entry = {"slug": task.slug, "version": task.meta.version, "suite": task.meta.suite,
             "category": task.meta.category, "tier": task.meta.tier, "difficulty": task.meta.difficulty,
             **outcome.to_dict(), "evidence": outcome.evidence}
    entry["tokens"] = attempt.usage if attempt else None
    entry["usd_cost"] = attempt.usd_cost if attempt else None
    entry["model_answered"] = attempt.model_answered if attempt else None
    entry["transport_retries"] = attempt.transport_retries if attempt else 0
    return entry
