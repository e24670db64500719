"""`sb run`: one model, one attempt per task, every task graded, the results written.

Each finished task is written into its draw's results file the moment it is graded
(atomic replace), so a sweep killed at any point loses nothing that finished; `--resume`
finds that file by the sweep's key (the same command line) and solves only what is left.
Model calls (`concurrency`) and gradings (`jobs`) are bounded separately.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from sb import results
from sb.errors import SbError
from sb.grading import grade, precheck, write_files
from sb.interrupt import temporary_directory
from sb.names import safe_name
from sb.models.base import Attempt, ModelOptions
from sb.outcome import Outcome, Status
from sb.solver_output import read_solver_output
from sb.task import Task


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
    jobs: int = 1
    concurrency: int = 1
    draws: int = 1
    group_id: str | None = None

    @property
    def key(self) -> str:
        """Identifies the command line: the same sweep asked again resumes, another does not."""
        spec = {"model": f"{self.adapter.name}:{self.model}", "tasks": sorted(t.slug for t in self.tasks),
                "settings": self.options.settings, "base_url": self.options.base_url,
                "isolation": self.sandbox.name, "draws": self.draws}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def run_draws(sweep: Sweep, on_task=None, resume: bool = False) -> list:
    """Every draw of the sweep (`--repeat N`), each in its own results file; no draw sees another.
    The sweep's group is locked while it runs, so a second `--resume` cannot work on it too."""
    sweep.group_id = sweep.group_id or _group_id(sweep, resume)
    from sb.interrupt import set_note
    with group_lock(sweep):
        set_note(f"finished tasks are in {sweep.results_dir}; `sb run ... --resume` continues")
        return [run_sweep(sweep, draw, on_task, resume) for draw in range(1, sweep.draws + 1)]


def lock_path(sweep: Sweep) -> Path:
    """Outside the results folder (which holds only results files), keyed by that folder and
    the group, so every sb process that could resume this sweep takes the same lock."""
    from sb.expected import cache_dir
    where = hashlib.sha256(str(Path(sweep.results_dir).resolve()).encode()).hexdigest()[:12]
    folder = cache_dir() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{where}-{sweep.group_id}.lock"


@contextmanager
def group_lock(sweep: Sweep):
    import fcntl
    handle = open(lock_path(sweep), "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise SbError(f"sweep {sweep.group_id} is being run by another sb process right now; "
                      "wait for it to finish (or stop it) before resuming") from None
    try:
        yield
    finally:
        handle.close()


def _group_id(sweep: Sweep, resume: bool) -> str:
    if resume:
        previous = find_unfinished(sweep)
        if previous:
            return previous[0]["group_id"]
    return f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def find_unfinished(sweep: Sweep) -> list:
    """Results documents of this sweep's key that did not complete, newest first."""
    found = []
    for path in sorted(Path(sweep.results_dir).glob(f"*-{sweep.key}-d*.json"), reverse=True):
        try:
            doc = results.load(path)
        except SbError as exc:  # never start over silently: the paid tasks in it would be solved again
            raise SbError(f"cannot resume: {exc} (move the file aside to start this sweep over)") from None
        if not doc.get("complete"):
            found.append(doc)
    return found


def run_sweep(sweep: Sweep, draw: int = 1, on_task=None, resume: bool = False) -> tuple[dict, Path]:
    """One draw: every task solved once and graded. Returns the document and its path."""
    path = Path(sweep.results_dir) / f"{sweep.group_id}-{safe_name(sweep.model, 60)}-{sweep.key}-d{draw}.json"
    doc = _resumed(path) if resume else None
    if doc is not None and doc.get("complete"):
        return doc, path
    doc = doc or _new_document(sweep, draw)
    done = {e["slug"] for e in doc["tasks"]}
    pending = [t for t in sweep.tasks if t.slug not in done]
    runner = _Runner(sweep, doc, path, on_task)
    runner.run(pending)
    if runner.stopped:
        from sb.errors import Unavailable
        raise Unavailable(runner.stopped)
    order = {t.slug: i for i, t in enumerate(sweep.tasks)}
    doc["tasks"].sort(key=lambda e: order.get(e["slug"], len(order)))
    doc["complete"] = True
    results.write_atomic(path, results.summarise(doc))
    return doc, path


