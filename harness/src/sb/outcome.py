"""Statuses and the Outcome record every grading returns.

Each status is classified once, here: whether it is evidence about the solution (it
counts in rates) and whether it is the harness's or the task's own failure. No-evidence
statuses stay out of every numerator and denominator and never print as 0%.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum


class Status(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    SOLUTION_ERROR = "solution_error"      # the solution does not import (the starter does)
    TAMPERED = "tampered"                  # the solution interfered with the grader
    COLLECTION_ERROR = "collection_error"  # the task itself is broken: even the starter fails to collect
    HARNESS_ERROR = "harness_error"        # the grader could not produce a record
    ADAPTER_ERROR = "adapter_error"        # the model call failed, refused, or gave unparseable output
    TRUNCATED = "truncated"                # the model ran out of output budget
    MISSING_DEPS = "missing_deps"          # the task's dependencies are not installed here
    NEEDS_ACCELERATOR = "needs_accelerator"  # the task needs a device this machine lacks
    DEVICE_STALL = "device_stall"          # the device blocked the process (held by another one)


EVIDENCE = frozenset({Status.PASSED, Status.FAILED, Status.TIMEOUT, Status.SOLUTION_ERROR, Status.TAMPERED})
HARNESS_FAILURES = frozenset({Status.COLLECTION_ERROR, Status.HARNESS_ERROR})


def is_evidence(status: Status) -> bool:
    return Status(status) in EVIDENCE


@dataclass
class Outcome:
    """What grading one solution of one task produced; never raised, always returned."""

    slug: str
    status: Status
    counts: dict = field(default_factory=dict)
    failed_tests: list = field(default_factory=list)
    detail: str = ""
    duration_s: float = 0.0
    isolation: str = ""
    test_ids: list = field(default_factory=list)
    dropped_files: list = field(default_factory=list)
    probed_tests: list = field(default_factory=list)  # tests that used a probe: observed in the worker

    @property
    def passed(self) -> bool:
        return self.status == Status.PASSED

    @property
    def evidence(self) -> bool:
        return is_evidence(self.status)

    @property
    def failures_that_ran(self) -> list:
        """The failed tests that have a record (the others are missing: not reached, as when
        a grading stops at its first failure)."""
        ran = set(self.test_ids)
        return [nodeid for nodeid in self.failed_tests if nodeid in ran]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["status"] = self.status.value
        data["passed"] = self.passed
        data.pop("test_ids")
        data.pop("probed_tests")
        return data

    def summary(self) -> str:
        """'pass (29 passed)' / 'fail (26 passed, 3 failed)' / the status and its detail."""
        counts = counts_text(self.counts)
        if self.status in (Status.PASSED, Status.FAILED):
            return ("pass" if self.passed else "fail") + counts
        return f"{self.status.value}{counts}" + (f": {self.detail}" if self.detail else "")


COUNT_ORDER = ("passed", "failed", "skipped", "missing")


def counts_text(counts: dict | None) -> str:
    """' (26 passed, 3 failed)': the non-zero counts in one order, in every command's lines."""
    given = counts or {}
    parts = [f"{given[k]} {k}" for k in COUNT_ORDER if given.get(k)]
    return f" ({', '.join(parts)})" if parts else ""
