"""The `tool_loop` task kind: the harness drives a tool-calling conversation.

The task ships its tools (JSON schemas plus Python implementations, `<package>.toolbox`)
and a turn bound. The harness asks the model for a turn, executes every call it makes
with the task's own implementations, hands the results back, and stops at a final
answer or at the bound. The transcript it writes (`transcript.json`) is the harness's own
record of every call, its arguments, every result and the final answer; the hidden tests
grade that file. The model never writes files in this kind.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sb.models.base import Attempt
from sb.outcome import Status

TRANSCRIPT = "transcript.json"


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: object  # a dict when the model sent valid JSON, else the raw text


@dataclass
class ModelTurn:
    """One reply of the model: text, the tool calls it asks for, and what it cost."""

    text: str = ""
    calls: list = field(default_factory=list)
    usage: dict | None = None
    stop: str = ""           # the API's stop reason, recorded as given
    truncated: bool = False


def load_toolbox(task):
    """The task's `toolbox` module: TOOLS (name, description, input_schema), call(), MAX_TURNS."""
    return importlib.import_module(f"{task.package}.toolbox")


def drive_tool_loop(adapter, model: str, task, workdir: Path, options) -> Attempt:
    """Run the conversation to a final answer or the bound; always leave a transcript."""
    toolbox = load_toolbox(task)
    session = adapter.tool_session(model, task, toolbox.TOOLS, options)
    transcript = {"tools": [t["name"] for t in toolbox.TOOLS], "max_turns": toolbox.MAX_TURNS,
                  "turns": [], "final_answer": None, "ended": "max_turns"}
    attempt = Attempt(model_answered=getattr(session, "model_answered", None))
    results: list = []
    for _ in range(toolbox.MAX_TURNS):
        turn = session.step(results)
        _add_usage(attempt, turn.usage)
        transcript["turns"].append({"text": turn.text, "calls": [asdict(c) for c in turn.calls], "results": []})
        if turn.truncated:
            attempt.status, attempt.detail, transcript["ended"] = Status.TRUNCATED, "cut off at the output limit", "truncated"
            break
        if not turn.calls:
            transcript["final_answer"], transcript["ended"] = turn.text, "answer"
            break
        results = [(call.id, _execute(toolbox, call)) for call in turn.calls]
        transcript["turns"][-1]["results"] = [r for _, r in results]
    attempt.model_answered = getattr(session, "model_answered", attempt.model_answered)
    (Path(workdir) / TRANSCRIPT).write_text(json.dumps(transcript, indent=2) + "\n", encoding="utf-8")
    return attempt


def _execute(toolbox, call: ToolCall) -> str:
    """The task's implementation answers; a bad call gets an error string, as an API would."""
    names = {t["name"] for t in toolbox.TOOLS}
    if call.name not in names:
        return f"error: no tool named {call.name!r}"
    if not isinstance(call.arguments, dict):
        return "error: arguments are not a JSON object"
    try:
        return str(toolbox.call(call.name, call.arguments))
    except Exception as exc:  # a tool rejecting its arguments is part of the conversation
        return f"error: {exc}"


def _add_usage(attempt: Attempt, usage: dict | None) -> None:
    if not usage:
        return
    attempt.usage = attempt.usage or {}
    for key, value in usage.items():
        if isinstance(value, int):
            attempt.usage[key] = attempt.usage.get(key, 0) + value
