"""`sb run`: models attempt every task once, every answer graded, the results written.

Each model answer is written into its draw's results file the moment it arrives, and each
task again the moment it is graded (atomic replace), so a sweep killed at any point loses
no answer that was paid for; `--resume` finds that file by the sweep's key (the same
command line), grades the answers kept ungraded, and solves only what is left, whichever
executor graded the first part.

Several models (one Sweep each) and all their draws are scheduled together: model calls
run on this machine, each model with its own concurrency limit (rate limits are per key);
gradings go to the executor (sb.executors: this machine, or a Ray cluster), each
reference once for all of them. Only this process writes results files.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from sb import results
from sb.answers import from_record, to_record
from sb.errors import SbError
from sb.executors.base import outcome_of, resolved
from sb.grading import write_files
from sb.interrupt import temporary_directory
from sb.names import safe_name
from sb.models.base import Attempt, ModelAdapter, ModelOptions
from sb.outcome import Outcome, Status
from sb.parallel import References, same_as_graded_reference, then
from sb.sandbox.base import Sandbox
from sb.solver_output import read_solver_output
from sb.task import Task


@dataclass
class Sweep:
    tasks: list
    adapter: ModelAdapter
    model: str
    sandbox: Sandbox
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
        """Identifies the command line: the same sweep asked again resumes, another does not
        (the executor is not part of it: a sweep started here may resume on a cluster)."""
        spec = {"model": f"{self.adapter.name}:{self.model}", "tasks": sorted(t.slug for t in self.tasks),
                "settings": self.options.settings, "base_url": self.options.base_url,
                "isolation": self.sandbox.name, "draws": self.draws}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def run_draws(sweep: Sweep, on_task=None, resume: bool = False, executor=None) -> list:
    """Every draw of one sweep (`--repeat N`), each in its own results file."""
    return run_sweeps([sweep], on_task, resume, executor)


def run_sweeps(sweeps: list, on_task=None, resume: bool = False, executor=None, on_resume=None,
               on_phase=None) -> list:
    """Every draw of every sweep, scheduled together; [(doc, path)] sweep by sweep, draw by
    draw. `on_phase(doc, slug, phase)` hears when a task's model call starts ("solving") and
    when its grading is handed to the executor ("grading"), from any thread. Each sweep's
    group is locked while it runs, so a second `--resume` cannot work on it too. Without an
    executor, the local one grades `jobs` at once. A sweep stopped by failing transport keeps
    what finished and raises Unavailable once the others are done."""
    from sb.interrupt import set_note
    for sweep in sweeps:
        sweep.group_id = sweep.group_id or _group_id(sweep, resume)
    with ExitStack() as stack:
        for sweep in sweeps:
            stack.enter_context(group_lock(sweep))
        if resume and on_resume:  # said once the sweep is this process's, never before a refusal
            on_resume(sweeps)
        set_note(f"finished tasks are in {sweeps[0].results_dir}; `sb run ... --resume` continues")
        executor = executor or stack.enter_context(_local_executor(sweeps))
        executor.start(_all_tasks(sweeps), sweeps[0].sandbox)
        several = len(sweeps) > 1 or sweeps[0].draws > 1
        draws = [_draw(state, n, resume, executor, several)
                 for state in map(_SweepState, sweeps) for n in range(1, state.sweep.draws + 1)]
        _Schedule(executor, on_task, on_phase).run(draws)
    stopped = sorted({d.state.stopped for d in draws if d.state.stopped})
    if stopped:
        from sb.errors import Unavailable
        raise Unavailable("; ".join(stopped))
    return [(d.doc, d.path) for d in draws]


@contextmanager
def _local_executor(sweeps: list):
    from sb.executors.local import LocalExecutor
    with LocalExecutor(jobs=max(s.jobs for s in sweeps)) as executor:
        yield executor


def _all_tasks(sweeps: list) -> list:
    return list({t.slug: t for sweep in sweeps for t in sweep.tasks}.values())


def lock_path(sweep: Sweep) -> Path:
    """Outside the results folder (which holds only results files), keyed by that folder and
    the group, so every sb process that could resume this sweep takes the same lock."""
    from sb.cache import cache_dir
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


@dataclass
class _SweepState:
    """What the draws of one sweep share: its model-call pool, and whether it stopped."""

    sweep: Sweep
    lock: threading.Lock = field(default_factory=threading.Lock)
    transport_failures_in_a_row: int = 0
    stopped: str | None = None  # why the sweep stopped early (the server is down), if it did
    pool: ThreadPoolExecutor | None = None


@dataclass
class _Draw:
    sweep: Sweep
    number: int
    doc: dict
    path: Path
    pending: list
    state: _SweepState
    keep_dir: Path | None
    started: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)  # the results file: answers and entries

    @property
    def finished(self) -> bool:
        return bool(self.doc.get("complete"))


def _draw(state: _SweepState, number: int, resume: bool, executor, several: bool) -> _Draw:
    sweep = state.sweep
    path = Path(sweep.results_dir) / f"{sweep.group_id}-{safe_name(sweep.model, 60)}-{sweep.key}-d{number}.json"
    doc = _resumed(path) if resume else None
    doc = doc or _new_document(sweep, number)
    _record_executor(doc, executor)
    done = {e["slug"] for e in doc["tasks"]}
    pending = [] if doc.get("complete") else [t for t in sweep.tasks if t.slug not in done]
    keep = sweep.keep_dir
    if keep is not None and several:  # draws run at once: one folder each
        keep = Path(keep) / f"{safe_name(sweep.model, 60)}-d{number}"
    return _Draw(sweep, number, doc, path, pending, state, keep,
                 time.monotonic() - float(doc.get("wall_clock_s") or 0.0))


def _record_executor(doc: dict, executor) -> None:
    """Which executor graded this draw (the latest), and every one that worked on it."""
    described = executor.describe()
    doc["executor"] = described
    used = doc.setdefault("executors", [])
    if not used or used[-1] != described["name"]:
        used.append(described["name"])


def _resumed(path: Path):
    if not path.exists():
        return None
    doc = results.load(path)
    doc["resumed"] = doc.get("resumed", 0) + 1
    return doc


class _Schedule:
    """Every pending attempt of every draw, as a chain of Futures: the reference's ids
    (once per task), the model call (on its sweep's pool), the grading (on the executor).
    The calling thread persists each attempt as it finishes; nothing else writes files."""

    def __init__(self, executor, on_task, on_phase=None):
        self.executor, self.on_task = executor, on_task
        self.on_phase = on_phase or (lambda doc, slug, phase: None)
        self.references = References(executor)

    def run(self, draws: list) -> None:
        states = {id(d.state): d.state for d in draws}.values()
        try:
            for state in states:
                state.pool = ThreadPoolExecutor(max_workers=max(1, state.sweep.concurrency),
                                                thread_name_prefix="sb-model")
            attempts = {self._attempt(draw, task): (draw, task) for draw in draws for task in draw.pending}
            for future in as_completed(attempts):
                draw, task = attempts[future]
                graded = future.result()
                if graded is not None:  # None: left for --resume (the sweep stopped)
                    self._persist(draw, task, graded)
        except BaseException:
            self.executor.cancel()
            raise
        finally:
            for state in states:
                if state.pool:
                    state.pool.shutdown(wait=False, cancel_futures=True)
        for draw in draws:
            if not draw.state.stopped:
                self._complete(draw)

    def _attempt(self, draw: _Draw, task: Task):
        early = self.executor.precheck(task)
        if early is not None:
            return resolved((early, None, None))
        return then(self.references.future(task), lambda reference: self._solve(draw, task, reference))

    def _solve(self, draw: _Draw, task: Task, reference):
        if not reference.ok:
            return reference.failure, None, None
        kept = draw.doc.get("received", {}).get(task.slug)
        if kept is not None:  # answered before the sweep was stopped: graded, never asked again
            return self._grade(draw, task, reference, from_record(kept))
        assert draw.state.pool is not None  # made when the sweep's first draw starts
        solved = draw.state.pool.submit(self._solving, task, draw)
        return then(solved, lambda answer: self._grade(draw, task, reference, self._keep(draw, task, answer)))

    def _solving(self, task: Task, draw: _Draw):
        self.on_phase(draw.doc, task.slug, "solving")
        return _solve(task, draw)

    def _keep(self, draw: _Draw, task: Task, answer):
        """Write the answer into the results file before it is graded (sb.answers)."""
        if answer is not None:
            with draw.lock:
                draw.doc.setdefault("received", {})[task.slug] = to_record(*answer)
                results.write_atomic(draw.path, results.summarise(draw.doc))
        return answer

    def _grade(self, draw: _Draw, task: Task, reference, answer):
        if answer is None:
            return None
        attempt, left = answer
        if not attempt.produced_files:
            return Outcome(task.slug, attempt.status, detail=attempt.detail), attempt, None
        copied = same_as_graded_reference(task, left.files, reference)
        if copied is not None:
            return _annotated(copied, left, attempt), attempt, None
        self.on_phase(draw.doc, task.slug, "grading")
        graded = self.executor.grading(task, left.files, reference.ids)
        return then(graded, lambda result: (_annotated(outcome_of(task.slug, result), left, attempt), attempt,
                                            result.get("node")))

    def _persist(self, draw: _Draw, task: Task, graded: tuple) -> None:
        outcome, attempt, node = graded
        entry = {**task_entry(task, (outcome, attempt)), "executor": self.executor.name, "node": node}
        if attempt is not None and attempt.agent_stderr:
            entry["agent_stderr"] = _write_agent_stderr(draw.path, task.slug, attempt.agent_stderr)
        with draw.lock:
            draw.doc["tasks"].append(entry)
            draw.doc.get("received", {}).pop(task.slug, None)
            draw.doc["wall_clock_s"] = round(time.monotonic() - draw.started, 3)
            results.write_atomic(draw.path, results.summarise(draw.doc))
        if self.on_task:
            self.on_task(entry, draw.doc, len(draw.sweep.tasks))

    def _complete(self, draw: _Draw) -> None:
        if draw.finished:
            return
        order = {t.slug: i for i, t in enumerate(draw.sweep.tasks)}
        draw.doc["tasks"].sort(key=lambda e: order.get(e["slug"], len(order)))
        draw.doc.pop("received", None)
        draw.doc["complete"] = True
        results.write_atomic(draw.path, results.summarise(draw.doc))


def _annotated(outcome: Outcome, left, attempt: Attempt) -> Outcome:
    """With what the solver left that was not graded (undeclared names, unreadable files)."""
    outcome = left.annotate(outcome)
    outcome.dropped_files = sorted(set(outcome.dropped_files) | set(attempt.dropped_files))
    return outcome


def _solve(task: Task, draw: _Draw):
    """One model call, on the driver, in a fresh working directory: (attempt, files left),
    or None when the sweep has stopped (the task is left for --resume, never a failure)."""
    state = draw.state
    if state.stopped or _key_rejected(state):
        return None
    with temporary_directory(f"sb-solve-{task.slug}-") as tmp:
        workdir = _workdir(task, draw.keep_dir, Path(tmp))
        attempt = _attempt(task, draw.sweep, workdir)
        left = read_solver_output(workdir, task.starter_files) if attempt.produced_files else None
    _count_transport_failure(state, attempt)
    return attempt, left


def _key_rejected(state: _SweepState) -> bool:
    """The API refused the sweep's key (HTTP 401/403), in this sweep or another of the same
    adapter, endpoint and key: stop at once, the rest is left for --resume."""
    reason = state.sweep.adapter.key_rejected(state.sweep.options)
    if reason and not state.stopped:
        state.stopped = f"stopped at once: {reason}; finished tasks are kept, --resume continues"
    return bool(reason)


def _count_transport_failure(state: _SweepState, attempt: Attempt) -> None:
    """After MAX_TRANSPORT_FAILURES attempts in a row failed in transport (the server is
    down, overloaded), stop: the rest of the sweep would only repeat them. A refused key
    stops it at once (`_key_rejected`)."""
    with state.lock:
        if _key_rejected(state):
            return
        if not attempt.transport_failure:
            state.transport_failures_in_a_row = 0
            return
        state.transport_failures_in_a_row += 1
        if state.transport_failures_in_a_row >= MAX_TRANSPORT_FAILURES and not state.stopped:
            state.stopped = (f"stopped after {state.transport_failures_in_a_row} model calls in a row failed in "
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


def _workdir(task: Task, keep_dir: Path | None, tmp: Path) -> Path:
    workdir = (Path(keep_dir) / task.slug) if keep_dir else tmp / "work"
    workdir.mkdir(parents=True, exist_ok=True)
    write_files(workdir, task.starter_files)
    return workdir


def _attempt(task: Task, sweep: Sweep, workdir: Path) -> Attempt:
    try:
        if task.meta.kind == "tool_loop" and not sweep.adapter.leaves_starter:
            return _tool_loop_attempt(task, sweep, workdir)
        return sweep.adapter.solve(sweep.model, task, workdir, sweep.options)
    except Exception as exc:  # noqa: BLE001 - an adapter bug is that task's adapter_error, not a dead sweep
        return Attempt(status=Status.ADAPTER_ERROR, detail=f"{type(exc).__name__}: {exc}")


def _tool_loop_attempt(task: Task, sweep: Sweep, workdir: Path) -> Attempt:
    """The harness drives the loop and writes the transcript itself: a model never gets to
    write the record it is graded on."""
    if not sweep.adapter.supports_tool_loops:
        return Attempt(status=Status.ADAPTER_ERROR, detail=f"adapter {sweep.adapter.name!r} cannot drive tool loops")
    from sb.toolloop import drive_tool_loop
    return drive_tool_loop(sweep.adapter, sweep.model, task, workdir, sweep.options)


def _write_agent_stderr(results_path: Path, slug: str, text: str) -> str:
    """An external agent's stderr, beside the results file: `<results stem>.stderr/<slug>.txt`;
    returns that path relative to the results folder (what the task's entry names)."""
    folder = results_path.with_name(results_path.stem + ".stderr")
    folder.mkdir(exist_ok=True)
    (folder / f"{slug}.txt").write_text(text, encoding="utf-8")
    return f"{folder.name}/{slug}.txt"


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
