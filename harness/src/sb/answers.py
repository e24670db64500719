"""A model's answer kept the moment it arrives, before it is graded.

An answer is paid for when it arrives; grading it can take minutes. So `sb run` writes
every answer into its draw's results file (under `received`, with its files) as soon as
the model call returns, and removes it when the graded entry takes its place. A sweep
killed at any moment (SIGKILL during a grading included) and resumed grades the kept
answer instead of asking the model again.
"""

from __future__ import annotations

import base64
from dataclasses import asdict, fields

from sb.models.base import Attempt
from sb.outcome import Status
from sb.solver_output import SolverOutput

_ATTEMPT_FIELDS = {f.name for f in fields(Attempt)}


def to_record(attempt: Attempt, left: SolverOutput | None) -> dict:
    """Plain JSON data: the attempt's fields and, when it left files, those files."""
    kept = asdict(attempt)
    kept["status"] = attempt.status.value if attempt.status is not None else None
    record: dict = {"attempt": kept}
    if left is not None:
        record["files"] = {name: base64.b64encode(data).decode("ascii") for name, data in left.files.items()}
        record["dropped"], record["problems"] = list(left.dropped), list(left.problems)
    return record


def from_record(record: dict) -> tuple[Attempt, SolverOutput | None]:
    """The (attempt, files left) that `to_record` kept."""
    kept = {k: v for k, v in record["attempt"].items() if k in _ATTEMPT_FIELDS}
    kept["status"] = Status(kept["status"]) if kept.get("status") is not None else None
    attempt = Attempt(**kept)
    if "files" not in record:
        return attempt, None
    files = {name: base64.b64decode(data) for name, data in record["files"].items()}
    return attempt, SolverOutput(files, list(record.get("dropped", [])), list(record.get("problems", [])))
