"""The Executor interface: where gradings run, as plain data in and plain data out.

A unit of work (`Work`) names a task by slug and carries the solver's files, the isolation,
the reference's test ids and the three things a node checks before it grades: the task's
content hash, the toolchain fingerprint and the grader hash the driver sees. Its result is
a dict: the Outcome's fields, or `not_graded` with a one-line reason. Every executor grades
through the same `perform()`, so the local and the Ray executor return the same verdicts.

Model calls never go through an executor: they stay on the driver, so a lost node never
bills a model twice. The driver alone writes results files.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import socket
import time
from abc import ABC, abstractmethod
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

from sb.errors import SbError
from sb.outcome import Outcome, Status

if TYPE_CHECKING:
    from sb.sandbox.base import Sandbox

CHECKS = ("grade", "validate")


@dataclass(frozen=True)
class Work:
    """One grading. `check` is `grade` (the files against `expected`; None: these are the
    reference's files and their ids are the result) or `validate` (the task's own reference
    and starter, as `sb validate` checks them)."""

    slug: str
    files: dict = field(repr=False)
    isolation: str
    expected: tuple | None
    content_hash: str
    fingerprint: str
    check: str = "grade"
    accelerator: str | None = None  # the device the grading needs: cuda, metal, or none
    first_failure: bool = False  # stop at the first failing test (sb.grading.grade)
    grader: str = ""  # sb.grading.grader_hash() on the driver

    @classmethod
    def grading(cls, task, files: dict, isolation: str, expected, first_failure: bool = False) -> "Work":
        from sb.grading import grader_hash
        declared = {name: data for name, data in files.items() if name in task.starter_files}
        return cls(task.slug, declared, isolation, None if expected is None else tuple(expected),
                   task.content_hash, fingerprint(), "grade", needed_device(task), first_failure, grader_hash())

    @classmethod
    def validation(cls, task, isolation: str) -> "Work":
        from sb.grading import grader_hash
        return cls(task.slug, {}, isolation, None, task.content_hash, fingerprint(), "validate", needed_device(task),
                   grader=grader_hash())

    def to_json(self) -> str:
        """The wire form: JSON, the files base64 (what crosses to a Ray node)."""
        data = dataclasses.asdict(self)
        data["files"] = {name: base64.b64encode(body).decode() for name, body in self.files.items()}
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Work":
        data = json.loads(text)
        if data.get("check") not in CHECKS:
            raise ValueError(f"unknown check {data.get('check')!r}")
        data["files"] = {name: base64.b64decode(body) for name, body in data["files"].items()}
        data["expected"] = None if data["expected"] is None else tuple(data["expected"])
        return cls(**data)


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """The toolchain fingerprint a node must share with the driver: `sb env`'s, less
    which devices are present (a GPU node grades a CPU task as a laptop does; which node
    gets a device task is the executor's scheduling, not a toolchain difference), and less
    what Ray vendors (importing ray puts its own copies on sys.path: a Ray node's process always
    sees them, a driver only once it has imported ray)."""
    from sb import toolchain
    document = toolchain.document()
    vendored = _vendored_by_ray()
    distributions = {k: v for k, v in document["distributions"].items() if k not in vendored}
    comparable = {**document, "accelerator": None, "distributions": distributions}
    blob = json.dumps(toolchain._fingerprinted(comparable), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _vendored_by_ray() -> set:
    from importlib import metadata
    from importlib.util import find_spec
    spec = find_spec("ray")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return set()
    folder = os.path.join(list(spec.submodule_search_locations)[0], "thirdparty_files")
    return {(d.metadata.get_all("Name") or [""])[0].lower().replace("_", "-")
            for d in metadata.distributions(path=[folder])}


def needed_device(task) -> str | None:
    """The device a grading of `task` must run beside (none for a CPU-checkable kernel)."""
    return None if task.meta.cpu_checkable else task.meta.accelerator


class Executor(ABC):
    """Runs gradings somewhere: `start` once, `submit` each Work (a Future of its result
    dict that never raises), `cancel` what is unfinished, `close`. A fake lives in
    `sb.testing.FakeExecutor`."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    takes_address: ClassVar[bool] = False

    def __init__(self, jobs: int = 1, address: str | None = None):
        if address and not self.takes_address:
            raise SbError(f"executor {self.name!r} takes no --address")
        self.jobs, self.address = max(1, int(jobs)), address
        self.warnings: list = []  # one line each, for the command to print once it started
        self.sandbox: Sandbox | None = None  # set by start()
        self.started = False

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """None when this executor can run here, else one line saying why not."""
        return None

    def start(self, tasks: list, sandbox) -> None:
        """Get ready for `tasks` graded in `sandbox` (a second call does nothing). May refuse
        with an SbError: an isolation it does not allow, a cluster it cannot reach."""
        if not self.started:
            self.sandbox = sandbox
            self.open(list(tasks), sandbox)
            self.started = True

    def open(self, tasks: list, sandbox) -> None:
        """What `start` does once (connect, start nodes)."""

    def precheck(self, task) -> Outcome | None:
        """A no-evidence outcome known before anything is graded or a model is called
        (missing deps, no device anywhere this executor reaches), else None."""
        from sb.grading import precheck
        return precheck(task)

    def grading(self, task, files: dict, expected, first_failure: bool = False) -> Future:
        """submit() for the common case: `files` of `task`, in the started sandbox."""
        assert self.sandbox is not None, "start() first"
        return self.submit(Work.grading(task, files, self.sandbox.name, expected, first_failure))

    @abstractmethod
    def submit(self, work: Work) -> Future:
        """Start `work`; the Future resolves to its result dict, never to an exception."""

    @abstractmethod
    def cancel(self) -> None:
        """Drop every submitted Work not finished yet (a running grading is stopped)."""

    def close(self) -> None:
        """Release what `open` took; the executor is not used again."""

    def describe(self) -> dict:
        """What the results file records about where the gradings ran."""
        return {"name": self.name, "jobs": self.jobs}

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is not None:
            self.cancel()
        self.close()


# ---------------------------------------------------------------- the node's side


def perform(work: Work, task, sandbox, node: str | None = None) -> dict:
    """Grade `work` here (on `node`, default this host): the one function every executor
    runs where the grading happens. A node whose task or toolchain differs from the
    driver's refuses, in one line."""
    started, node = time.monotonic(), node or socket.gethostname()
    reason = refusal(work, task, sandbox, node)
    data = {"not_graded": reason} if reason else _PERFORM[work.check](work, task, sandbox)
    return {**data, "node": node, "node_s": round(time.monotonic() - started, 3)}


def refusal(work: Work, task, sandbox, where: str) -> str:
    if task is None:
        return f"refused on {where}: task {work.slug!r} is not installed there"
    if task.content_hash != work.content_hash:
        return (f"refused on {where}: task {work.slug} has content hash {task.content_hash} there, "
                f"{work.content_hash} on the driver (install the same task version on every node)")
    if fingerprint() != work.fingerprint:
        return (f"refused on {where}: its toolchain differs from the driver's (fingerprint less devices "
                f"{fingerprint()} there, {work.fingerprint} on the driver; compare `sb env --json` on both)")
    from sb.grading import grader_hash
    if grader_hash() != work.grader:
        return (f"refused on {where}: its grader differs from the driver's (grader hash {grader_hash()} there, "
                f"{work.grader or 'none'} on the driver; install the same scratchbench on every node)")
    if sandbox is None or sandbox.name != work.isolation:
        return f"refused on {where}: isolation {work.isolation!r} cannot run there"
    return ""


def _perform_grade(work: Work, task, sandbox) -> dict:
    from sb.grading import grade
    expected = None if work.expected is None else list(work.expected)
    return {"outcome": outcome_data(grade(task, work.files, sandbox, expected, work.first_failure))}


def _perform_validate(work: Work, task, sandbox) -> dict:
    from sb.checks import validate_task
    found = validate_task(task, sandbox, None)
    return {"validation": {"slug": found.slug, "verdict": found.verdict, "reason": found.reason,
                           "reference": found.reference and outcome_data(found.reference),
                           "starter": found.starter and outcome_data(found.starter)}}


_PERFORM = {"grade": _perform_grade, "validate": _perform_validate}


# ---------------------------------------------------------------- the driver's side


def outcome_data(outcome: Outcome) -> dict:
    data = dataclasses.asdict(outcome)
    data["status"] = Status(outcome.status).value
    return data


def outcome_from_data(data: dict) -> Outcome:
    fields = {f.name for f in dataclasses.fields(Outcome)}
    found = {k: v for k, v in data.items() if k in fields}
    return Outcome(**{**found, "status": Status(found["status"])})


def outcome_of(slug: str, result: dict) -> Outcome:
    """The Outcome a result dict stands for: a refused or lost grading is a harness error
    (no evidence, out of every rate), never the solution's failure."""
    if "outcome" in result:
        return outcome_from_data(result["outcome"])
    return Outcome(slug, Status.HARNESS_ERROR, detail=result.get("not_graded") or "not graded")


def lost(reason: str) -> dict:
    """The result of a Work that never came back (its node died past every retry)."""
    return {"not_graded": reason, "node": None, "node_s": None}


def resolved(value) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


def available_executors(pm) -> dict:
    from sb.plugins import collect
    return collect(pm, "register_executors", "executor", lambda cls: cls.name).items


def choose_executor(name: str | None, pm, jobs: int = 1, address: str | None = None) -> Executor:
    """The executor named (default: local), refusing with a one-line reason if unusable."""
    from sb.plugins import choose
    return choose(pm, "register_executors", "executor", name, "local")(jobs=jobs, address=address)