def _resumed(path: Path):
    if not path.exists():
        return None
    doc = results.load(path)
    doc["resumed"] = doc.get("resumed", 0) + 1
    return doc


class _Runner:
    """Solves and grades pending tasks on a pool; persists each under a lock as it finishes."""

    def __init__(self, sweep: Sweep, doc: dict, path: Path, on_task):
        self.sweep, self.doc, self.path, self.on_task = sweep, doc, path, on_task
        self.lock = threading.Lock()
        self.model_slots = threading.Semaphore(max(1, sweep.concurrency))
        self.grade_slots = threading.Semaphore(max(1, sweep.jobs))
        self.references: dict = {}
        self.started = time.monotonic() - float(doc.get("wall_clock_s") or 0.0)
        self.transport_failures_in_a_row = 0
        self.stopped: str | None = None  # why the sweep stopped early (the server is down), if it did

    def run(self, pending: list) -> None:
        workers = max(1, self.sweep.concurrency, self.sweep.jobs)
        if workers == 1:
            for task in pending:
                self.finish(task)
            return
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(self.finish, pending))

    def reference(self, task: Task):
        """The reference's ids for `task`, graded at most once per run (and cached on disk)."""
        from sb.expected import reference_ids
        if task.slug not in self.references:
            self.references[task.slug] = reference_ids(task, self.sweep.sandbox)
        return self.references[task.slug]

    def finish(self, task: Task) -> None:
        if self.stopped:
            return  # left for --resume: never recorded as the model's failure
        graded = solve_and_grade(task, self)
        self._count_transport_failure(graded[1])
        entry = task_entry(task, graded)
        with self.lock:
            self.doc["tasks"].append(entry)
            self.doc["wall_clock_s"] = round(time.monotonic() - self.started, 3)
            results.write_atomic(self.path, results.summarise(self.doc))
            if self.on_task:
                self.on_task(entry, self.doc, len(self.sweep.tasks))


    def _count_transport_failure(self, attempt) -> None:
        """After MAX_TRANSPORT_FAILURES attempts in a row failed in transport (the server is
        down, the key is revoked), stop: the rest of the sweep would only repeat them."""
        with self.lock:
            if attempt is None or not attempt.transport_failure:
                self.transport_failures_in_a_row = 0
                return
            self.transport_failures_in_a_row += 1
            if self.transport_failures_in_a_row >= MAX_TRANSPORT_FAILURES and not self.stopped:
                self.stopped = (f"stopped after {self.transport_failures_in_a_row} model calls in a row failed in "
                                f"transport (last: {attempt.detail}); finished tasks are kept, --resume continues")


MAX_TRANSPORT_FAILURES = 3


def _new_document(sweep: Sweep, draw: int) -> dict:
    now = datetime.now(timezone.utc)
    environment = results.environment(sweep.sandbox.name)
    return {"schema_version": results.SCHEMA_VERSION, "run_id": f"{sweep.group_id}-d{draw}",
            "group_id": sweep.group_id, "sweep_key": sweep.key, "draw": draw, "draws": sweep.draws,
            "model": sweep.model, "adapter": sweep.adapter.name, "run_at": now.isoformat(timespec="seconds"),
            "harness_version": results.harness_version(), "task_set": sweep.task_set,
            "tasks_requested": [t.slug for t in sweep.tasks], "headline_tier": results.HEADLINE_TIER,
            "attempts": 1, "settings": dict(sweep.options.settings), "base_url": sweep.options.base_url,
            "endpoint": sweep.adapter.endpoint(sweep.options),
            "official_endpoint": sweep.adapter.official_endpoint(),
            "isolation": sweep.sandbox.name, "environment": environment,
            "toolchain_fingerprint": environment["fingerprint"],
            "wall_clock_s": 0.0, "complete": False, "tasks": []}


