"""Open-loop arrival schedules: when each request of a rate level is due, fixed before the level starts.

Why open loop at all: a closed loop of N streams sends its next request only when one
ends, so a slow server is sent less work and its queueing never shows. Real users arrive
whether or not the server has caught up; an open-loop level sends on a schedule drawn
beforehand and records how late each send was against it (its send lag), so a client that
could not keep up is seen as such instead of as server latency.
"""

from __future__ import annotations

import math
import random

KINDS = ("poisson", "constant")


def schedule(kind: str, rate_rps: float, n: int, seed: int = 0) -> list:
    """Offsets in seconds from the level's start, first at 0: evenly spaced, or Poisson (seeded, exponential gaps).

    The seed is mixed with the rate so each level of a sweep gets its own, reproducible draw.
    """
    if rate_rps <= 0 or n < 1:
        raise ValueError("a schedule needs a positive rate and at least one request")
    if kind == "constant":
        return [i / rate_rps for i in range(n)]
    if kind != "poisson":
        raise ValueError(f"arrivals must be one of {', '.join(KINDS)}, got {kind!r}")
    rng = random.Random(f"{seed}:{rate_rps!r}")
    offsets, t = [0.0], 0.0
    for _ in range(n - 1):
        t += rng.expovariate(rate_rps)
        offsets.append(t)
    return offsets


def requests_for_rate(rate_rps: float, requested: int | None) -> int:
    """Requests at a rate level when the user names no count: ten seconds' worth, at least eight."""
    return requested if requested else max(8, math.ceil(10 * rate_rps))
