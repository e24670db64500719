"""Where a draw was served, and the name it is shown under.

A results file records the endpoint that answered and the provider's own API (None for
an adapter with no provider, such as `openai-compatible`). A draw answered anywhere but
the provider's own API is another server's work: it is shown as `MODEL @ HOST` in every
report, table, comparison and page, never under the bare model name, and `sb publish`
refuses it without --allow-endpoint. Only the host and port are ever shown: a URL's user
name, password, path and query may hold credentials.

A `cmd:` draw was answered by a local agent command, run unsandboxed with the user's own
account, so nothing stopped it reading a task's reference and hidden tests: it is shown as
`MODEL @ local agent command` in the same places, and `sb publish` refuses it without
--allow-agent.
"""

from __future__ import annotations

from urllib.parse import urlsplit


AGENT_ADAPTER = "cmd"
LOCAL_AGENT = "local agent command"


def ran_local_agent(doc: dict) -> bool:
    """Whether a `cmd:` agent wrote the answers (it calls no endpoint, so `endpoint` is None)."""
    return doc.get("adapter") == AGENT_ADAPTER


def served_at(doc: dict) -> str | None:
    """The host:port that answered, when it is not the provider's own API; LOCAL_AGENT for a
    `cmd:` agent; None for the provider's API and for the controls, which call no endpoint."""
    if ran_local_agent(doc):
        return LOCAL_AGENT
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
    """The name a draw is shown and selected under: `MODEL @ HOST` when served elsewhere,
    `MODEL @ local agent command` for a `cmd:` agent."""
    where = served_at(doc)
    return f"{doc['model']} @ {where}" if where else doc["model"]
