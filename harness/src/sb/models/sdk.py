"""The base of the adapters over an official SDK (`anthropic`, `openai`): one request per
task (a tool loop: one per turn, through `tool_session`), the SDK's own bounded retries
counted and recorded, transport failures mapped to one-line adapter_errors. The SDK is imported only here, when a task is solved, so
`sb list` and `sb --help` never pay for it; a missing one is the one-line error naming
the pip extra that provides it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from abc import abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from sb.errors import SbError
from sb.models.base import Attempt, ModelAdapter, ModelOptions, ToolSession
from sb.models.exchange import Reply, ReplyError, check_kind, conclude, settings_error
from sb.outcome import Status
from sb.toolloop import SessionError


def require_sdk(module: str, extra: str):
    """Import an optional SDK, or raise the one-line error naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SbError(f"the {module} SDK is not installed: pip install 'scratchbench[{extra}]'") from exc


def sdk_installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


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


MAX_TRANSPORT_RETRIES = 3
# the knobs every SDK adapter takes; timeout_s configures the client, never the request
BASE_SETTINGS = ("temperature", "max_tokens", "timeout_s")


class SdkAdapter(ModelAdapter):
    """An adapter over an official SDK: one request per task, the SDK's bounded retries counted.

    Subclasses name the SDK module and build the request (`ask`); the flow, the error
    mapping and the accounting are the same for every provider.
    """

    sdk_module: ClassVar[str] = ""
    client_class: ClassVar[str] = ""         # the SDK's client, e.g. "Anthropic"
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
        except Exception as exc:
            if not (isinstance(exc, sdk.APIError) or broken_stream(exc)):
                raise
            return Attempt(status=Status.ADAPTER_ERROR, detail=transport_detail(sdk, exc, options, counter),
                           transport_retries=counter.retries, transport_failure=_is_transport(sdk, exc))
        return conclude(self.provider, model, task, workdir, reply, counter.retries)

    def preflight(self, model: str, options: ModelOptions) -> None:
        require_sdk(self.sdk_module, self.extra)
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

    base_url_env: ClassVar[str] = ""         # the SDK reads its base URL from this when none is given
    official_url: ClassVar[str | None] = None

    def endpoint(self, options: ModelOptions) -> str | None:
        """After the environment: `--base-url`, else the SDK's base-URL variable, else the official API."""
        return options.base_url or os.environ.get(self.base_url_env) or self.official_url

    def official_endpoint(self) -> str | None:
        return self.official_url

    @abstractmethod
    def ask(self, client, model: str, task, settings: dict) -> Reply:
        """Send the one request and reduce the response to a Reply."""

    supports_tool_loops = True

    def tool_session(self, model: str, task, tools: list, options: ModelOptions) -> "SdkToolSession":
        """A tool_loop conversation through the API's native tool interface (sb.toolloop drives it)."""
        sdk = require_sdk(self.sdk_module, self.extra)
        try:
            settings_error(self.name, options.settings, self.supported_settings)
            client = self.client(sdk, options, RequestCounter())
        except ReplyError as exc:
            raise SessionError(str(exc)) from None
        return SdkToolSession(self, sdk, client, self.conversation(model, task, tools, options.settings), options)

    def conversation(self, model: str, task, tools: list, settings: dict):
        """The provider's history of one tool loop: `step(client, results) -> ModelTurn`."""
        raise NotImplementedError(f"the {self.name} adapter has no tool conversation")


class SdkToolSession(ToolSession):
    """One tool-loop conversation over an SDK: a request per turn, each turn's SDK retries
    counted into `transport_retries`, a transport failure turned into the loop's SessionError
    (whose message carries no key) so the loop ends as adapter_error with its usage so far."""

    def __init__(self, adapter: SdkAdapter, sdk, client, conversation, options: ModelOptions):
        self.adapter, self.sdk, self.client = adapter, sdk, client
        self.conversation, self.options = conversation, options
        self.provider = adapter.provider
        self.model_answered: str | None = None
        self.transport_retries = 0

    def step(self, results: list):
        counter = RequestCounter()
        self.adapter._current.counter = counter  # the shared pool counts into this turn, on this thread
        try:
            turn = self.conversation.step(self.client, results)
        except Exception as exc:
            if not (isinstance(exc, self.sdk.APIError) or broken_stream(exc)):
                raise
            raise SessionError(transport_detail(self.sdk, exc, self.options, counter)) from None
        finally:
            self.transport_retries += counter.retries
        self.model_answered = turn.model or self.model_answered
        return turn


def broken_stream(exc: Exception) -> bool:
    """A transport error raised while reading a stream: the SDK does not wrap (or retry) those."""
    return type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2")


def transport_detail(sdk, exc, options: ModelOptions, counter: RequestCounter) -> str:
    """One line for a call that never produced a reply (the SDK's messages carry no key)."""
    tries = f"{counter.sent} request(s), {counter.retries} retried"
    if isinstance(exc, sdk.APITimeoutError):
        return f"no reply within the {options.timeout_s:g}s client timeout ({tries})"
    if broken_stream(exc):
        stalled = "Timeout" in type(exc).__name__
        what = f"stalled past the {options.timeout_s:g}s client timeout" if stalled else "broke off"
        return f"the reply stream {what}: {type(exc).__name__} ({tries})"
    if isinstance(exc, sdk.APIStatusError):
        return f"HTTP {exc.status_code} from the API: {_first_line(str(exc))} ({tries})"
    return f"{type(exc).__name__}: {_first_line(str(exc))} ({tries})"


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:300]


def _is_transport(sdk, exc) -> bool:
    """No usable answer came back at all: the connection, a timeout, the server's own
    errors (5xx, 529 overloaded, 429 after the retries). A 400 about one request is not."""
    if isinstance(exc, (sdk.APIConnectionError, sdk.APITimeoutError)) or broken_stream(exc):
        return True
    status = getattr(exc, "status_code", None)
    return status is not None and (status >= 500 or status == 429)
