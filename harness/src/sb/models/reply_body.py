"""A reply read as bytes (JSON or server-sent events) within the deadline and a size bound,
and parsed here, so a body that is not JSON, a malformed one or a stream cut short is
described in words, never a Python exception's text."""

from __future__ import annotations

import json
import re
from typing import Iterator

from sb.models.deadline import Deadline, DeadlineReached, retry_after_s
from sb.models.wording import error_words, http_error, http_error_words, json_type, plural, quoted

MAX_REPLY_BYTES = 64 * 2**20   # far past any model's output; a server sending more is broken
STREAM_ERRORS_RETRIED = ("overloaded_error",)  # the server did not do the work: as an HTTP 529 is retried


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
