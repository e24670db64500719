"""The base of the adapters over an official SDK (`anthropic`, `openai`): one request per
task (a tool loop: one per turn, through `tool_session`), under one deadline, its retries
counted and recorded, every failure mapped to a one-line adapter_error in plain words. The
SDK is imported only here, when a task is solved, so `sb list` and `sb --help` never pay
for it; a missing one is the one-line error naming the pip extra that provides it.

The SDK builds and sends each HTTP request (auth, headers, the typed status errors); the
retries, the deadline and the reading of the reply are `Request`'s, because the SDK's own
retry loop honours any retry-after (an hour, if the server says so) and its timeouts are
per socket read, which a server trickling keep-alive pings extends for ever. The reply is
read as bytes (JSON or server-sent events) and parsed here, so a body that is not JSON, a
malformed one or a stream cut short is described, never a Python exception's text.
"""

from __future__ import annotations

import email.utils
import hashlib
import importlib
import importlib.util
import json
import os
import random
import re
import threading
import time
from abc import abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Iterator

from sb.errors import SbError
from sb.models.base import Attempt, ModelAdapter, ModelOptions, ToolSession
from sb.models.exchange import Reply, ReplyError, check_kind, conclude, settings_error
from sb.outcome import Status
from sb.toolloop import SessionError, parse_arguments


def require_sdk(module: str, extra: str | None):
    """Import an optional SDK, or raise the one-line error naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SbError(f"the {module} SDK is not installed: `make install-sdk` in the checkout, pinned by its lock "
                      f"(or pip install 'scratchbench[{extra}]')") from exc


def sdk_installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


MAX_TRANSPORT_RETRIES = 3
RETRY_AFTER_CAP_S = 60.0       # a server asking for a longer wait ends the attempt instead
FIRST_BACKOFF_S, MAX_BACKOFF_S = 0.5, 8.0  # without a retry-after: the SDKs' own schedule
MAX_REPLY_BYTES = 64 * 2**20   # far past any model's output; a server sending more is broken
# the knobs every SDK adapter takes; timeout_s (the request's deadline) and retry_after_cap_s
# (`--retry-after-cap`) bound the waiting, and are never body fields
BASE_SETTINGS = ("temperature", "max_tokens", "timeout_s", "retry_after_cap_s")
KEY_REJECTED = (401, 403)      # authentication, permission: the key itself is refused
STREAM_ERRORS_RETRIED = ("overloaded_error",)  # the server did not do the work: as an HTTP 529 is retried


class TransportError(Exception):
    """No usable reply came back; the message is the adapter_error's detail. `no_answer`:
    nothing came back at all (the server is down, overloaded, broken, or refuses the key),
    which the sweep's circuit breaker counts; a 400 about one request is not that.
    `key_rejected`: the API refused the key (HTTP 401 or 403), which opens the breaker at
    once: every later request with that key would be refused too."""

    def __init__(self, detail: str, no_answer: bool = True, key_rejected: bool = False):
        super().__init__(detail)
        self.no_answer, self.key_rejected = no_answer, key_rejected


class BadReply(Exception):
    """The reply's bytes are not the API's answer (not JSON, malformed, cut short): why, in words."""


class StreamError(BadReply):
    """An error event mid-stream, after an HTTP 200: what the API said, its error type, and
    the retry-after of the response that carried it (None when it had none)."""

    def __init__(self, detail: str, error_type, words: str, retry_after: float | None):
        super().__init__(detail)
        self.error_type, self.words, self.retry_after = error_type, words, retry_after

    @property
    def retryable(self) -> bool:
        return self.error_type in STREAM_ERRORS_RETRIED


class DeadlineReached(Exception):
    """The request's deadline passed where this is raised (a chunk read, a wait)."""


@dataclass
class Deadline:
    seconds: float
    started: float = field(default_factory=time.monotonic)

    def left(self) -> float:
        return self.started + self.seconds - time.monotonic()

    def check(self) -> None:
        if self.left() <= 0:
            raise DeadlineReached


