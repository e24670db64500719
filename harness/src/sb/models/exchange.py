"""The file-exchange protocol every API adapter shares (see docs/models.md).

The model is shown prompt.md and the starter files and asked for the files back in one
structured value, `{"files": [{"path": ..., "content": ...}]}`, through the API's own
structure (a forced tool call, or a JSON schema), so the reply is parsed and never
scraped out of prose. Only the starter's declared names are written; anything else is
dropped and recorded. A `reply` task takes the model's text reply as `reply.md`.

Each provider module turns its API response into a `Reply`; `conclude` turns a Reply into
the Attempt, in one order for every provider: usage and cost first (recorded even for a
rejected reply), then the answering model, refusal, truncation, and the content.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import threading
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import ClassVar

from sb.errors import SbError
from sb.grading import write_files
from sb.models import prices
from sb.models.base import Attempt, ModelAdapter, ModelOptions
from sb.outcome import Status

TOOL_NAME = "write_files"
REPLY_FILE = "reply.md"
SUPPORTED_KINDS = ("files", "reply")

FILES_INSTRUCTIONS = (
    "You are solving a programming task. The task statement and the starter files follow. "
    f"Return your solution by calling `{TOOL_NAME}` exactly once with the complete new content "
    "of every file you change; only the starter's file names are accepted. "
    "Do not ask questions: this is your only turn."
)
JSON_INSTRUCTIONS = (
    "You are solving a programming task. The task statement and the starter files follow. "
    'Reply with one JSON object only, {"files": [{"path": ..., "content": ...}]}, holding the '
    "complete new content of every file you change; only the starter's file names are accepted. "
    "Do not ask questions: this is your only turn."
)
REPLY_INSTRUCTIONS = (
    f"Answer the request below in your reply. The text of your reply is saved verbatim as {REPLY_FILE} "
    "and is the only thing read. This is your only turn."
)


class ReplyError(Exception):
    """The reply cannot be used; the message is the adapter_error's reason."""


def require_sdk(module: str, extra: str):
    """Import an optional SDK, or raise the one-line error naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SbError(f"the {module} SDK is not installed: pip install 'scratchbench[{extra}]'") from exc


def sdk_installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def check_kind(task, adapter_name: str) -> None:
    if task.meta.kind not in SUPPORTED_KINDS:
        raise ReplyError(f"task kind {task.meta.kind!r} is not supported by the {adapter_name} adapter")


def files_schema(task) -> dict:
    """The JSON schema of the reply: paths limited to the declared names (strict-mode valid)."""
    entry = {"type": "object", "additionalProperties": False, "required": ["path", "content"],
             "properties": {"path": {"type": "string", "enum": list(task.declared_files)},
                            "content": {"type": "string"}}}
    return {"type": "object", "additionalProperties": False, "required": ["files"],
            "properties": {"files": {"type": "array", "items": entry}}}


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
    usage: dict
    ended: str = "complete"        # complete | truncated | refused
    text: str = ""                 # the visible text (reply tasks; JSON-schema replies)
    payload: object = None         # the tool call's input, if the API returned one
    tool_called: bool = False
    protocol: str = "json"         # json: the text is the JSON value; tool: the payload is
    reason: str = ""               # the refusal text, or what cut the reply off
    problem: str = ""              # set by the provider when the reply's structure is unusable


@dataclass
class RequestCounter:
    """Counts HTTP requests through the SDK's client: every one after the first is a retry."""

    sent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, request) -> None:
        with self.lock:
            self.sent += 1

    @property
    def retries(self) -> int:
        return max(0, self.sent - 1)


def usage_record(input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0,
                 reasoning: int | None = None) -> dict:
    """Token counts under the names results files use; `input` excludes cached input."""
    record = {"input": int(input or 0), "output": int(output or 0), "cache_read": int(cache_read or 0),
              "cache_write": int(cache_write or 0)}
    if reasoning is not None:
        record["reasoning"] = int(reasoning)
    return record


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


def conclude(provider: str, asked: str, task, workdir: Path, reply: Reply, retries: int,
             today: date | None = None) -> Attempt:
    """The Attempt for a reply: cost always; then model, refusal, truncation, content."""
    priced_as = reply.model or asked
    cost, price = prices.cost(provider, priced_as, reply.usage, today or date.today())
    attempt = Attempt(model_answered=reply.model, usage=reply.usage, usd_cost=cost, price=price,
                      transport_retries=retries)
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
    if not isinstance(payload, dict) or not isinstance(payload.get("files"), list):
        raise ReplyError(f"malformed output: expected {{\"files\": [...]}}, got {_shape(payload)}")
    files, dropped = {}, []
    for index, entry in enumerate(payload["files"]):
        if not (isinstance(entry, dict) and isinstance(entry.get("path"), str) and isinstance(entry.get("content"), str)):
            raise ReplyError(f"malformed output: files[{index}] is not {{\"path\": str, \"content\": str}}")
        if entry["path"] in files:
            raise ReplyError(f"malformed output: {entry['path']!r} given twice")
        if entry["path"] in task.declared_files:
            files[entry["path"]] = entry["content"].encode("utf-8")
        else:
            dropped.append(entry["path"])
    return files, sorted(set(dropped))


