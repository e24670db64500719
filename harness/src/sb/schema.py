"""The results document's schema (docs/results.md), checked wherever a file is read back:
`sb publish`, `sb report`, `sb compare` and `--resume`. A file that breaks it is refused
with one line naming the file and the field, instead of a traceback later on."""

from __future__ import annotations

import math
from datetime import datetime

from sb.errors import SbError
from sb.outcome import Status, is_evidence

STATUSES = {s.value for s in Status}


class _Checker:
    def __init__(self, where: str):
        self.where = where

    def fail(self, field: str, problem: str):
        raise SbError(f"{self.where}: field {field!r}: {problem}")

    def need(self, doc: dict, field: str, kinds, label: str):
        if field not in doc:
            self.fail(field, "missing")
        value = doc[field]
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            self.fail(field, f"must be {label}, got {type(value).__name__}")
        return value

    def number(self, doc: dict, field: str, minimum: float = 0.0, nullable: bool = False):
        value = doc.get(field)
        if value is None and nullable and field in doc:
            return None
        value = self.need(doc, field, (int, float), "a number")
        if not math.isfinite(value) or value < minimum:
            self.fail(field, f"must be a finite number >= {minimum}, got {value}")
        return value

    def count(self, doc: dict, field: str, minimum: int = 0) -> int:
        value = self.need(doc, field, (int,), "an integer")
        if value < minimum:
            self.fail(field, f"must be >= {minimum}, got {value}")
        return value


def validate_results(doc, where: str) -> dict:
    if not isinstance(doc, dict):
        raise SbError(f"{where}: not a results document (a JSON object)")
    check = _Checker(where)
    for field in ("run_id", "group_id", "model", "adapter", "run_at", "harness_version", "isolation"):
        if not check.need(doc, field, (str,), "a string"):
            check.fail(field, "must not be empty")
    _timestamp(check, doc["run_at"])
    check.count(doc, "draw", 1)
    check.count(doc, "draws", 1)
    check.need(doc, "complete", (bool,), "true or false")
    check.need(doc, "settings", (dict,), "an object")
    check.number(doc, "wall_clock_s")
    rate = check.number(doc, "pass_rate", nullable=True) if "pass_rate" in doc else None
    if rate is not None and rate > 1:
        check.fail("pass_rate", f"must be between 0 and 1, got {rate}")
    tasks = check.need(doc, "tasks", (list,), "a list")
    for index, entry in enumerate(tasks):
        validate_entry(entry, f"{where}: tasks[{index}]")
    return doc


def _timestamp(check: _Checker, text: str) -> None:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        check.fail("run_at", f"must be an ISO 8601 time, got {text!r}")


def validate_entry(entry, where: str) -> None:
    if not isinstance(entry, dict):
        raise SbError(f"{where}: must be an object")
    check = _Checker(where)
    check.need(entry, "slug", (str,), "a string")
    check.count(entry, "version", 1)
    for field in ("suite", "tier"):
        check.need(entry, field, (str,), "a string")
    status = check.need(entry, "status", (str,), "a string")
    if status not in STATUSES:
        check.fail("status", f"unknown status {status!r}")
    passed = check.need(entry, "passed", (bool,), "true or false")
    if passed != (status == Status.PASSED.value):
        check.fail("passed", f"says {passed} but the status is {status}")
    if "evidence" in entry and entry["evidence"] != is_evidence(status):
        check.fail("evidence", f"says {entry['evidence']} but {status} is "
                               f"{'' if is_evidence(status) else 'not '}evidence")
    counts = check.need(entry, "counts", (dict,), "an object")
    for key, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            check.fail(f"counts.{key}", f"must be a count >= 0, got {value!r}")
    failed = check.need(entry, "failed_tests", (list,), "a list")
    if not all(isinstance(t, str) for t in failed):
        check.fail("failed_tests", "must list test ids (strings)")
    _tokens(check, entry.get("tokens"))
    check.number(entry, "usd_cost", nullable=True) if "usd_cost" in entry else None
    if "transport_retries" in entry:
        check.count(entry, "transport_retries")


def _tokens(check: _Checker, tokens) -> None:
    if tokens is None:
        return
    if not isinstance(tokens, dict):
        check.fail("tokens", "must be an object of token counts")
    for key, value in tokens.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            check.fail(f"tokens.{key}", f"must be a count >= 0, got {value!r}")
