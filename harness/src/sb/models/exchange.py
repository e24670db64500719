"""The file-exchange protocol every API adapter shares (see docs/models.md).

The model is shown prompt.md and the starter files and asked for the files back in one
structured value, `{"files": {"<declared name>": "<content>" | null}}`, through the API's
own structure (a forced tool call, or a JSON schema), so the reply is parsed and never
scraped out of prose. Keyed by name, a file cannot be given twice, and a constrained
decoder (llama.cpp's grammar) cannot emit a name that was not declared. Only the
starter's declared names are written; anything else a server lets through is dropped and
recorded. A `reply` task takes the model's text reply as `reply.md`.

Each provider module turns its API response into a `Reply`; `conclude` turns a Reply into
the Attempt, in one order for every provider: usage and cost first (recorded even for a
rejected reply), then the answering model, refusal, truncation, and the content. The SDK
plumbing shared by the providers is in sb.models.sdk.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from sb.grading import write_files
from sb.models import prices
from sb.models.base import Attempt
from sb.outcome import Status

TOOL_NAME = "write_files"
REPLY_FILE = "reply.md"
SUPPORTED_KINDS = ("files", "reply")

FILES_INSTRUCTIONS = (
    "You are solving a programming task. The task statement and the starter files follow. "
    f"Return your solution by calling `{TOOL_NAME}` exactly once, giving each starter file's complete "
    "new content under its name, or null to leave it as it is. "
    "Do not ask questions: this is your only turn."
)
JSON_INSTRUCTIONS = (
    "You are solving a programming task. The task statement and the starter files follow. "
    'Reply with one JSON object only, {"files": {"<file name>": "<complete new content>"}}, giving '
    "each starter file's complete new content under its name, or null to leave it as it is. "
    "Do not ask questions: this is your only turn."
)
REPLY_INSTRUCTIONS = (
    f"Answer the request below in your reply. The text of your reply is saved verbatim as {REPLY_FILE} "
    "and is the only thing read. This is your only turn."
)


class ReplyError(Exception):
    """The reply cannot be used; the message is the adapter_error's reason."""


def check_kind(task, adapter_name: str) -> None:
    if task.meta.kind not in SUPPORTED_KINDS:
        raise ReplyError(f"task kind {task.meta.kind!r} is not supported by the {adapter_name} adapter")


def files_schema(task) -> dict:
    """The JSON schema of the reply: one key per declared name, string or null (strict-mode valid)."""
    names = list(task.declared_files)
    files = {"type": "object", "additionalProperties": False, "required": names,
             "properties": {name: {"type": ["string", "null"]} for name in names}}
    return {"type": "object", "additionalProperties": False, "required": ["files"], "properties": {"files": files}}


def user_message(task) -> str:
    """prompt.md, then each starter file in a fence headed by its path (reply tasks: the prompt only)."""
    if task.meta.kind == "reply":
        return task.prompt
    parts = [task.prompt.rstrip(), "", "## Starter files"]
    for name in task.declared_files:
        text = task.starter_files[name].decode("utf-8", errors="replace")
        parts += ["", f"### {name}", "```", text.rstrip("\n"), "```"]
    return "\n".join(parts) + "\n"


@dataclass
class Reply:
    """One API response, reduced to what the protocol needs; built by each provider module."""

    model: str | None
    usage: dict | None             # None when the reply carried no usage
    ended: str = "complete"        # complete | truncated | refused
    text: str = ""                 # the visible text (reply tasks; JSON-schema replies)
    payload: object = None         # the tool call's input, if the API returned one
    tool_called: bool = False
    protocol: str = "json"         # json: the text is the JSON value; tool: the payload is
    reason: str = ""               # the refusal text, or what cut the reply off
    problem: str = ""              # set by the provider when the reply's structure is unusable


def usage_record(input=0, output=0, cache_read=0, cache_write=0, reasoning=None) -> dict:
    """Token counts under the names results files use; `input` excludes cached input. An
    absent count is 0; anything else is kept as the API sent it, so `usage_problem` can
    name a count that is not one (a string, a negative number) instead of a crash."""
    record = {"input": _count(input), "output": _count(output), "cache_read": _count(cache_read),
              "cache_write": _count(cache_write)}
    if reasoning is not None:
        record["reasoning"] = _count(reasoning)
    return record


def _count(value):
    if value is None:
        return 0
    return int(value) if isinstance(value, float) and value.is_integer() else value


DATED_SNAPSHOT = re.compile(r"^-(\d{8}|\d{4}-\d{2}-\d{2})$")
ALIAS_SUFFIX = re.compile(r"-(latest|0)$")  # claude-opus-4-0, claude-3-7-sonnet-latest: aliases of a snapshot


def same_model(asked: str, answered: str | None) -> bool:
    """The model that answered is the one asked, or a dated snapshot of it (asked + '-20250929')."""
    if answered is None:
        return False
    if answered == asked:
        return True
    base = ALIAS_SUFFIX.sub("", asked)
    return answered.startswith(base) and bool(DATED_SNAPSHOT.match(answered[len(base):]))


