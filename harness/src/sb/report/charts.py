"""Charts for the leaderboard, drawn with matplotlib (Agg) into deterministic SVG.

Deterministic so that CI can compare a committed chart with a fresh render byte for byte:
no date in the metadata, a fixed hash salt for element ids, text drawn as paths with the
DejaVu Sans that ships inside matplotlib (no system font lookup). matplotlib is imported
here only, and only when a chart is drawn, so `sb report` without --html stays light.
"""

from __future__ import annotations

import io

from sb.report.draws import by_key, tally_tasks, task_versions

NOT_MEASURED_COLOUR = "#d9d9d9"
METADATA = {"Date": None, "Creator": "scratchbench"}
RC = {"svg.hashsalt": "scratchbench", "svg.fonttype": "path", "font.family": "DejaVu Sans",
      "font.size": 9, "axes.titlesize": 10, "path.simplify": False}


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        from sb.errors import MissingExtra
        raise MissingExtra("the leaderboard's charts", "report") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def _svg(fig) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata=METADATA)
    _pyplot().close(fig)
    return buffer.getvalue()


def grid_data(docs: list[dict]) -> tuple[list[str], list[str], dict]:
    """(models, tasks, {(model, task): tally dict}) pooled over every draw of each model."""
    cells, tasks, versions = {}, [], task_versions(docs)
    models = list(by_key(docs, "model"))
    for model, group in by_key(docs, "model").items():
        for slug, tally in tally_tasks(group, versions).items():
            cells[(model, slug)] = tally.to_dict()
            if slug not in tasks:
                tasks.append(slug)
    return models, sorted(tasks), cells


def task_grid_svg(docs: list[dict], title: str = "Passes per task across draws (k of N)") -> str:
    """The per-model, per-task chart: a row per task, a column per model, each cell shaded by k/N
    (red none, green all) and labelled k/N; grey and hatched where nothing was measured."""
    models, tasks, cells = grid_data(docs)
    plt = _pyplot()
    with plt.rc_context(RC):
        fig = plt.figure(figsize=_grid_size(models, tasks), dpi=100)
        left, top = _grid_margins(models, tasks)
        width, height = fig.get_size_inches()
        ax = fig.add_axes((left / width, 0.15 / height, 1 - (left + 0.2) / width, 1 - (top + 0.15) / height))
        cmap = plt.get_cmap("RdYlGn")
        for row, slug in enumerate(tasks):
            for col, model in enumerate(models):
                _draw_cell(ax, cmap, col, row, cells.get((model, slug)))
        _grid_axes(ax, models, tasks)
        fig.text(0.1 / width, 1 - 0.28 / height, title, fontsize=10)
        return _svg(fig)


CELL_W, CELL_H, CHAR_W = 0.9, 0.3, 0.075  # inches


def _grid_margins(models: list[str], tasks: list[str]) -> tuple[float, float]:
    """(left, top) in inches: room for the task names and the model names above the columns."""
    left = 0.3 + CHAR_W * max((len(t) for t in tasks), default=4)
    top = 0.55 + 0.6 * CHAR_W * max((len(m) for m in models), default=4)
    return left, top


def _grid_size(models: list[str], tasks: list[str]) -> tuple[float, float]:
    left, top = _grid_margins(models, tasks)
    return max(3.6, left + 0.2 + CELL_W * max(len(models), 1)), top + 0.15 + CELL_H * max(len(tasks), 1)


def _draw_cell(ax, cmap, col: int, row: int, tally: dict | None) -> None:
    from matplotlib.patches import Rectangle
    if tally is None or tally["measured"] == 0:
        ax.add_patch(Rectangle((col, row), 1, 1, facecolor=NOT_MEASURED_COLOUR, hatch="///", edgecolor="white"))
        ax.text(col + 0.5, row + 0.5, "not measured" if tally else "-", ha="center", va="center", fontsize=7)
        return
    share = tally["passed"] / tally["measured"]
    ax.add_patch(Rectangle((col, row), 1, 1, facecolor=cmap(0.1 + 0.8 * share), edgecolor="white", linewidth=1.5))
    ax.text(col + 0.5, row + 0.5, f"{tally['passed']}/{tally['measured']}", ha="center", va="center", fontsize=8)


def _grid_axes(ax, models: list[str], tasks: list[str]) -> None:
    ax.set_xlim(0, max(len(models), 1))
    ax.set_ylim(max(len(tasks), 1), 0)
    ax.xaxis.tick_top()
    ax.set_xticks([i + 0.5 for i in range(len(models))], models, rotation=30, ha="left")
    ax.set_yticks([i + 0.5 for i in range(len(tasks))], tasks)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)


def pass_rate_svg(rows: list[dict], title: str = "Headline (laptop) pass rate, Wilson 95% interval") -> str:
    """One bar per leaderboard row; rows with nothing measured are labelled, never drawn as 0%."""
    plt = _pyplot()
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(6.4, 0.9 + 0.38 * max(len(rows), 1)), dpi=100)
        for y, row in enumerate(rows):
            _rate_bar(ax, y, row["headline"])
        ax.set_yticks(range(len(rows)), [f"{r['model']} · {r['task_set']} · {r['draws']} draw(s)" for r in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(lambda x, _pos: f"{x:.0%}")
        ax.set_title(title, loc="left")
        fig.tight_layout()
        return _svg(fig)


def _rate_bar(ax, y: int, headline: dict) -> None:
    if headline["rate"] is None:
        ax.text(0.01, y, f"not measured ({headline['reason'] or 'no tasks'})", va="center", fontsize=8)
        return
    low, high = headline["ci"]
    ax.barh(y, headline["rate"], color="#4c78a8", height=0.6)
    ax.errorbar(headline["rate"], y, xerr=[[max(0.0, headline["rate"] - low)], [max(0.0, high - headline["rate"])]],
                fmt="none", ecolor="black", capsize=3, linewidth=1)
