"""The one rule for turning a model name, a slug or a run id into a file name."""

from __future__ import annotations


def safe_name(text: str, limit: int | None = None, empty: str = "_") -> str:
    """Letters, digits, '-', '_' and '.' kept; anything else (a '/', ':', a space) is '_'."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:limit]
    return safe or empty