MAX_PLAUSIBLE_TOKENS = {"input": 20_000_000, "output": 2_000_000}  # past any model's context / output limit
MAX_PLAUSIBLE_OTHER = 20_000_000  # cache reads and writes, reasoning: bounded by the context as well


def usage_problem(usage: dict | None) -> str:
    """'' when every count is a plausible non-negative integer; else what is wrong, with the numbers."""
    for kind, value in (usage or {}).items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"the API reported {value!r} {kind} tokens (not a count >= 0)"
        if value > MAX_PLAUSIBLE_TOKENS.get(kind, MAX_PLAUSIBLE_OTHER):
            return (f"the API reported {value} {kind} tokens, beyond any model's limit "
                    f"({MAX_PLAUSIBLE_TOKENS.get(kind, MAX_PLAUSIBLE_OTHER)}): not trusted")
    return ""


def conclude(provider: str, asked: str, task, workdir: Path, reply: Reply, retries: int,
             today: date | None = None) -> Attempt:
    """The Attempt for a reply: usage checked and cost first; then model, refusal,
    truncation, content. Missing usage on a priced model leaves the cost unknown (never
    zero); implausible usage is adapter_error, its numbers in the detail."""
    priced_as = reply.model or asked
    problem = usage_problem(reply.usage)
    if problem:
        return Attempt(status=Status.ADAPTER_ERROR, detail=problem, model_answered=reply.model,
                       transport_retries=retries, price=prices.UNPRICED)
    on = today or date.today()
    cost, price = prices.cost(provider, priced_as, reply.usage, on)
    missing = not reply.usage and prices.price_for(provider, priced_as, on) is not None
    attempt = Attempt(model_answered=reply.model, usage=reply.usage, usd_cost=cost, price=price,
                      transport_retries=retries, usage_missing=missing)
    try:
        _accept(asked, task, workdir, reply, attempt)
    except ReplyError as exc:
        attempt.status, attempt.detail = Status.ADAPTER_ERROR, str(exc)
    return attempt


def _accept(asked: str, task, workdir: Path, reply: Reply, attempt: Attempt) -> None:
    if not same_model(asked, reply.model):
        raise ReplyError(f"asked for model {asked!r}, answered by {reply.model!r} (no fallback accepted)")
    if reply.ended == "refused":
        raise ReplyError(f"refused: {reply.reason}" if reply.reason else "refused")
    if reply.ended == "truncated":
        attempt.status, attempt.detail = Status.TRUNCATED, truncation_detail(reply)
        return
    if reply.problem:
        raise ReplyError(reply.problem)
    if task.meta.kind == "reply":
        if not reply.text.strip():
            raise ReplyError(empty_detail(reply))
        write_files(workdir, {REPLY_FILE: reply.text.encode("utf-8")})
        return
    files, dropped = parse_files(task, reply)
    write_files(workdir, files)
    attempt.dropped_files = dropped


def truncation_detail(reply: Reply) -> str:
    what = reply.reason or "the output limit"
    thinking = (reply.usage or {}).get("reasoning")
    if not reply.text.strip() and reply.payload is None and thinking:
        return f"cut off at {what} after {thinking} thinking tokens, with no content"
    return f"cut off at {what}"


def empty_detail(reply: Reply) -> str:
    thinking = (reply.usage or {}).get("reasoning")
    return f"empty reply after {thinking} thinking tokens" if thinking else "empty reply"


def parse_files(task, reply: Reply) -> tuple[dict, list]:
    """({declared name: bytes}, [dropped names]) from the tool input or the JSON text."""
    if reply.protocol == "tool" and not reply.tool_called:
        raise ReplyError(f"no {TOOL_NAME} call in the reply" if reply.text.strip() else empty_detail(reply))
    payload = reply.payload if reply.protocol == "tool" else _json_text(reply)
    if not isinstance(payload, dict) or not isinstance(payload.get("files"), dict):
        raise ReplyError(f"malformed output: expected {{\"files\": {{name: content}}}}, got {_shape(payload)}")
    files, dropped = {}, []
    for name, content in payload["files"].items():
        if content is not None and not isinstance(content, str):
            raise ReplyError(f"malformed output: the content of {name!r} is {type(content).__name__}, not a string")
        if name not in task.declared_files:
            dropped.append(name)
        elif content is not None:
            files[name] = content.encode("utf-8")
    return files, sorted(dropped)


def _json_text(reply: Reply):
    if not reply.text.strip():
        raise ReplyError(empty_detail(reply))
    try:
        return json.loads(reply.text)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"malformed output: not JSON ({exc.msg} at char {exc.pos})") from None


def _shape(value) -> str:
    if isinstance(value, dict):
        return "an object with keys " + ", ".join(sorted(map(str, value))[:5]) if value else "an empty object"
    return type(value).__name__ if value is not None else "nothing"


def settings_error(adapter: str, settings: dict, supported: tuple) -> None:
    unsupported = sorted(set(settings) - set(supported))
    if unsupported:
        raise ReplyError(f"the {adapter} adapter does not support the setting(s) {', '.join(unsupported)}")
