"""The `tool_loop` task kind: the harness drives a tool-calling conversation.

The task ships its tools (JSON schemas plus Python implementations, `<package>.toolbox`)
and a turn bound. The harness asks the model for a turn, executes every call it makes
with the task's own implementations, hands the results back, and stops at a final
answer or at the bound. The transcript it writes (`transcript.json`) is the harness's own
record of every call, its arguments, every result and the final answer; the hidden tests
grade that file. The model never writes files in this kind.

The accounting is `solve`'s, over every turn: tokens summed, cost from the dated price
table for the model that answered, transport retries, and no fallback (a turn answered by
another model ends the loop as adapter_error). An API error mid-loop ends it as
adapter_error too, with what the turns before it cost still recorded: a sweep never dies
of one conversation, and a failed loop is never free.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path

from sb.models import prices
from sb.models.base import Attempt
from sb.models.exchange import same_model, usage_problem
from sb.outcome import Status

TRANSCRIPT = "transcript.json"


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: object  # a dict when the model sent a valid JSON object, else the raw text as sent


@dataclass
class ModelTurn:
    """One reply of the model: text, the tool calls it asks for, and what it cost."""

    text: str = ""
    calls: list = field(default_factory=list)
    usage: dict | None = None
    stop: str = ""           # the API's stop reason, recorded as given
    truncated: bool = False
    model: str | None = None  # the model that answered this turn, as the API named it


class SessionError(Exception):
    """A turn that cannot go on: the API failed (after its bounded retries), refused, or sent
    nothing. The message is the adapter_error's detail; `usage` and `model` are what that
    turn reported, if anything, so a rejected turn is still paid for; `no_answer`: nothing
    came back at all (the sweep's circuit breaker counts those)."""

    def __init__(self, detail: str, usage: dict | None = None, model: str | None = None, no_answer: bool = False):
        super().__init__(detail)
        self.usage, self.model, self.no_answer = usage, model, no_answer


def parse_arguments(raw) -> object:
    """A call's arguments as the loop records them: the object when the model sent a valid JSON
    object, else exactly what it sent (broken JSON, a string, a list), never repaired: an
    invalid call must stay visible to the grader."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return json.dumps(raw)
    try:
        parsed = json.loads(raw)
    except ValueError:
        return raw
    return parsed if isinstance(parsed, dict) else raw


def load_toolbox(task):
    """The task's `toolbox` module: TOOLS (name, description, input_schema), call(), MAX_TURNS."""
    return importlib.import_module(f"{task.package}.toolbox")


def drive_tool_loop(adapter, model: str, task, workdir: Path, options) -> Attempt:
    """Run the conversation to a final answer or the bound; always leave a transcript."""
    toolbox = load_toolbox(task)
    transcript = {"tools": [t["name"] for t in toolbox.TOOLS], "max_turns": toolbox.MAX_TURNS,
                  "turns": [], "final_answer": None, "ended": "max_turns"}
    attempt, session = Attempt(), None
    try:
        session = adapter.tool_session(model, task, toolbox.TOOLS, options)
        attempt.model_answered = session.model_answered
        _converse(session, model, toolbox, transcript, attempt)
    except SessionError as exc:
        _add_usage(attempt, exc.usage)
        if exc.usage:  # the rejected turn is paid for too, at the rate of whoever answered it
            attempt.turn_costs.append({"model": exc.model, "tokens": exc.usage})
        attempt.model_answered = exc.model or attempt.model_answered
        attempt.transport_failure = exc.no_answer
        mismatch = _model_problem(session, model, exc.model) if exc.model is not None else ""
        _end_in_error(attempt, transcript, mismatch or str(exc), started=session is not None)
    except Exception as exc:  # noqa: BLE001 - an adapter bug mid-loop is that task's adapter_error, its usage kept
        _end_in_error(attempt, transcript, f"{type(exc).__name__}: {exc}", started=session is not None)
    finally:
        _account(attempt, adapter, session, model)
        (Path(workdir) / TRANSCRIPT).write_text(json.dumps(transcript, indent=2) + "\n", encoding="utf-8")
    return attempt


def _converse(session, model: str, toolbox, transcript: dict, attempt: Attempt) -> None:
    results: list = []
    for _ in range(toolbox.MAX_TURNS):
        turn = session.step(results)
        problem = usage_problem(turn.usage)
        if problem:  # untrusted counts are not summed: the loop's cost is then unknown, not low
            attempt.usage_missing = True
            raise SessionError(problem, model=turn.model)
        _add_usage(attempt, turn.usage)
        attempt.turn_costs.append({"model": turn.model, "tokens": turn.usage})
        attempt.model_answered = turn.model or session.model_answered or attempt.model_answered
        problem = _model_problem(session, model, turn.model)
        if problem:  # another model's turn is not the record of the model asked: not transcribed
            raise SessionError(problem)
        transcript["turns"].append({"text": turn.text, "calls": [asdict(c) for c in turn.calls], "results": []})
        if turn.truncated:
            stop = f" ({turn.stop})" if turn.stop else ""
            attempt.status = Status.TRUNCATED
            attempt.detail = f"turn {len(transcript['turns'])}: cut off at the output limit{stop}"
            transcript["ended"] = "truncated"
            return
        if not turn.calls:
            transcript["final_answer"], transcript["ended"] = turn.text, "answer"
            return
        results = [(call.id, _execute(toolbox, call)) for call in turn.calls]
        transcript["turns"][-1]["results"] = [r for _, r in results]


def _model_problem(session, asked: str, answered: str | None) -> str:
    """No fallback: an API session (one with a provider) must name the model asked, or its
    dated snapshot, on every turn; other sessions are checked when they name one."""
    if answered is None and not (session is not None and session.provider):
        return ""
    if same_model(asked, answered):
        return ""
    return f"asked for model {asked!r}, answered by {answered!r} (no fallback accepted)"


def _end_in_error(attempt: Attempt, transcript: dict, detail: str, started: bool) -> None:
    """The detail names the turn that failed (never transcribed), once the conversation began."""
    if started:
        detail = f"turn {len(transcript['turns']) + 1}: {detail}"
    attempt.status, attempt.detail = Status.ADAPTER_ERROR, detail
    transcript["ended"], transcript["error"] = "adapter_error", attempt.detail


def _account(attempt: Attempt, adapter, session, model: str) -> None:
    """Transport retries of every turn, and the cost of the summed tokens at the dated price of
    the model that answered: the same derivation check_cost repeats from the results file."""
    attempt.transport_retries = int(session.transport_retries or 0) if session is not None else 0
    provider = (session.provider if session is not None else "") or adapter.provider
    if not (provider and attempt.usage):
        attempt.turn_costs = []
        return
    today, total, names = date.today(), 0.0, []
    for turn in attempt.turn_costs:  # each turn at the rate of the model that answered it
        turn["usd_cost"], price = prices.cost(provider, turn["model"] or model, turn["tokens"], today)
        if not turn["tokens"] and prices.price_for(provider, turn["model"] or model, today) is not None:
            attempt.usage_missing = True  # a priced turn without usage: the loop's cost is unknown, not low
        total += turn["usd_cost"] or 0.0
        names.append(price)
        if turn["usd_cost"] is None and turn["tokens"]:
            attempt.usd_cost, attempt.price = None, prices.UNPRICED
            return
    attempt.usd_cost = round(total, 8)
    distinct = sorted(set(n for n in names if n != prices.UNPRICED))
    attempt.price = distinct[0] if len(distinct) == 1 else ("per turn: " + "; ".join(distinct) if distinct else
                                                              prices.UNPRICED)


def _execute(toolbox, call: ToolCall) -> str:
    """The task's implementation answers; a bad call gets an error string, as an API would."""
    names = {t["name"] for t in toolbox.TOOLS}
    if call.name not in names:
        return f"error: no tool named {call.name!r}"
    if not isinstance(call.arguments, dict):
        return "error: arguments are not a JSON object"
    try:
        return str(toolbox.call(call.name, call.arguments))
    except Exception as exc:  # noqa: BLE001 - a tool rejecting its arguments is part of the conversation
        return f"error: {exc}"


def _add_usage(attempt: Attempt, usage: dict | None) -> None:
    if not usage:
        return
    attempt.usage = attempt.usage or {}
    for key, value in usage.items():
        if isinstance(value, int):
            attempt.usage[key] = attempt.usage.get(key, 0) + value
