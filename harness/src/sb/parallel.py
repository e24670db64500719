"""The driver's side of an executor: chaining gradings, results in order, references once.

Gradings run wherever the executor puts them (sb.executors); what stays here is plain
bookkeeping on Futures, so `sb validate`, `sb mutants` and `sb run` schedule the same way
on every executor and their verdicts do not depend on where, or how many at once.
"""

from __future__ import annotations

import copy
import os
import threading
from concurrent.futures import Future

from sb.executors.base import outcome_of, resolved
from sb.outcome import Outcome


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def then(future: Future, fn) -> Future:
    """A Future of `fn(future's result)`; when `fn` returns a Future, of that one's result.
    An exception anywhere in the chain ends up in the returned Future."""
    out: Future = Future()

    def done(previous: Future) -> None:
        try:
            value = fn(previous.result())
        except BaseException as exc:  # noqa: BLE001 - carried to whoever waits on `out`
            out.set_exception(exc)
            return
        if isinstance(value, Future):
            value.add_done_callback(lambda inner: _copy_into(inner, out))
        else:
            out.set_result(value)

    future.add_done_callback(done)
    return out


def _copy_into(source: Future, target: Future) -> None:
    try:
        target.set_result(source.result())
    except BaseException as exc:  # noqa: BLE001 - carried to whoever waits on `target`
        target.set_exception(exc)


def gather(futures: list) -> Future:
    """A Future of every result, in the order given."""
    out: Future = Future()
    results, left, lock = [None] * len(futures), [len(futures)], threading.Lock()
    if not futures:
        out.set_result([])

    def one(index: int, future: Future) -> None:
        try:
            results[index] = future.result()
        except BaseException as exc:  # noqa: BLE001 - the first failure is carried to whoever waits on `out`
            if not out.done():
                out.set_exception(exc)
            return
        with lock:
            left[0] -= 1
            finished = left[0] == 0
        if finished and not out.done():
            out.set_result(results)

    for index, future in enumerate(futures):
        future.add_done_callback(lambda f, i=index: one(i, f))
    return out


def in_order(futures: list, on_result=None) -> list:
    """Each result in input order, `on_result(result)` as each is reached: output, and the
    progress lines, do not depend on which grading finished first."""
    results = []
    for future in futures:
        results.append(future.result())
        if on_result:
            on_result(results[-1])
    return results


class References:
    """The reference's test ids for each task, graded at most once per command, through the
    executor, and cached on disk by task content hash, toolchain fingerprint and grader
    (shared by validate, mutants and every sweep), so a sweep of N models grades each
    reference once."""

    def __init__(self, executor) -> None:
        self.executor = executor
        self.futures: dict = {}
        self.lock = threading.Lock()
        self.graded = 0     # references graded by this command
        self.from_cache = 0  # references found in the cache instead

    def future(self, task) -> Future:
        """A Future of sb.grading.expected.ReferenceIds for `task`."""
        with self.lock:
            if task.slug not in self.futures:
                self.futures[task.slug] = self._resolve(task)
            return self.futures[task.slug]

    def _resolve(self, task) -> Future:
        from sb.grading.expected import from_cache
        cached = from_cache(task)
        if cached is not None:
            self.from_cache += 1
            return resolved(cached)
        self.graded += 1
        files = {name: data for name, data in task.reference_files.items() if name in task.starter_files}
        work_future = self.executor.grading(task, files, None)
        from sb.grading.expected import settle
        return then(work_future, lambda result: settle(task, outcome_of(task.slug, result)))


def same_as_graded_reference(task, files: dict, reference) -> Outcome | None:
    """The reference's own Outcome when `files` are exactly the reference just graded by
    this command (the control run): grading them again would give the same verdict."""
    declared = lambda found: {k: v for k, v in found.items() if k in task.starter_files}  # noqa: E731
    if reference.outcome is not None and declared(files) == declared(task.reference_files):
        return copy.deepcopy(reference.outcome)
    return None
