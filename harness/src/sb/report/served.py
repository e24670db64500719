"""Where a draw was served, and the name it is shown under.

A results file records the endpoint that answered and the provider's own API (None for
an adapter with no provider, such as `openai-compatible`). A draw answered anywhere but
the provider's own API is another server's work: it is shown as `MODEL @ HOST` in every
report, table, comparison and page, never under the bare model name, and `sb publish`
refuses it without --allow-endpoint. Only the host and port are ever shown: a URL's user
name, password, path and query may hold credentials.
"""

from __future__ import annotations

from urllib.parse import urlsplit


def served_at(doc: dict) -> str | None:
    """The host:port that answered, when it is not the provider's own API; None for the
    provider's API and for runs that called no endpoint (the controls, a `cmd:` agent)."""
    used = doc.get("endpoint")
    if not used:
        return None
    official = doc.get("official_endpoint")
    if official and used.rstrip("/") == official.rstrip("/"):
        return None
    return host_of(used)


def host_of(url: str) -> str:
    """'host[:port]' of a URL, without user name or password; the URL's start if it has no host."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        host, port = "", None
    if not host:
        return "an unnamed endpoint"
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port else host


def model_label(doc: dict) -> str:
    """The name a draw is shown and selected under: `MODEL @ HOST` when served elsewhere."""
    where = served_at(doc)
    return f"{doc['model']} @ {where}" if where else doc["model"]
