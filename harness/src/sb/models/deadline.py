"""A request's one deadline, and the wait a server asks for (retry-after)."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass, field


class DeadlineReached(Exception):
    """The request's deadline passed where this is raised (a chunk read, a wait)."""


@dataclass
class Deadline:
    seconds: float
    started: float = field(default_factory=time.monotonic)

    def left(self) -> float:
        return self.started + self.seconds - time.monotonic()

    def check(self) -> None:
        if self.left() <= 0:
            raise DeadlineReached


def retry_after_s(headers) -> float | None:
    """retry-after-ms, else retry-after in seconds or as an HTTP date; None when absent or unreadable."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return float(headers.get(name)) / scale
        except (TypeError, ValueError):
            pass
    parsed = email.utils.parsedate_tz(headers.get("retry-after") or "")
    return float(email.utils.mktime_tz(parsed) - time.time()) if parsed else None