class Request:
    """One request to the API under one deadline that nothing extends (`--timeout`,
    ModelOptions.timeout_s): every attempt, every wait between attempts and every byte of
    the reply. An attempt runs on its own thread and the caller stops waiting at the
    deadline, so neither a silent server, a trickle of pings nor a slow DNS lookup holds a
    task past it; the abandoned attempt stops at its next byte (or its own socket timeout,
    never past the deadline's).

    Retried, at most `max_retries` times: a connection that failed before any reply, and the
    statuses the SDKs retry (408, 409, 429, 5xx, or the server's `x-should-retry`), and an
    `overloaded_error` event mid-stream (the same refusal as an HTTP 529, sent after the
    200), after the server's retry-after or the SDKs' backoff. A retry-after past
    `retry_after_cap_s` ends the attempt at once, and so does a wait that would end past the
    deadline. Any other reply that started arriving is never asked again."""

    def __init__(self, sdk, timeout_s: float, max_retries: int, retry_after_cap_s: float):
        self.sdk, self.max_retries, self.retry_after_cap_s = sdk, max_retries, retry_after_cap_s
        self.deadline = Deadline(timeout_s)
        self.sent = 0
        self.reading = False       # the current attempt's reply has started arriving
        self.last = ""             # what the last failed attempt got, for the deadline's detail

    @property
    def retries(self) -> int:
        return max(0, self.sent - 1)

    def send(self, open_response, read):
        """`open_response(timeout)`: the SDK's `with_streaming_response` call (a context manager
        of the response, its body unread); `read(body: ReplyBody)`: the answer it carries."""
        while True:
            self.sent += 1
            try:
                return within(self.deadline, lambda: self._attempt(open_response, read))
            except (DeadlineReached, self.sdk.APITimeoutError):
                now = "the reply was still arriving" if self.reading else "no reply yet"
                now += f"; the one before got {self.last}" if self.last else ""
                raise TransportError(self.deadline_detail(now)) from None
            except StreamError as exc:
                self._after_stream_error(exc)
            except BadReply as exc:
                raise TransportError(f"{exc} ({self.tries()})") from None
            except self.sdk.APIStatusError as exc:
                self._after_status(exc)
            except self.sdk.APIConnectionError as exc:
                self.last = connection_words(exc)
                if self.retries >= self.max_retries:
                    raise TransportError(f"{self.last} ({self.tries()})") from None
                self._wait(None, self.last)

    def _attempt(self, open_response, read):
        self.reading = False
        with open_response(max(0.001, self.deadline.left())) as response:
            self.reading = True
            return read(ReplyBody(response.http_response, self.deadline))

    def _after_status(self, exc) -> None:
        status = exc.status_code
        self.last = f"HTTP {status} from the API: {error_words(exc.body)}"
        retryable = should_retry(exc.response)
        if not retryable or self.retries >= self.max_retries:
            rejected = status in KEY_REJECTED
            raise TransportError(f"{self.last} ({self.tries()})", no_answer=status >= 500 or status == 429
                                 or rejected, key_rejected=rejected) from None
        self._wait(retry_after_s(exc.response.headers), status_words(status))

    def _after_stream_error(self, exc: StreamError) -> None:
        """Retried like its HTTP status when the API said it was overloaded; never said to be an HTTP 200."""
        self.last = f"an error event mid-stream: {exc.words}"
        if not exc.retryable or self.retries >= self.max_retries:
            raise TransportError(f"{exc} ({self.tries()})") from None
        self._wait(exc.retry_after, "overloaded mid-stream")

    def _wait(self, after: float | None, what: str) -> None:
        if after is not None and after > self.retry_after_cap_s:
            cap = seconds(self.retry_after_cap_s)
            raise TransportError(f"{what}: retry-after {seconds(after)} s exceeds the {cap} s cap ({self.tries()})")
        wait = after if after is not None and after > 0 else backoff_s(self.retries)
        if wait >= self.deadline.left():
            raise TransportError(self.deadline_detail(
                f"the last got {self.last}; the next try, {seconds(wait)} s away, would start past it"))
        time.sleep(wait)

    def tries(self) -> str:
        return f"{plural(self.sent, 'request')} sent"

    def deadline_detail(self, now: str) -> str:
        return f"no complete answer within the {seconds(self.deadline.seconds)} s deadline ({self.tries()}; {now})"