def solve_and_grade(task: Task, runner: _Runner) -> tuple[Outcome, Attempt | None]:
    sweep = runner.sweep
    early = precheck(task)
    if early is not None:
        return early, None
    with runner.grade_slots:
        reference = runner.reference(task)
    if not reference.ok:
        return reference.failure, None
    with temporary_directory(f"sb-solve-{task.slug}-") as tmp:
        workdir = _workdir(task, sweep, Path(tmp))
        with runner.model_slots:
            attempt = _attempt(task, sweep, workdir)
        if not attempt.produced_files:
            return Outcome(task.slug, attempt.status, detail=attempt.detail), attempt
        left = read_solver_output(workdir, task.starter_files)
    if reference.outcome is not None and left.files == _declared(task, task.reference_files):
        outcome = copy.deepcopy(reference.outcome)  # the very files just graded: the same verdict
    else:
        with runner.grade_slots:
            outcome = grade(task, left.files, sweep.sandbox, reference.ids)
    outcome = left.annotate(outcome)
    outcome.dropped_files = sorted(set(outcome.dropped_files) | set(attempt.dropped_files))
    return outcome, attempt


def _declared(task: Task, files: dict) -> dict:
    return {name: data for name, data in files.items() if name in task.starter_files}


def _workdir(task: Task, sweep: Sweep, tmp: Path) -> Path:
    workdir = (Path(sweep.keep_dir) / task.slug) if sweep.keep_dir else tmp / "work"
    workdir.mkdir(parents=True, exist_ok=True)
    write_files(workdir, task.starter_files)
    return workdir


def _attempt(task: Task, sweep: Sweep, workdir: Path) -> Attempt:
    try:
        if task.meta.kind == "tool_loop" and not sweep.adapter.leaves_starter:
            return _tool_loop_attempt(task, sweep, workdir)
        return sweep.adapter.solve(sweep.model, task, workdir, sweep.options)
    except Exception as exc:  # an adapter bug is that task's adapter_error, not a dead sweep
        return Attempt(status=Status.ADAPTER_ERROR, detail=f"{type(exc).__name__}: {exc}")


def _tool_loop_attempt(task: Task, sweep: Sweep, workdir: Path) -> Attempt:
    """The harness drives the loop and writes the transcript itself: a model never gets to
    write the record it is graded on."""
    if not sweep.adapter.supports_tool_loops:
        return Attempt(status=Status.ADAPTER_ERROR, detail=f"adapter {sweep.adapter.name!r} cannot drive tool loops")
    from sb.toolloop import drive_tool_loop
    return drive_tool_loop(sweep.adapter, sweep.model, task, workdir, sweep.options)


def task_entry(task: Task, graded: tuple) -> dict:
    outcome, attempt = graded
    entry = {"slug": task.slug, "version": task.meta.version, "content_hash": task.content_hash,
             "holdout": task.meta.holdout, "suite": task.meta.suite,
             "category": task.meta.category, "tier": task.meta.tier, "difficulty": task.meta.difficulty,
             **outcome.to_dict(), "evidence": outcome.evidence}
    entry["tokens"] = attempt.usage if attempt else None
    entry["usd_cost"] = attempt.usd_cost if attempt else None
    entry["model_answered"] = attempt.model_answered if attempt else None
    entry["transport_retries"] = attempt.transport_retries if attempt else 0
    entry["price"] = attempt.price if attempt else None
    entry["exit_status"] = attempt.exit_status if attempt else None
    entry["usage_missing"] = attempt.usage_missing if attempt else False
    if attempt and attempt.turn_costs:
        entry["turn_costs"] = attempt.turn_costs
    return entry
