"""Hand every finished draw to the registered reporters (the register_reporters hook).

A reporter publishes a results document elsewhere. Its failure is a one-line warning: the
results file is already written and is never lost because a dashboard was down.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar


class Reporter(ABC):
    """What the harness uses of a reporter (register it with the register_reporters hook)."""

    name: ClassVar[str] = ""

    @abstractmethod
    def report(self, doc: dict, path: Path) -> None:
        """Publish one finished draw (`doc`, already written to `path`); raise to warn."""


def notify_reporters(runs: list, pm=None) -> list:
    """Call reporter.report(doc, path) for every (doc, path); return warnings, never raise."""
    from sb.plugins import collect, load_plugins
    registry = collect(pm or load_plugins(), "register_reporters", "reporter", lambda r: r.name)
    warnings = []
    for name, reporter in registry.items.items():
        for doc, path in runs:
            try:
                reporter.report(doc, path)
            except Exception as exc:  # a third party's bug must not cost a finished sweep
                warnings.append(f"reporter {name!r} failed on {path}: {type(exc).__name__}: {exc}")
    return warnings