def within(deadline: Deadline, attempt):
    """attempt() on its own thread; its value or its exception, or DeadlineReached at the deadline."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = attempt()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, whatever it is
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="sb-model-request", daemon=True)
    thread.start()
    thread.join(max(0.0, deadline.left()))
    if thread.is_alive():
        raise DeadlineReached
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class ReplyBody:
    """A response's body, read chunk by chunk against the deadline and the size bound."""

    def __init__(self, http_response, deadline: Deadline):
        self.http, self.deadline = http_response, deadline
        self.head, self.total = b"", 0  # the first bytes and the length, to say what a bad body was

    def chunks(self) -> Iterator[bytes]:
        total = 0
        try:
            for chunk in self.http.iter_bytes():
                self.deadline.check()
                self.head = self.head if len(self.head) >= 200 else (self.head + chunk)[:200]
                total = self.total = total + len(chunk)
                if total > MAX_REPLY_BYTES:
                    raise BadReply(f"the reply is longer than {MAX_REPLY_BYTES // 2**20} MiB")
                yield chunk
        except Exception as exc:
            if not http_error(exc):
                raise
            if "Timeout" in type(exc).__name__:  # each read's timeout is the time left
                raise DeadlineReached from None
            raise BadReply(f"the reply broke off after {total} bytes: {http_error_words(exc)}") from None

    def json(self) -> dict:
        data = b"".join(self.chunks())
        try:
            value = json.loads(data)
        except ValueError as exc:
            raise BadReply(f"HTTP {self.http.status_code} with a body that is not JSON ({self._what(data, exc)})") \
                from None
        if not isinstance(value, dict):
            raise BadReply(f"HTTP {self.http.status_code} with a JSON {json_type(value)} instead of an object")
        return value

    def _what(self, data: bytes, exc: ValueError) -> str:
        if not data.strip():
            return "an empty body"
        kind = self.http.headers.get("content-type") or "no content-type"
        cut = isinstance(exc, json.JSONDecodeError) and exc.pos >= len(data.rstrip())
        return f"{'cut off after ' if cut else ''}{len(data)} bytes of {kind}: {quoted(data)}"

    def events(self) -> Iterator[dict]:
        """The stream's events as JSON objects, up to `[DONE]` or the end; pings skipped, an
        error event raised as BadReply naming what the server said."""
        count = 0
        for name, data in sse_events(self.chunks()):
            if data.strip() == "[DONE]":
                return
            if name == "ping" or not data.strip():
                continue
            count += 1
            try:
                value = json.loads(data)
            except ValueError:
                raise BadReply(f"streamed event {count} is not JSON: {quoted(data)}") from None
            if not isinstance(value, dict):
                raise BadReply(f"streamed event {count} is a JSON {json_type(value)}, not an object")
            if name == "error" or value.get("type") == "error" or value.get("error"):
                error = value.get("error")
                words = error_words(value)
                raise StreamError(f"the reply stream broke off after {plural(count - 1, 'event')} with an error "
                                  f"from the API: {words}", error.get("type") if isinstance(error, dict) else None,
                                  words, retry_after_s(self.http.headers))
            yield value
        kind = self.http.headers.get("content-type") or "no content-type"
        if not count and self.total and not kind.startswith("text/event-stream"):
            raise BadReply(f"HTTP {self.http.status_code} with {self.total} bytes of {kind} instead of an event "
                           f"stream: {quoted(self.head)}")


LINE_END = re.compile(rb"\r\n|\n|\r")


