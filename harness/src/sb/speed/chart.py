"""The chart: per-stream and aggregate tokens/s against the load, the floor, the capacity and every probe marked.

The load is concurrent streams (closed loop) or requests/s (open loop). With an SLO the
goodput (tokens/s from requests that met every objective) is drawn beside the aggregate,
so the gap between what the server produced and what a customer would accept shows. A
search's probes are numbered in the order they ran; a client-limited open-loop level is
crossed out. matplotlib is imported here only, with the Agg backend, so a machine with no
display renders it.
"""

from __future__ import annotations

from pathlib import Path

COLORS = ("tab:blue", "tab:purple", "tab:brown", "tab:olive", "tab:cyan")


def _x(level: dict):
    return level["rate_rps"] if level.get("load") == "open" else level["concurrency"]


def render(doc: dict, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, per_stream_ax = plt.subplots(figsize=(8, 5), dpi=100)
    aggregate_ax = per_stream_ax.twinx()
    groups = _groups([lv for lv in doc["levels"] if lv["aggregate_tokens_per_s"] is not None])
    for i, (size, levels) in enumerate(groups):
        _plot_group(per_stream_ax, aggregate_ax, levels, COLORS[i % len(COLORS)],
                    "" if size is None else f", prompt {size}")
    xs = sorted({_x(lv) for lv in doc["levels"]})
    for cap in doc.get("capacities") or [doc["capacity"]]:
        _mark_floor_and_capacity(per_stream_ax, cap, len(groups) > 1)
    _axes(per_stream_ax, aggregate_ax, xs, doc.get("load") == "open")
    handles = per_stream_ax.get_legend_handles_labels()
    more = aggregate_ax.get_legend_handles_labels()
    fig.legend(handles[0] + more[0], handles[1] + more[1], loc="lower center", ncol=2, fontsize="small")
    per_stream_ax.set_title(_title(doc), fontsize="medium")
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    fig.savefig(path, format="png")
    plt.close(fig)
    return Path(path)


def _groups(levels: list) -> list:
    seen: dict = {}
    for lv in levels:
        seen.setdefault(lv.get("prompt_tokens"), []).append(lv)
    return [(size, sorted(group, key=_x)) for size, group in seen.items()]


def _plot_group(per_stream_ax, aggregate_ax, levels: list, color: str, suffix: str) -> None:
    xs = [_x(lv) for lv in levels]
    per_stream_ax.plot(xs, [lv["per_stream_tokens_per_s"] for lv in levels], "o-", color=color,
                       label=f"per stream (median){suffix}")
    aggregate_ax.plot(xs, [lv["aggregate_tokens_per_s"] for lv in levels], "s--", color="tab:orange",
                      label=f"aggregate{suffix}")
    if any("slo" in lv for lv in levels):
        aggregate_ax.plot(xs, [lv["slo"]["goodput_tokens_per_s"] for lv in levels], "^:", color="tab:gray",
                          label=f"goodput (met every objective){suffix}")
    for lv in levels:
        y = lv["per_stream_tokens_per_s"]
        if y is None:
            continue
        if lv.get("probe") is not None:
            per_stream_ax.annotate(f"#{lv['probe']}", (_x(lv), y), textcoords="offset points", xytext=(4, 6),
                                   fontsize="x-small")
        if "slo" in lv and not lv["slo"]["held"]:
            per_stream_ax.plot([_x(lv)], [y], "o", mfc="none", mec="tab:red", ms=11)
        if lv.get("client_limited"):
            per_stream_ax.plot([_x(lv)], [y], "x", color="black", ms=12)


def _axes(per_stream_ax, aggregate_ax, xs: list, open_loop: bool) -> None:
    if xs and min(xs) > 0:
        per_stream_ax.set_xscale("log", base=2)
    per_stream_ax.set_xticks(xs or [1], [f"{x:g}" for x in xs] or ["1"])
    per_stream_ax.minorticks_off()
    per_stream_ax.set_xlabel("offered requests/s (open loop)" if open_loop else "concurrent streams")
    per_stream_ax.set_ylabel("per-stream tokens/s", color="tab:blue")
    aggregate_ax.set_ylabel("aggregate tokens/s", color="tab:orange")
    per_stream_ax.set_ylim(bottom=0)
    aggregate_ax.set_ylim(bottom=0)


def _title(doc: dict) -> str:
    cap = doc["capacity"]
    head = f"{doc['model'] or doc['model_requested']} · {doc['hardware'] or 'hardware not stated'}"
    if not cap.get("objectives"):
        return head + "\nno floor or SLO given: the curve only"
    unit = cap.get("unit", "streams")
    at_least = ">= " if cap.get("stopped_by") in ("every level held", "request bound", "client-limited") else ""
    line = f"\ncapacity {at_least}{cap.get('capacity', cap['capacity_streams']):g} {unit}"
    if cap["floor_tokens_per_s"] is not None and cap["peak_aggregate_over_floor"] is not None:
        line += f" (peak aggregate / floor = {cap['peak_aggregate_over_floor']:.1f}: not a capacity)"
    elif cap.get("broke_first"):
        line += f"; next level broke first on {cap['broke_first']}"
    return head + line


def _mark_floor_and_capacity(ax, capacity: dict, name_prompt: bool) -> None:
    floor = capacity["floor_tokens_per_s"]
    if floor is not None:
        ax.axhline(floor, color="tab:red", linestyle=":", label=f"floor {floor:g} tokens/s per stream")
    for objective in capacity.get("objectives") or []:
        if objective.startswith("tps:") and floor is None:
            bound = float(objective.split(">=")[1].replace("tok/s", ""))
            ax.axhline(bound, color="tab:red", linestyle=":", label=f"objective {objective}")
    value = capacity.get("capacity", capacity["capacity_streams"])
    if value:
        size = f" (prompt {capacity['prompt_tokens']})" if name_prompt else ""
        ax.axvline(value, color="tab:green", linestyle="-.",
                   label=f"capacity {value:g} {capacity.get('unit', 'streams')}{size}")
