"""Plain words for what went wrong with a request: HTTP statuses, an API's error body, a
connection failure, and the small formatters they share."""

from __future__ import annotations

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
