"""The one rule for turning a model name, a slug or a run id into a file name."""

from __future__ import annotations


def safe_name(text: str, limit: int | None = None, empty: str = "_") -> str:
    """Letters, digits, '-', '_' and '.' kept; anything else (a '/', ':', a space) is '_'. A
    leading '.' is '_' too: a `cmd:` agent's model `./my-agent.sh` would otherwise name a file
    that `ls` hides (or '.' or '..'). Never empty: `empty` stands in for a name with no characters."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:limit]
    if safe.startswith("."):
        safe = "_" + safe[1:]
    return safe or empty
