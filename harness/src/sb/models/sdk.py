"""The base of the adapters over an official SDK (`anthropic`, `openai`): one request per
task (a tool loop: one per turn, through `tool_session`), under one deadline, its retries
counted and recorded, every failure mapped to a one-line adapter_error in plain words. The
SDK is imported only here, when a task is solved, so `sb list` and `sb --help` never pay
for it; a missing one is the one-line error naming the pip extra that provides it.

The SDK builds and sends each HTTP request (auth, headers, the typed status errors); the
retries, the deadline and the reading of the reply are ours, because the SDK's own retry
loop honours any retry-after (an hour, if the server says so) and its timeouts are per
socket read, which a server trickling keep-alive pings extends for ever. Its parts:
retry.py (`Request`: attempts, waits, the error each ends as), deadline.py, reply_body.py
(the reply read as bytes and parsed, JSON or server-sent events) and wording.py (the
words for each failure).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import threading
from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from sb.errors import SbError
from sb.models.base import Attempt, ModelAdapter, ModelOptions, ToolSession
from sb.models.exchange import Reply, ReplyError, check_kind, conclude, settings_error
from sb.models.retry import MAX_TRANSPORT_RETRIES, RETRY_AFTER_CAP_S, Request, TransportError
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


# the knobs every SDK adapter takes; timeout_s (the request's deadline) and retry_after_cap_s
# (`--retry-after-cap`) bound the waiting, and are never body fields
BASE_SETTINGS = ("temperature", "max_tokens", "timeout_s", "retry_after_cap_s")


def history_arguments(raw) -> dict | None:
    """A tool call's arguments where the API takes back only a JSON object (the Messages API
    rejects anything else with a 400; vLLM's and llama.cpp's servers parse Chat arguments to
    render their chat template and fail on broken JSON): the object the model sent, else None,
    for the adapter to send an empty object in its API's form, the call's tool result saying
    "error: arguments are not a JSON object". Where the API takes any string (OpenAI's), the
    arguments go back as sent. The transcript keeps exactly what the model sent, always."""
    arguments = parse_arguments(raw)
    return arguments if isinstance(arguments, dict) else None


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
            from sb.inputs import base_url, require_reachable
            require_reachable(base_url(url), min(options.timeout_s, 10.0))

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
