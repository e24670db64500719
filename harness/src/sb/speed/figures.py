"""The figures computed from per-request records: per level and single stream (capacity: sb.speed.capacity).

Every figure is over the level's valid requests only (exact token count, no error, prompt
of the asked size); how many were left out is shown beside it.
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


def level_summary(level, records: list, objectives: list | None = None, share: float | None = None,
                  lag_bound_s: float | None = None) -> dict:
    """Every figure of one level. `level` is a closed-loop concurrency, or a dict naming the level
    (load, concurrency or rate_rps, prompt_tokens); `objectives` adds the SLO judgement."""
    level = {"load": "closed", "concurrency": level} if isinstance(level, int) else dict(level)
    valid = [r for r in records if r["flag"] is None]
    flagged = Counter(r["flag"] for r in records if r["flag"] is not None)
    achieved, window = achieved_concurrency(records)
    valid_tokens = sum(r["output_tokens"] for r in valid)
    per_stream = [r["tokens_per_s"] for r in valid]
    gaps = [gap for r in valid for gap in token_gaps_s(r)]
    summary = {
        "load": level.get("load", "closed"),
        "concurrency": level.get("concurrency"),
        "rate_rps": level.get("rate_rps"),
        "prompt_tokens": level.get("prompt_tokens"),
        "probe": level.get("probe"),
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
        "prompt_tokens_reported": spread([r["prompt_tokens"] for r in records if r.get("prompt_tokens") is not None]),
    }
    if summary["load"] == "open":
        summary.update(open_loop(records, window, lag_bound_s))
    if objectives:
        from sb.speed import slo
        summary["slo"] = slo.judge_level(objectives, share, records, window)
    return summary


def open_loop(records: list, window_s: float, lag_bound_s: float | None) -> dict:
    """Send lag against the schedule, and whether the client kept it.

    A level whose p99 send lag exceeds the bound is client-limited: the load the server saw
    was not the load asked for, so its latencies are not the server's at that rate.
    """
    lags = [r["send_lag_s"] for r in records if r.get("send_lag_s") is not None]
    written = sorted(r["written_s"] for r in records)
    sent_rate = ((len(written) - 1) / (written[-1] - written[0])
                 if len(written) > 1 and written[-1] > written[0] else None)
    lag = {**spread(lags), "max": max(lags) if lags else None}
    limited = lag_bound_s is not None and lag["p99"] is not None and lag["p99"] > lag_bound_s
    return {"send_lag_s": lag, "send_lag_bound_s": lag_bound_s, "client_limited": limited,
            "sent_rate_rps": sent_rate,
            "completed_rps": sum(1 for r in records if r["flag"] is None) / window_s if window_s > 0 else None}


def token_source(records: list):
    sources = {r["token_source"] for r in records}
    return None if not sources else sources.pop() if len(sources) == 1 else "mixed"


def single_stream(levels: list):
    """What one customer feels alone on the server: the concurrency-1 level, if it was measured."""
    one = next((lv for lv in levels if lv["concurrency"] == 1 and lv.get("load", "closed") == "closed"), None)
    if one is None:
        return None
    return {"tokens_per_s": one["per_stream_tokens_per_s"], "e2e_s": one["e2e_s"]["median"]}
