"""One request under one deadline, its retries counted: which failures are retried, after
how long, and the one-line error each ends as (models/sdk.py's adapters send through it)."""

from __future__ import annotations

import random
import threading
import time

from sb.models.deadline import Deadline, DeadlineReached, retry_after_s
from sb.models.reply_body import BadReply, ReplyBody, StreamError
from sb.models.wording import connection_words, error_words, plural, seconds, status_words

MAX_TRANSPORT_RETRIES = 3
RETRY_AFTER_CAP_S = 60.0       # a server asking for a longer wait ends the attempt instead
FIRST_BACKOFF_S, MAX_BACKOFF_S = 0.5, 8.0  # without a retry-after: the SDKs' own schedule
KEY_REJECTED = (401, 403)      # authentication, permission: the key itself is refused


class TransportError(Exception):
    """No usable reply came back; the message is the adapter_error's detail. `no_answer`:
    nothing came back at all (the server is down, overloaded, broken, or refuses the key),
    which the sweep's circuit breaker counts; a 400 about one request is not that.
    `key_rejected`: the API refused the key (HTTP 401 or 403), which opens the breaker at
    once: every later request with that key would be refused too."""

    def __init__(self, detail: str, no_answer: bool = True, key_rejected: bool = False):
        super().__init__(detail)
        self.no_answer, self.key_rejected = no_answer, key_rejected


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


def should_retry(response) -> bool:
    """The SDKs' rule: the server's x-should-retry, else 408, 409, 429 and every 5xx."""
    header = response.headers.get("x-should-retry")
    if header in ("true", "false"):
        return header == "true"
    return response.status_code in (408, 409, 429) or response.status_code >= 500


def backoff_s(retries_done: int) -> float:
    return min(FIRST_BACKOFF_S * 2.0 ** retries_done, MAX_BACKOFF_S) * (1 - 0.25 * random.random())
