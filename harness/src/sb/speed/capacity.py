"""Capacity: the highest load (streams, or requests/s in open loop) at which the objectives still hold.

Walking up from the lowest level, the capacity is the last level before the first that
breaks. A level that breaks is reported with what broke, worst first, so the table says why
one more stream (or a higher rate) is too many. A client-limited open-loop level ends the
walk too: the client could not send on schedule, so that level says nothing about the server.

Never `peak aggregate / floor`: per-stream speed falls as concurrency rises, so the peak
aggregate is reached where each stream is already slower than the floor, and dividing it
by the floor counts streams at a speed none of them gets. It is printed beside the
capacity, with that reason, when a floor is given.
"""

from __future__ import annotations

from sb.speed import slo


def level_value(level: dict):
    """The load a level ran at: its streams, or its rate in open loop."""
    return level["rate_rps"] if level.get("load") == "open" else level["concurrency"]


def capacity(levels: list, floor: float | None = None, objectives: list | None = None,
             share: float | None = None) -> dict:
    """The capacity of one group of levels (one load kind, one prompt size), beside the naive figure."""
    if objectives is None:
        objectives = [slo.floor_objective(floor)] if floor is not None else []
    ordered = sorted(levels, key=level_value)
    load = ordered[0].get("load", "closed") if ordered else "closed"
    result = _blank(ordered, load, floor, objectives, share)
    if not objectives:
        result["explanation"] = "no --floor or --slo given: the curve only, no capacity"
        return result
    held = 0
    for lv in ordered:
        if lv.get("client_limited"):
            result.update(stopped_by="client-limited", next_level=level_value(lv))
            break
        verdict = _verdict(lv, objectives, share)
        if verdict:
            result.update(stopped_by="objective", next_level=level_value(lv), broken_at_next=verdict,
                          broke_first=slo.describe_break(verdict[0]))
            break
        held = level_value(lv)
    else:
        result["stopped_by"] = "every level held"
    result["capacity"] = held
    result["capacity_streams" if load == "closed" else "capacity_rate_rps"] = held
    if floor is not None and load == "closed" and result["peak_aggregate_tokens_per_s"] is not None:
        peak = next(lv for lv in ordered if lv["concurrency"] == result["peak_at_concurrency"])
        result["peak_aggregate_over_floor"] = result["peak_aggregate_tokens_per_s"] / floor
        result["explanation"] = _explain(result, peak, floor)
    return result


def _blank(ordered: list, load: str, floor, objectives: list, share) -> dict:
    measured = [lv for lv in ordered if lv["aggregate_tokens_per_s"] is not None]
    peak = max(measured, key=lambda lv: lv["aggregate_tokens_per_s"], default=None)
    return {"load": load, "unit": "streams" if load == "closed" else "requests/s",
            "prompt_tokens": ordered[0].get("prompt_tokens") if ordered else None,
            "objectives": [o.text for o in objectives], "share": share, "floor_tokens_per_s": floor,
            "capacity": None, "capacity_streams": None, "capacity_rate_rps": None,
            "stopped_by": None, "next_level": None, "broken_at_next": [], "broke_first": None,
            "peak_aggregate_tokens_per_s": peak["aggregate_tokens_per_s"] if peak else None,
            "peak_at_concurrency": peak["concurrency"] if peak else None,
            "peak_at_rate_rps": peak.get("rate_rps") if peak else None,
            "peak_aggregate_over_floor": None, "explanation": None}


def _verdict(level: dict, objectives: list, share) -> list:
    """What broke at this level, worst first; empty when it held."""
    if "slo" in level:
        return [] if level["slo"]["held"] else slo.broken(level["slo"])
    # A level summarised without its judgement (a bare figures dict): only a median floor can be judged.
    tps = next((o for o in objectives if o.metric == "tps" and o.pct == 50), None)
    if tps is None or len(objectives) > 1:
        raise ValueError("a level without its SLO judgement can only be judged against --floor")
    per_stream = level["per_stream_tokens_per_s"]
    if per_stream is not None and per_stream >= tps.bound:
        return []
    return [{"what": tps.text, "value": per_stream, "bound": tps.bound, "unit": "tokens/s",
             "excess": tps.bound / per_stream if per_stream else None}]


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
            f"where it drops below the floor (capacity is at least {result['capacity']})")


def groups(levels: list) -> list:
    """Levels split by prompt size (one capacity each), in the order the sizes were asked."""
    seen: dict = {}
    for lv in levels:
        seen.setdefault(lv.get("prompt_tokens"), []).append(lv)
    return list(seen.values())
