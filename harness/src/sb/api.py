"""The grading API for integrations: Inspect (integrations/inspect), a notebook, another harness.

An integration asks the model itself, in its own way, and needs three things from `sb`:
the message `sb` would send (`solver_messages`, and `reply_schema` for APIs that constrain
output), the reply turned into the task's declared files (`parse_reply`), and those files
graded exactly as `sb run` grades them (`grade_files`, `grade_reply`): the precheck of
dependencies and devices, the reference's test ids on this toolchain, the judge and the
worker in the chosen sandbox. Everything returns data; nothing here raises on a model's
output. Integrations use this module and `sb.__all__` only, never `sb.run` or
`sb.models.exchange`, so the harness can change its internals without breaking them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from sb.outcome import Outcome, Status
from sb.sandbox.base import Sandbox
from sb.task import Task


def find_tasks(slugs=None, suite: str | None = None, tier: str = "all", set_name: str | None = None) -> list:
    """The installed tasks named (an unknown slug raises SbError), else those matching the filters."""
    from sb.catalog import select_tasks
    from sb.session import default_session
    session = default_session()
    return select_tasks(session.tasks(), slugs=list(slugs) if slugs else None, suite=suite, tier=tier,
                        set_name=set_name, broken=session.broken)


def solver_messages(task: Task) -> list:
    """What `sb` sends a model for `task`, as [{"role": "system"...}, {"role": "user"...}]: the
    JSON-reply instructions (or the reply instructions for a `reply` task), then prompt.md
    with every starter file. A tool_loop task has no single message (sb drives its loop)."""
    from sb.models import exchange
    if task.meta.kind == "tool_loop":
        from sb.errors import SbError
        raise SbError(f"task {task.slug!r} is a tool_loop task: its conversation is driven by `sb run`, "
                      "not answered in one message")
    system = exchange.JSON_INSTRUCTIONS if task.meta.kind == "files" else exchange.REPLY_INSTRUCTIONS
    return [{"role": "system", "content": system}, {"role": "user", "content": exchange.user_message(task)}]


def reply_schema(task: Task) -> dict | None:
    """The JSON schema of a files reply ({"files": {name: content | null}}, strict-mode valid);
    None for a `reply` task, whose reply is free text."""
    from sb.models import exchange
    return exchange.files_schema(task) if task.meta.kind == "files" else None


@dataclass
class ParsedReply:
    """A reply reduced to the declared files; `problem` says why it cannot be graded ('' if it can)."""

    files: dict = field(default_factory=dict)      # declared name -> bytes
    dropped: list = field(default_factory=list)    # names the reply gave that the starter does not declare
    problem: str = ""


def parse_reply(task: Task, text: str) -> ParsedReply:
    """The files a reply gives, parsed as strictly as `sb run` parses them: a files task's reply
    is one JSON object, never scraped out of prose; a reply task's text becomes reply.md."""
    from sb.models import exchange
    if task.meta.kind == "reply":
        if not (text or "").strip():
            return ParsedReply(problem="empty reply")
        return ParsedReply(files={exchange.REPLY_FILE: text.encode("utf-8")})
    try:
        files, dropped = exchange.parse_files(task, exchange.Reply(model=None, usage={}, text=text or ""))
    except exchange.ReplyError as exc:
        return ParsedReply(problem=str(exc))
    return ParsedReply(files=files, dropped=dropped)


def choose_sandbox(isolation: str | None = None) -> Sandbox:
    """The sandbox named (default bwrap; "none" only for trusted code), or SbError with the
    one-line reason it cannot run here: check it once before asking any model."""
    from sb.session import default_session
    return default_session().sandbox(isolation)


def precheck(task: Task, isolation: str | Sandbox | None = None) -> Outcome | None:
    """Why `task` cannot be measured here, decided before any model call, as `sb run` decides
    it: a dependency not installed, a device this machine lacks, a reference that does not
    pass on this toolchain (each a no-evidence Outcome); None when it can be graded."""
    return _expected_ids(task, _sandbox(isolation))[0]


def grade_files(task: Task, files: dict, isolation: str | Sandbox | None = None) -> Outcome:
    """Grade a solver's files ({name: bytes or str}; undeclared names are dropped and recorded)
    against the reference's test ids, in the sandbox named (see choose_sandbox). An unusable
    sandbox raises SbError; everything the solution does is in the returned Outcome."""
    from sb.grading import grade
    sandbox = _sandbox(isolation)
    early, expected = _expected_ids(task, sandbox)
    if early is not None:
        return early
    as_bytes = {name: data.encode("utf-8") if isinstance(data, str) else bytes(data) for name, data in files.items()}
    return grade(task, as_bytes, sandbox, expected)


def grade_reply(task: Task, text: str, isolation: str | Sandbox | None = None) -> Outcome:
    """parse_reply then grade_files: a reply that cannot be parsed is adapter_error (no evidence,
    out of every rate), with the reason in the detail."""
    parsed = parse_reply(task, text)
    if parsed.problem:
        return Outcome(task.slug, Status.ADAPTER_ERROR, detail=parsed.problem, dropped_files=parsed.dropped)
    outcome = grade_files(task, parsed.files, isolation)
    outcome.dropped_files = sorted(set(outcome.dropped_files) | set(parsed.dropped))
    return outcome


def _sandbox(isolation) -> Sandbox:
    return isolation if isinstance(isolation, Sandbox) else choose_sandbox(isolation)


_reference_locks: dict = {}
_locks_guard = threading.Lock()


def _expected_ids(task: Task, sandbox: Sandbox) -> tuple:
    """(the no-evidence Outcome, None) or (None, the reference's test ids). The reference is
    graded at most once at a time per task: concurrent gradings of one task (Inspect's
    epochs) wait for the first instead of each grading the reference too."""
    from sb.grading.expected import reference_ids
    from sb.grading import precheck as early_outcome
    early = early_outcome(task)
    if early is not None:
        return early, None
    with _locks_guard:
        lock = _reference_locks.setdefault((task.slug, task.content_hash), threading.Lock())
    with lock:
        reference = reference_ids(task, sandbox)
    return (None, reference.ids) if reference.ok else (reference.failure, None)
