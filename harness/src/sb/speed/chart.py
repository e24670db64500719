"""The chart: per-stream and aggregate tokens/s against concurrency, the floor line, the capacity marked.

matplotlib is imported here only, with the Agg backend, so a machine with no display renders it.
"""

from __future__ import annotations

from pathlib import Path


def render(doc: dict, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    levels = [lv for lv in doc["levels"] if lv["aggregate_tokens_per_s"] is not None]
    xs = [lv["concurrency"] for lv in levels]
    fig, per_stream_ax = plt.subplots(figsize=(8, 5), dpi=100)
    aggregate_ax = per_stream_ax.twinx()
    per_stream_ax.plot(xs, [lv["per_stream_tokens_per_s"] for lv in levels], "o-", color="tab:blue",
                       label="per stream (median)")
    aggregate_ax.plot(xs, [lv["aggregate_tokens_per_s"] for lv in levels], "s--", color="tab:orange",
                      label="aggregate")
    _mark_floor_and_capacity(per_stream_ax, doc["capacity"])
    if xs:
        per_stream_ax.set_xscale("log", base=2)
    per_stream_ax.set_xticks(xs or [1], [str(x) for x in xs] or ["1"])
    per_stream_ax.set_xlabel("concurrent streams")
    per_stream_ax.set_ylabel("per-stream tokens/s", color="tab:blue")
    aggregate_ax.set_ylabel("aggregate tokens/s", color="tab:orange")
    per_stream_ax.set_ylim(bottom=0)
    aggregate_ax.set_ylim(bottom=0)
    handles = per_stream_ax.get_legend_handles_labels()
    more = aggregate_ax.get_legend_handles_labels()
    fig.legend(handles[0] + more[0], handles[1] + more[1], loc="lower center", ncol=2, fontsize="small")
    per_stream_ax.set_title(_title(doc), fontsize="medium")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, format="png")
    plt.close(fig)
    return Path(path)


def _title(doc: dict) -> str:
    cap = doc["capacity"]
    head = f"{doc['model'] or doc['model_requested']} · {doc['hardware'] or 'hardware not stated'}"
    if cap["floor_tokens_per_s"] is None:
        return head + "\nno floor given: the curve only"
    naive = cap["peak_aggregate_over_floor"]
    return (head + f"\ncapacity {cap['capacity_streams']} streams at >= {cap['floor_tokens_per_s']:g} tokens/s each"
            + ("" if naive is None else f" (peak aggregate / floor = {naive:.1f}: not a capacity)"))


def _mark_floor_and_capacity(ax, capacity: dict) -> None:
    floor = capacity["floor_tokens_per_s"]
    if floor is None:
        return
    ax.axhline(floor, color="tab:red", linestyle=":", label=f"floor {floor:g} tokens/s per stream")
    if capacity["capacity_streams"]:
        ax.axvline(capacity["capacity_streams"], color="tab:green", linestyle="-.",
                   label=f"capacity {capacity['capacity_streams']} streams")
