"""`--executor local` (the default): gradings on this machine, up to `--jobs` at once.

Grading is subprocess-bound (the judge and the worker are processes in their sandboxes),
so threads are enough. The driver's own task objects are graded: no installation lookup,
and a task read from a folder (`sb.load_task_dir`) works as well as an installed one.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from sb.executors.base import Executor, Work, lost, perform
from sb.hookspecs import hookimpl


class LocalExecutor(Executor):
    name = "local"
    description = "threads on this machine, each grading in its own sandboxed processes (the default)"

    def open(self, tasks: list, sandbox) -> None:
        self.tasks = {task.slug: task for task in tasks}
        self.pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="sb-grade")

    def submit(self, work: Work) -> Future:
        return self.pool.submit(self._perform, work)

    def _perform(self, work: Work) -> dict:
        try:
            return perform(work, self.tasks.get(work.slug), self.sandbox)
        except Exception as exc:  # noqa: BLE001 - a grader bug is that task's harness_error, never a dead sweep
            return lost(f"the grader failed on this machine: {type(exc).__name__}: {exc}")

    def cancel(self) -> None:
        if self.started:
            self.pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        if self.started:
            self.pool.shutdown(wait=True)


@hookimpl
def register_executors(register):
    register(LocalExecutor)
