"""`--search`: find the highest load that holds the objective, walking up then bisecting, within a request bound.

Why not just a finer sweep: the levels that matter are the two either side of the break,
and a fixed sweep spends most of its requests far from it. The walk doubles the load from
the start until a level breaks; the bisection then narrows the gap between the last level
that held and the first that broke, to one stream (concurrency: the exact capacity) or to
`resolution` of the rate (open loop: a rate has no exact neighbour). Each probe's cost is
checked against `budget` (total measured requests) before it is run; when the next probe
would exceed it, the search stops and says the capacity lies in [lo, hi).

This module only decides what to probe next; the load generator runs each probe and
reports back, so the rule can be tested without a server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Search:
    start: float
    integer: bool                             # concurrency (True) or rate (False)
    budget: int                               # total measured requests the search may spend
    requests_for: Callable[[float], int]
    resolution: float = 0.05                  # rates: stop once hi <= lo x (1 + resolution)
    lo: float | None = None                   # highest load that held
    hi: float | None = None                   # lowest load that broke
    used: int = 0
    probes: list = field(default_factory=list)
    stopped_by: str | None = None

    def next_value(self):
        """The next load to probe, or None when the search is over (`stopped_by` says why)."""
        if self.stopped_by:
            return None
        value = self._candidate()
        if value is None:
            return None
        if self.used + self.requests_for(value) > self.budget:
            self.stopped_by = "request bound"
            return None
        return value

    def _candidate(self):
        if self.hi is None:
            return self.start if self.lo is None else self.lo * 2
        if self.lo is None:
            self.stopped_by = "the lowest load broke"
            return None
        if self.integer:
            if self.hi - self.lo <= 1:
                self.stopped_by = "exact"
                return None
            return (self.lo + self.hi) // 2
        if self.hi <= self.lo * (1 + self.resolution):
            self.stopped_by = "resolution"
            return None
        return (self.lo + self.hi) / 2

    def record(self, value, held: bool, requests: int, client_limited: bool = False) -> None:
        """What the probe at `value` found. A client-limited probe ends the search: beyond it the client is measured."""
        self.used += requests
        self.probes.append({"order": len(self.probes) + 1, "value": value, "held": held,
                            "client_limited": client_limited, "requests": requests})
        if client_limited:
            self.stopped_by = "client-limited"
        elif held:
            self.lo = value
        else:
            self.hi = value

    def result(self) -> dict:
        return {"on": "concurrency" if self.integer else "rate", "start": self.start, "budget_requests": self.budget,
                "requests_used": self.used, "resolution": None if self.integer else self.resolution,
                "highest_held": self.lo, "lowest_broken": self.hi, "stopped_by": self.stopped_by,
                "exact": self.stopped_by in ("exact", "resolution", "the lowest load broke"),
                "probes": self.probes}
