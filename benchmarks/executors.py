"""Executors side by side in one run: the local one against Ray on this machine, the
gradings the reference cache saves, and a projection of a real sweep onto N nodes.

    python benchmarks/executors.py [--tasks a,b,...] [--concurrency 16] [--jobs N] [--agent-s 2]

1. The reference cache: a sweep of three models (reference, starter, an agent that leaves
   the reference) over the tasks, in one command, on a cold cache: how many reference
   gradings ran where three separate sweeps would each grade every reference (the sweeps
   of step 2 then find every reference in the cache and grade none).
2. A sweep of every laptop task (default) by a slow external agent (sleeps --agent-s, then
   leaves the reference) at --concurrency 16, graded by the local executor and by Ray (a
   local instance on this machine, started before the clock starts), verdicts checked
   identical: wall time of each and Ray's overhead per task.
3. From the measured per-task grading cost: 6 models x 10 draws x these tasks on 1, 4 and
   16 nodes like this one, against what the models' rate limits allow.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


class Timed:
    """Wraps an executor's submit: counts the Works by kind and keeps each grading's time."""

    def __init__(self, executor):
        self.executor, self.lock = executor, threading.Lock()
        self.references = self.answers = 0
        self.worker_s: list = []
        self.inner_submit = executor.submit
        executor.submit = self.submit

    def submit(self, work):
        with self.lock:
            if work.expected is None:
                self.references += 1
            else:
                self.answers += 1
        future = self.inner_submit(work)
        future.add_done_callback(lambda f: self.worker_s.append(f.result().get("node_s") or 0.0))
        return future


def sweeps_of(tasks, models, sandbox, results_dir, concurrency):
    from sb.models.base import ModelOptions, resolve_model
    from sb.session import default_session
    from sb.run import Sweep
    pm = default_session().pm
    return [Sweep(tasks, *resolve_model(name, pm), sandbox, ModelOptions(timeout_s=600), Path(results_dir),
                  concurrency=concurrency) for name in models]


def run(executor, sweeps) -> tuple[float, list]:
    from sb.run import run_sweeps
    started = time.perf_counter()
    runs = run_sweeps(sweeps, executor=executor)
    return time.perf_counter() - started, runs


def verdicts(runs) -> list:
    return [(e["slug"], e["status"], e["counts"], e["failed_tests"], e["detail"][:200]) for doc, _ in runs
            for e in doc["tasks"]]


def references_agent(tasks, folder: Path, sleep_s: float) -> str:
    """cmd: an external agent that waits, then leaves the task's reference files."""
    from sb.grading import write_files
    for task in tasks:
        write_files(folder / task.slug, {k: v for k, v in task.reference_files.items() if k in task.starter_files})
    wait = f"sleep {sleep_s:g} && " if sleep_s else ""
    return f"cmd:{wait}cp -R {shlex.quote(str(folder))}/$SB_TASK/. ."


def cache_figure(tasks, sandbox, scratch: Path, agent: str) -> None:
    from sb.executors.local import LocalExecutor
    models = ["reference", "starter", agent]
    with LocalExecutor(jobs=os.cpu_count() or 1) as executor:
        timed = Timed(executor)
        wall, _ = run(executor, sweeps_of(tasks, models, sandbox, scratch / "three-models", 16))
    asked = len(models) * len(tasks)
    print(f"  cold cache: {timed.references} reference gradings where 3 separate sweeps would grade {asked} "
          f"({asked - timed.references} saved); {timed.answers} answers graded; {wall:.1f}s")


def executors_figure(tasks, sandbox, scratch: Path, agent: str, concurrency: int, jobs: int) -> float:
    from sb.executors.local import LocalExecutor
    from sb.executors.ray import RayExecutor
    seen, grading_s = {}, []
    for executor in (LocalExecutor(jobs=jobs), RayExecutor(jobs=jobs)):
        with executor:
            started = time.perf_counter()
            executor.start(tasks, sandbox)
            startup = time.perf_counter() - started
            timed = Timed(executor)
            wall, runs = run(executor, sweeps_of(tasks, [agent], sandbox, scratch / executor.name, concurrency))
        seen[executor.name] = (wall, verdicts(runs))
        grading_s += timed.worker_s
        print(f"  {executor.name:5}: {wall:6.1f}s wall for {len(tasks)} tasks ({timed.answers} graded, "
              f"{timed.references} references graded: the cache had them; median grading "
              f"{statistics.median(timed.worker_s):.2f}s; startup {startup:.1f}s, not counted)")
    (local, local_verdicts), (ray, ray_verdicts) = seen["local"], seen["ray"]
    differ = [(a, b) for a, b in zip(local_verdicts, ray_verdicts) if a != b]
    assert not differ, f"the executors disagree: {differ[0]}"
    print(f"  identical verdicts; ray - local: {ray - local:+.1f}s, {(ray - local) / len(tasks) * 1000:+.0f} ms "
          f"per task ({(ray / local - 1):+.1%})")
    return statistics.mean(grading_s)


def projection(tasks: int, grading_s: float, cores: int, call_s: float, key_concurrency: int) -> None:
    """Gradings spread over nodes; model calls are bounded by each model's own rate limit."""
    models, draws = 6, 10
    attempts = models * draws * tasks
    model_wall = draws * tasks * call_s / key_concurrency  # the six models run side by side, each at its limit
    print(f"  {models} models x {draws} draws x {tasks} tasks = {attempts} attempts; a grading costs "
          f"{grading_s:.2f} core-seconds (measured); a model call {call_s:g}s at {key_concurrency} per key (assumed)")
    for nodes in (1, 4, 16):
        grading_wall = attempts * grading_s / (nodes * cores)
        bound = "grading" if grading_wall > model_wall else "model rate limits"
        print(f"  {nodes:2} node(s) of {cores} cores: grading {grading_wall / 60:6.1f} min, model calls "
              f"{model_wall / 60:6.1f} min -> {max(grading_wall, model_wall) / 60:6.1f} min, bound by {bound}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=None, help="comma-separated slugs (default: every laptop task)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--agent-s", type=float, default=2.0)
    parser.add_argument("--call-s", type=float, default=60.0, help="projection: seconds per model call")
    parser.add_argument("--key-concurrency", type=int, default=8, help="projection: model calls at once per key")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sb-bench-") as tmp:
        os.environ["SB_CACHE_DIR"] = str(Path(tmp) / "cache")  # cold: nothing graded before
        from sb.session import default_session
        installed = default_session().tasks()
        chosen = args.tasks.split(",") if args.tasks else [s for s, t in installed.items() if t.meta.tier == "laptop"]
        tasks = [installed[slug] for slug in chosen]
        sandbox = default_session().sandbox("bwrap")
        print(f"{len(tasks)} tasks, {os.cpu_count()} cores, --jobs {args.jobs}, isolation bwrap, "
              f"load average {os.getloadavg()[0]:.1f}")
        print("reference cache, a sweep of 3 models in one command:")
        cache_figure(tasks, sandbox, Path(tmp), references_agent(tasks, Path(tmp) / "refs", 0))
        print(f"a {args.agent_s:g}s agent that leaves the reference, --concurrency {args.concurrency}:")
        grading_s = executors_figure(tasks, sandbox, Path(tmp), references_agent(tasks, Path(tmp) / "slow-refs",
                                     args.agent_s), args.concurrency, args.jobs)
        print("projection:")
        projection(len(tasks), grading_s, os.cpu_count() or 1, args.call_s, args.key_concurrency)


if __name__ == "__main__":
    main()
