"""The verdict of one grading: a pure function of what the judge recorded.

The judge writes one JSON line per event (judge_process.py); `Record` folds them, and
`verdict` turns a record, how the judge's process ended and the reference's test ids into
an Outcome. Nothing here runs anything: what the pipeline learns beside the record (who
holds a device at a stall, whether the untouched starter collects) comes in as arguments,
so every verdict can be checked from a recorded fixture without a subprocess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from sb.outcome import Outcome, Status
from sb.sandbox.base import Completed

ALLOWED_EXCEPTIONS_FOR_STARTER = ("AssertionError", "NotImplementedError", "Failed")


@dataclass
class Record:
    """What the judge reported, event by event."""

    started: bool = False
    ended: bool = False
    exitstatus: int | None = None
    tampered: list = field(default_factory=list)
    collect_errors: list = field(default_factory=list)
    phases: dict = field(default_factory=dict)  # nodeid -> {when: (outcome, exc, message)}
    probed: set = field(default_factory=set)    # tests, and collected modules, that used a probe

    def add(self, event: dict) -> None:
        kind = event.get("event")
        if kind == "start":
            if self.started:
                self.tampered.append("two start records")
            self.started = True
        elif kind == "violation":
            self.tampered.append(f"the solution's process broke the wire protocol: {event.get('message')}")
        elif kind == "collect_error":
            self.collect_errors.append(f"{event.get('nodeid')}: {event.get('message')}")
        elif kind == "test":
            self._add_phase(event)
            if event.get("probed"):
                self.probed.add(event["nodeid"])
        elif kind == "collect_probed":
            self.probed.add(str(event.get("nodeid") or ""))
        elif kind == "end":
            if self.ended:
                self.tampered.append("two end records")
            self.ended, self.exitstatus = True, event.get("exitstatus")
            self.tampered += list(event.get("tampered") or [])

    def _add_phase(self, event: dict) -> None:
        phases = self.phases.setdefault(event["nodeid"], {})
        if event["when"] in phases:
            self.tampered.append(f"two records for {event['nodeid']} {event['when']}")
        phases[event["when"]] = (event["outcome"], event.get("exc"), event.get("message", ""))

    def test_outcomes(self) -> dict:
        """nodeid -> passed | failed | skipped, from the phases of each test."""
        return {nodeid: _test_outcome(phases) for nodeid, phases in self.phases.items()}

    def probed_tests(self) -> list:
        """The tests that learnt something from a probe, theirs or their module's at import."""
        modules = {m for m in self.probed if "::" not in m}
        return sorted(nodeid for nodeid in self.phases if nodeid in self.probed or "" in modules
                      or nodeid.split("::", 1)[0] in modules)


def _test_outcome(phases: dict) -> str:
    outcomes = [o for o, _, _ in phases.values()]
    if "failed" in outcomes:
        return "failed"
    if "skipped" in outcomes:
        return "skipped"
    return "passed" if "call" in phases else "failed"


def verdict(slug: str, time_limit_s: int, record: Record, completed: Completed, expected: list | None,
            device_holders: Sequence[str] = (), starter_collects: Callable[[], bool] = lambda: False) -> Outcome:
    """The Outcome of a grading, from the record alone (the exit status is only cross-checked).

    `expected` is the reference's test ids (None: this is the reference). `device_holders`:
    who holds the device when a grading that had one ended blocked at its limit. A collection
    error is the solution's only when the untouched starter collects; `starter_collects` is
    asked exactly then."""
    outcomes = record.test_outcomes()
    base: dict = dict(slug=slug, duration_s=round(completed.duration_s, 3), counts=_counts(outcomes, expected),
                test_ids=sorted(outcomes), probed_tests=record.probed_tests())
    if device_holders:
        return Outcome(status=Status.DEVICE_STALL, detail=f"blocked at the {time_limit_s}s limit, using "
                       f"{completed.cpu_rate_at_limit:.2f} CPU, on a device held by: {'; '.join(device_holders[:3])}",
                       **base)
    if completed.timed_out:
        return Outcome(status=Status.TIMEOUT, detail=f"killed at the {time_limit_s}s limit",
                       failed_tests=_failed(outcomes, expected), **base)
    if not record.started:
        return Outcome(status=Status.HARNESS_ERROR, detail=_tail(completed.output), **base)
    problem = _tamper_evidence(record, completed)
    if problem:
        return Outcome(status=Status.TAMPERED, detail=problem, failed_tests=_failed(outcomes, expected), **base)
    if record.collect_errors:
        status = Status.SOLUTION_ERROR if starter_collects() else Status.COLLECTION_ERROR
        detail = _collection_detail(record.collect_errors[0])
        ended = _worker_end(detail, completed)
        return Outcome(status=status, detail=f"{ended}\n{detail}" if ended else detail, **base)
    outcome = _test_verdict(outcomes, expected, record, base)
    ended = _worker_end(outcome.detail, completed)
    if ended:  # the first line, which a table shows, names the test and then how the process ended
        first, _, rest = outcome.detail.partition("\n")
        outcome.detail = f"{first} ({ended})" + (f"\n{rest}" if rest else "")
    return outcome


