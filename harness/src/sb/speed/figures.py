"""The figures computed from per-request records: per level, single stream, capacity.

Capacity walks up the levels and stops at the first whose per-stream speed misses the
floor. It is never peak aggregate / floor: per-stream speed falls as concurrency rises, so
the peak aggregate is reached where each stream is already slower than the floor, and
dividing it by the floor counts streams at a speed none of them gets.
"""

from __future__ import annotations

import math
from collections import Counter

from sb.speed.records import token_gaps_s


def percentile(values: list, q: float):
    """Linear interpolation between closest ranks (numpy's default); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def spread(values: list) -> dict:
    return {"median": percentile(values, 50), "p90": percentile(values, 90), "p99": percentile(values, 99)}


def achieved_concurrency(records: list) -> tuple:
    """(time-weighted streams in flight, window seconds) from first request written to last response end."""
    if not records:
        return None, 0.0
    start = min(r["written_s"] for r in records)
    window = max(r["end_s"] for r in records) - start
    busy = sum(r["end_s"] - r["written_s"] for r in records)
    return (busy / window if window > 0 else None), window


def level_summary(concurrency: int, records: list) -> dict:
    valid = [r for r in records if r["flag"] is None]
    flagged = Counter(r["flag"] for r in records if r["flag"] is not None)
    achieved, window = achieved_concurrency(records)
    valid_tokens = sum(r["output_tokens"] for r in valid)
    per_stream = [r["tokens_per_s"] for r in valid]
    gaps = [gap for r in valid for gap in token_gaps_s(r)]
    return {
        "concurrency": concurrency,
        "requests": len(records),
        "valid": len(valid),
        "flagged": dict(sorted(flagged.items())),
        "token_source": token_source(valid),
        "ttft_s": spread([r["ttft_s"] for r in valid]),
        "itl_s": spread(gaps),
        "e2e_s": spread([r["e2e_s"] for r in valid]),
        "per_stream_tokens_per_s": percentile(per_stream, 50),
        "aggregate_tokens_per_s": valid_tokens / window if valid and window > 0 else None,
        "achieved_concurrency": achieved,
        "window_s": window,
    }


def token_source(records: list):
    sources = {r["token_source"] for r in records}
    return None if not sources else sources.pop() if len(sources) == 1 else "mixed"


def single_stream(levels: list):
    """What one customer feels alone on the server: the concurrency-1 level, if it was measured."""
    one = next((lv for lv in levels if lv["concurrency"] == 1), None)
    if one is None:
        return None
    return {"tokens_per_s": one["per_stream_tokens_per_s"], "e2e_s": one["e2e_s"]["median"]}


def capacity(levels: list, floor: float | None) -> dict:
    """The honest capacity beside the naive `peak aggregate / floor`, and why the naive one is higher."""
    measured = [lv for lv in sorted(levels, key=lambda lv: lv["concurrency"])
                if lv["aggregate_tokens_per_s"] is not None]
    peak = max(measured, key=lambda lv: lv["aggregate_tokens_per_s"], default=None)
    result = {"floor_tokens_per_s": floor, "capacity_streams": None, "peak_aggregate_tokens_per_s": None,
              "peak_at_concurrency": None, "peak_aggregate_over_floor": None, "explanation": None}
    if peak is not None:
        result.update(peak_aggregate_tokens_per_s=peak["aggregate_tokens_per_s"],
                      peak_at_concurrency=peak["concurrency"])
    if floor is None:
        result["explanation"] = "no --floor given: the curve only, no capacity"
        return result
    meeting = 0
    for lv in measured:
        if lv["per_stream_tokens_per_s"] is None or lv["per_stream_tokens_per_s"] < floor:
            break
        meeting = lv["concurrency"]
    result["capacity_streams"] = meeting
    if peak is not None:
        result["peak_aggregate_over_floor"] = peak["aggregate_tokens_per_s"] / floor
        result["explanation"] = _explain(result, peak, floor)
    return result


def _explain(result: dict, peak: dict, floor: float) -> str:
    naive = (f"peak aggregate / floor = {peak['aggregate_tokens_per_s']:.0f} / {floor:g} = "
             f"{result['peak_aggregate_over_floor']:.1f} streams")
    at_peak = peak["per_stream_tokens_per_s"]
    if at_peak is not None and at_peak < floor:
        return (f"{naive}, always higher than the capacity: per-stream speed falls as concurrency rises, so the "
                f"peak aggregate comes at {peak['concurrency']} streams where each gets only {at_peak:.1f} "
                f"tokens/s, below the floor")
    return (f"{naive}: each stream measured beats the floor, so the aggregate counts more than the floor per "
            f"stream; per-stream speed falls as concurrency rises, and no level measured reached the point "
            f"where it drops below the floor (capacity is at least {result['capacity_streams']})")