def sse_events(chunks) -> Iterator[tuple]:
    """(event name or None, data) per server-sent event (the WHATWG rules: comments dropped,
    data lines joined, an event unfinished at the end of the stream discarded)."""
    pending, name = b"", None
    data: list[str] = []
    for chunk in chunks:
        pending += chunk
        while (end := LINE_END.search(pending)) and not (end.group() == b"\r" and end.end() == len(pending)):
            line, pending = pending[:end.start()], pending[end.end():]
            if not line:
                if data:
                    yield name, "\n".join(data)
                name, data = None, []
                continue
            field_name, _, value = line.partition(b":")
            value = value[1:] if value.startswith(b" ") else value
            if field_name == b"event":
                name = value.decode("utf-8", errors="replace")
            elif field_name == b"data":
                data.append(value.decode("utf-8", errors="replace"))


def should_retry(response) -> bool:
    """The SDKs' rule: the server's x-should-retry, else 408, 409, 429 and every 5xx."""
    header = response.headers.get("x-should-retry")
    if header in ("true", "false"):
        return header == "true"
    return response.status_code in (408, 409, 429) or response.status_code >= 500


def retry_after_s(headers) -> float | None:
    """retry-after-ms, else retry-after in seconds or as an HTTP date; None when absent or unreadable."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return float(headers.get(name)) / scale
        except (TypeError, ValueError):
            pass
    parsed = email.utils.parsedate_tz(headers.get("retry-after") or "")
    return float(email.utils.mktime_tz(parsed) - time.time()) if parsed else None


def backoff_s(retries_done: int) -> float:
    return min(FIRST_BACKOFF_S * 2.0 ** retries_done, MAX_BACKOFF_S) * (1 - 0.25 * random.random())


STATUS_WORDS = {429: "rate limited", 529: "overloaded", 503: "service unavailable", 500: "internal server error",
                502: "bad gateway", 504: "gateway timeout", 408: "request timeout", 409: "conflict"}


def status_words(status: int) -> str:
    return STATUS_WORDS.get(status, f"HTTP {status}")


def error_words(body) -> str:
    """What an error body says: the API's message and error type, or what the body was instead."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, str):
            return clip(error)
        if isinstance(error, dict):
            message, kind = error.get("message"), error.get("type") or error.get("code")
            if message or kind:
                return clip(f"{message or kind}" + (f" ({kind})" if message and kind else ""))
        return "an error body with no message"
    if isinstance(body, str):
        return f"a body that is not JSON: {quoted(body)}" if body.strip() else "an empty body"
    return "no error body" if body is None else f"an error body that is a JSON {json_type(body)}"


def connection_words(exc) -> str:
    """A connection failure in words: what failed, and the system's reason when there is one."""
    cause, reason = exc.__cause__, ""
    while cause is not None:
        if isinstance(cause, OSError) and cause.strerror:
            reason = f" ({cause.strerror})"
            break
        cause = cause.__cause__ or cause.__context__
    name = type(exc.__cause__).__name__ if exc.__cause__ is not None else ""
    if name == "ConnectError":
        return f"could not connect to the API{reason}"
    if name == "RemoteProtocolError":
        return f"the server closed the connection before the reply was complete{reason}"
    if name in ("ReadError", "WriteError"):
        return f"the connection broke{reason}"
    return f"the connection failed{reason}"


def http_error(exc: Exception) -> bool:
    """A transport error raised while reading a body: the SDKs do not wrap those."""
    return type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2")


def http_error_words(exc: Exception) -> str:
    name = type(exc).__name__
    if name in ("RemoteProtocolError", "IncompleteRead"):
        return "the server closed the connection before the end"
    if name in ("ReadError", "NetworkError"):
        return "the connection broke"
    return f"the connection failed ({name})"