def _worker_end(detail: str, completed: Completed) -> str:
    """How the solution's process ended, where the judge saw only its wire close
    (WorkerGone): its own traceback cannot say. '' otherwise."""
    code = completed.worker_exit
    if not detail or code in (None, 0) or "WorkerGone" not in detail:
        return ""
    if code < 0:
        return f"the solution's process was killed by signal {-code}"
    signal = f", as a process ended by signal {code - 128} reports it" if 128 < code < 160 else ""
    return f"the solution's process exited with status {code}{signal}"


def _tamper_evidence(record: Record, completed: Completed) -> str:
    if record.tampered:
        return "; ".join(record.tampered[:5])
    if not record.ended:
        if completed.returncode is not None and completed.returncode < 0:
            return ""  # killed by a signal (a crash, a limit): judged from the tests recorded
        return f"the process exited early (status {completed.returncode}) before the run finished"
    if completed.returncode != record.exitstatus:
        return f"exit status rewritten: the judge reported {record.exitstatus}, process ended {completed.returncode}"
    return ""


def _test_verdict(outcomes: dict, expected: list | None, record: Record, base: dict) -> Outcome:
    wanted = sorted(outcomes) if expected is None else expected
    failed = _failed(outcomes, expected)
    if not wanted:
        return Outcome(status=Status.HARNESS_ERROR, detail="no test ran", **base)
    if failed:
        ran = [nodeid for nodeid in failed if nodeid in outcomes] or failed  # a test that ran says more
        return Outcome(status=Status.FAILED, failed_tests=failed, detail=_first_failure(record, ran[0]), **base)
    if not record.ended:
        return Outcome(status=Status.FAILED, detail="the process was killed (a crash or a resource limit)", **base)
    return Outcome(status=Status.PASSED, **base)


def _failed(outcomes: dict, expected: list | None) -> list:
    """Expected ids that did not pass: failed, skipped or missing."""
    wanted = sorted(outcomes) if expected is None else expected
    return [nodeid for nodeid in wanted if outcomes.get(nodeid) != "passed"]


def _counts(outcomes: dict, expected: list | None) -> dict:
    counts = {"passed": 0, "failed": 0, "skipped": 0, "missing": 0}
    for outcome in outcomes.values():
        counts[outcome] += 1
    if expected is not None:
        counts["missing"] = len(set(expected) - set(outcomes))
    return counts


def _first_failure(record: Record, nodeid: str) -> str:
    for outcome, exc, message in record.phases.get(nodeid, {}).values():
        if outcome != "passed":
            return f"{nodeid}: {_head(message or exc or outcome)}"
    return f"{nodeid}: missing"


def _collection_detail(text: str) -> str:
    """The cause first (pytest's last `E ` line: the exception), then the report's tail. A
    table shows a detail's first line, and pytest's report begins with its own advice."""
    causes = [line[1:].strip() for line in (text or "").splitlines() if line.startswith("E ") and line[1:].strip()]
    tail = _tail(text)
    return f"{causes[-1][:200]}\n{tail}" if causes and causes[-1] not in tail.splitlines()[0] else tail


def _head(text: str, limit: int = 400) -> str:
    """A failure message's start: the exception and what it compared come first, and a long
    one ends in the repr of some array."""
    text = (text or "").strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _tail(text: str, limit: int = 400) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def starter_exceptions(record: Record) -> dict:
    """nodeid -> exception names seen in its failing phases (validate checks the starter's)."""
    return {nodeid: {exc for outcome, exc, _ in phases.values() if outcome == "failed"}
            for nodeid, phases in record.phases.items()}