def _json_text(reply: Reply):
    if not reply.text.strip():
        raise ReplyError(empty_detail(reply))
    try:
        return json.loads(reply.text)
    except ValueError as exc:
        raise ReplyError(f"malformed output: not JSON ({exc.msg} at char {exc.pos})") from None


def _shape(value) -> str:
    if isinstance(value, dict):
        return "an object with keys " + ", ".join(sorted(map(str, value))[:5]) if value else "an empty object"
    return type(value).__name__ if value is not None else "nothing"


def settings_error(adapter: str, settings: dict, supported: tuple) -> None:
    unsupported = sorted(set(settings) - set(supported))
    if unsupported:
        raise ReplyError(f"the {adapter} adapter does not support the setting(s) {', '.join(unsupported)}")


MAX_TRANSPORT_RETRIES = 3
BASE_SETTINGS = ("temperature", "max_tokens", "timeout_s")


class SdkAdapter(ModelAdapter):
    """An adapter over an official SDK: one request per task, the SDK's bounded retries counted.

    Subclasses name the SDK module and build the request (`ask`); the flow, the error
    mapping and the accounting are the same for every provider.
    """

    sdk_module: ClassVar[str] = ""
    provider: ClassVar[str] = ""             # the price table's key
    api_key_env: ClassVar[str] = ""
    supported_settings: ClassVar[tuple] = BASE_SETTINGS
    default_stream: ClassVar[bool] = False

    def __init__(self, max_retries: int = MAX_TRANSPORT_RETRIES, stream: bool | None = None):
        self.max_retries = max_retries
        self.stream = self.default_stream if stream is None else stream
        self._http = None
        self._http_lock = threading.Lock()
        self._current = threading.local()  # the running attempt's RequestCounter, per thread

    def installed(self) -> bool:
        return sdk_installed(self.sdk_module)

    def solve(self, model: str, task, workdir: Path, options: ModelOptions) -> Attempt:
        sdk = require_sdk(self.sdk_module, self.extra)
        counter = RequestCounter()
        try:
            check_kind(task, self.name)
            settings_error(self.name, options.settings, self.supported_settings)
            client = self.client(sdk, options, counter)
            reply = self.ask(client, model, task, options.settings)
        except ReplyError as exc:
            return Attempt(status=Status.ADAPTER_ERROR, detail=str(exc), transport_retries=counter.retries)
        except sdk.APIError as exc:
            return Attempt(status=Status.ADAPTER_ERROR, detail=transport_detail(sdk, exc, options, counter),
                           transport_retries=counter.retries)
        return conclude(self.provider, model, task, workdir, reply, counter.retries)

    def api_key(self, options: ModelOptions) -> str:
        """Read from the environment here and only here; never logged or written."""
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ReplyError(f"{self.api_key_env} is not set")
        return key

    def client(self, sdk, options: ModelOptions, counter: RequestCounter):
        self._current.counter = counter
        client_class = getattr(sdk, self.client_class)
        return client_class(api_key=self.api_key(options), base_url=self.base_url(options), timeout=options.timeout_s,
                            max_retries=self.max_retries, http_client=self._http_client(sdk))

    def _http_client(self, sdk):
        """One connection pool per adapter (building TLS contexts per task costs ~0.3s each);
        its request hook counts into the calling thread's attempt, so concurrent tasks stay apart."""
        with self._http_lock:
            if self._http is None:
                self._http = sdk.DefaultHttpxClient(event_hooks={"request": [self._count_request]})
            return self._http

    def _count_request(self, request) -> None:
        counter = getattr(self._current, "counter", None)
        if counter is not None:
            counter(request)

    def base_url(self, options: ModelOptions) -> str | None:
        return options.base_url

    client_class: ClassVar[str] = ""

    def ask(self, client, model: str, task, settings: dict) -> Reply:
        raise NotImplementedError


def transport_detail(sdk, exc, options: ModelOptions, counter: RequestCounter) -> str:
    """One line for a call that never produced a reply (the SDK's messages carry no key)."""
    tries = f"{counter.sent} request(s), {counter.retries} retried"
    if isinstance(exc, sdk.APITimeoutError):
        return f"no reply within the {options.timeout_s:g}s client timeout ({tries})"
    if isinstance(exc, sdk.APIStatusError):
        return f"HTTP {exc.status_code} from the API: {_first_line(str(exc))} ({tries})"
    return f"{type(exc).__name__}: {_first_line(str(exc))} ({tries})"


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:300]