def history_arguments(raw) -> dict | None:
    """A tool call's arguments where the API takes back only a JSON object (the Messages API
    rejects anything else with a 400; vLLM's and llama.cpp's servers parse Chat arguments to
    render their chat template and fail on broken JSON): the object the model sent, else None,
    for the adapter to send an empty object in its API's form, the call's tool result saying
    "error: arguments are not a JSON object". Where the API takes any string (OpenAI's), the
    arguments go back as sent. The transcript keeps exactly what the model sent, always."""
    arguments = parse_arguments(raw)
    return arguments if isinstance(arguments, dict) else None


def json_type(value) -> str:
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}.get(type(value), "null")


def seconds(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def clip(text, limit: int = 120) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def quoted(text, limit: int = 120) -> str:
    """Bytes a server sent instead of the API's JSON, quoted, shortened, on one line."""
    return repr(clip(text, limit))


@dataclass(frozen=True)
class Service:
    """Where an SDK adapter's API is and how it is reached, declared once per provider."""

    sdk_module: str                  # the SDK's importable name
    client_class: str                # its client, e.g. "Anthropic"
    api_key_env: str                 # the key's variable, read only when a client is made
    base_url_env: str = ""           # the SDK reads its base URL from this when none is given
    official_url: str | None = None  # None: only a server the user names


class SdkAdapter(ModelAdapter):
    """An adapter over an official SDK: one request per task under one deadline, its retries counted.

    Subclasses declare their `Service` and build the request (`ask`); the flow, the error
    mapping and the accounting are the same for every provider.
    """

    service: ClassVar[Service] = Service("", "", "")
    provider: ClassVar[str] = ""             # the price table's key
    supported_settings: ClassVar[tuple] = BASE_SETTINGS
    default_stream: ClassVar[bool] = False
    uses_base_url: ClassVar[bool] = True

    def __init__(self, max_retries: int = MAX_TRANSPORT_RETRIES, stream: bool | None = None,
                 retry_after_cap_s: float = RETRY_AFTER_CAP_S):
        self.max_retries, self.retry_after_cap_s = max_retries, retry_after_cap_s
        self.stream = self.default_stream if stream is None else stream
        self._http = None
        self._http_lock = threading.Lock()
        self._rejected: dict = {}  # (endpoint, key digest) -> why the API refused that key

    def installed(self) -> bool:
        return sdk_installed(self.service.sdk_module)

    def solve(self, model: str, task, workdir: Path, options: ModelOptions) -> Attempt:
        sdk = require_sdk(self.service.sdk_module, self.extra)
        request = None
        try:
            check_kind(task, self.name)
            settings_error(self.name, options.settings, self.supported_settings)
            client = self.client(sdk, options)
            request = self.request(sdk, options)  # the deadline starts here, with the first request
            reply = self.ask(client, request, model, task, options.settings)
        except ReplyError as exc:
            return Attempt(status=Status.ADAPTER_ERROR, detail=str(exc))
        except TransportError as exc:
            assert request is not None  # only the request raises TransportError
            self.note_rejection(options, exc)
            return Attempt(status=Status.ADAPTER_ERROR, detail=str(exc), transport_retries=request.retries,
                           transport_failure=exc.no_answer)
        return conclude(self.provider, model, task, workdir, reply, request.retries)

    def request(self, sdk, options: ModelOptions) -> Request:
        cap = options.settings.get("retry_after_cap_s", self.retry_after_cap_s)  # `--retry-after-cap`
        return Request(sdk, options.timeout_s, self.max_retries, float(cap))

    def key_rejected(self, options: ModelOptions) -> str:
        """Why the API refused this run's key (its endpoint and key), once it has; '' before."""
        return self._rejected.get(self._credential(options), "")

    def note_rejection(self, options: ModelOptions, exc: TransportError) -> None:
        """A 401 or 403: remembered for the key and endpoint it refused, for the sweep to stop on."""
        if exc.key_rejected:
            env = self.service.api_key_env
            key = f"the key in {env}" if os.environ.get(env) else f"the placeholder key ({env} is not set)"
            self._rejected[self._credential(options)] = f"the {self.name} API rejected {key}: {exc}"

    def _credential(self, options: ModelOptions) -> tuple:
        try:
            key = self.api_key(options)
        except ReplyError:
            key = ""
        return self.endpoint(options), hashlib.sha256(key.encode()).hexdigest()

    def preflight(self, model: str, options: ModelOptions) -> None:
        require_sdk(self.service.sdk_module, self.extra)
        try:
            settings_error(self.name, options.settings, self.supported_settings)
            self.api_key(options)
            url = self.base_url(options)
        except ReplyError as exc:
            raise SbError(f"{self.name}: {exc}") from None
        if url:  # a server the user named: parse it, then one connection before any task
            from sb.inputs import base_url, probe_endpoint
            probe_endpoint(base_url(url), min(options.timeout_s, 10.0))

    def api_key(self, options: ModelOptions) -> str:
        """Read from the environment here and only here; never logged or written."""
        key = os.environ.get(self.service.api_key_env)
        if not key:
            raise ReplyError(f"{self.service.api_key_env} is not set")
        return key

    def client(self, sdk, options: ModelOptions):
        """The SDK's client with its own retries off: `Request` retries, under the deadline."""
        client_class = getattr(sdk, self.service.client_class)
        return client_class(api_key=self.api_key(options), base_url=self.base_url(options), timeout=options.timeout_s,
                            max_retries=0, http_client=self._http_client(sdk))

    def _http_client(self, sdk):
        """One connection pool per adapter (building TLS contexts per task costs ~0.3s each)."""
        with self._http_lock:
            if self._http is None:
                self._http = sdk.DefaultHttpxClient()
            return self._http

    def base_url(self, options: ModelOptions) -> str | None:
        return options.base_url

    def endpoint(self, options: ModelOptions) -> str | None:
        """After the environment: `--base-url`, else the SDK's base-URL variable, else the official API."""
        return options.base_url or os.environ.get(self.service.base_url_env) or self.service.official_url

    def official_endpoint(self) -> str | None:
        return self.service.official_url

    @abstractmethod
    def ask(self, client, request: Request, model: str, task, settings: dict) -> Reply:
        """Send the one request through `request` and reduce the answer to a Reply."""

    supports_tool_loops = True

    def tool_session(self, model: str, task, tools: list, options: ModelOptions) -> "SdkToolSession":
        """A tool_loop conversation through the API's native tool interface (sb.toolloop drives it)."""
        sdk = require_sdk(self.service.sdk_module, self.extra)
        try:
            settings_error(self.name, options.settings, self.supported_settings)
            client = self.client(sdk, options)
        except ReplyError as exc:
            raise SessionError(str(exc)) from None
        return SdkToolSession(self, sdk, client, self.conversation(model, task, tools, options.settings), options)

    def conversation(self, model: str, task, tools: list, settings: dict):
        """The provider's history of one tool loop: `step(client, request, results) -> ModelTurn`."""
        raise NotImplementedError(f"the {self.name} adapter has no tool conversation")


class SdkToolSession(ToolSession):
    """One tool-loop conversation over an SDK: a request per turn, each under its own
    deadline, each turn's retries counted into `transport_retries`; a failure becomes the
    loop's SessionError (whose message carries no key), so the loop ends as adapter_error
    with its usage so far."""

    def __init__(self, adapter: SdkAdapter, sdk, client, conversation, options: ModelOptions):
        self.adapter, self.sdk, self.client = adapter, sdk, client
        self.conversation, self.options = conversation, options
        self.provider = adapter.provider
        self.model_answered: str | None = None
        self.transport_retries = 0

    def step(self, results: list):
        request = self.adapter.request(self.sdk, self.options)
        try:
            turn = self.conversation.step(self.client, request, results)
        except TransportError as exc:
            self.adapter.note_rejection(self.options, exc)
            raise SessionError(str(exc), no_answer=exc.no_answer) from None
        finally:
            self.transport_retries += request.retries
        self.model_answered = turn.model or self.model_answered
        return turn
