"""`sb report --html DIR`: a static site over the published results. No server, no script.

index.html        the leaderboard (newest first), the pass-rate and per-task charts
models/<m>.html   one model: its sweeps, per-task k of N, cost per solved task
tasks/<t>.html    one task: every model's k of N and its failure shapes
charts/*.svg      rendered by sb.report.charts (matplotlib, deterministic SVG)

Every number comes from the same functions as the terminal reports, so the site and
`sb report` cannot disagree; no-evidence outcomes print "not measured (reason)".
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from sb.errors import MissingExtra
from sb.names import safe_name
from sb.report import charts
from sb.report.draws import by_key, load_dir, tally_tasks
from sb.report.failures import failure_shape
from sb.report.leaderboard import cost_figures, leaderboard
from sb.report.variance import tier_spread
from sb.results import rate_text

CSS = """
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px} h2{font-size:17px;margin-top:28px} .sub{color:#666;margin-top:0}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left}
th{background:#f4f4f4} td.num{text-align:right;font-variant-numeric:tabular-nums} .nm{color:#888;font-style:italic}
code{font-size:12px} img{max-width:100%;display:block;margin:8px 0} nav a{margin-right:12px}
"""





def spread_text(summary: dict) -> str:
    if summary["rate"] is None:
        return "-"
    low, high = summary["ci"]
    return f"draws {summary['low']:.0%}–{summary['high']:.0%} · 95% CI {low:.0%}–{high:.0%}"


def cost_text(cost: dict) -> tuple[str, str]:
    if cost["usd"] is None:
        return cost["note"], cost["note"]
    per = "-" if cost["per_solved"] is None else f"${cost['per_solved']:.4f}"
    return f"${cost['usd']:.4f}", per


def page(title: str, body: str, depth: int = 0) -> str:
    up = "../" * depth
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            f"<style>{CSS}</style></head><body>\n<nav><a href=\"{up}index.html\">leaderboard</a></nav>\n"
            f"<h1>{escape(title)}</h1>\n{body}\n</body></html>\n")


def table(head: list[str], rows: list[list[str]], css_id: str = "") -> str:
    """A table of already-escaped cells; numeric-looking cells right-aligned."""
    ident = f' id="{css_id}"' if css_id else ""
    header = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>\n" for row in rows)
    return f"<table{ident}><thead><tr>{header}</tr></thead><tbody>\n{body}</tbody></table>"


def _cell(value: str) -> str:
    if value.startswith("not measured"):
        return f'<td class="nm">{value}</td>'
    return f"<td>{value}</td>"


def leaderboard_rows(rows: list[dict], to_models: str = "models/") -> list[list[str]]:
    out = []
    for r in rows:
        total, per_solved = cost_text(r["cost"])
        model = f'<a href="{to_models}{safe_name(r["model"])}.html">{escape(r["model"])}</a>'
        out.append([model, escape(r["task_set"]), str(r["tasks"]), f"{r['draws']}/{r['draws_planned']}",
                    escape(rate_text(r["headline"])), escape(spread_text(r["headline"])),
                    escape(rate_text(r["accelerated"])), escape(total), escape(per_solved),
                    escape(r["run_at"][:10]), escape(r["isolation"] or "-")])
    return out


LEADERBOARD_HEAD = ["model", "set", "tasks", "draws", "laptop (headline)", "spread", "accelerated",
                    "cost", "cost per solved task", "date", "isolation"]


def index_page(rows: list[dict], tasks: list[str]) -> str:
    task_links = " ".join(f'<a href="tasks/{safe_name(t)}.html">{escape(t)}</a>' for t in tasks)
    body = ("<p class=\"sub\">Published sweeps, newest first. Rates count evidence only; "
            "a tier with nothing measured says why.</p>\n"
            + table(LEADERBOARD_HEAD, leaderboard_rows(rows), "leaderboard")
            + '\n<h2>Headline pass rate</h2><img id="pass-rate" src="charts/pass_rate.svg" alt="pass rate per sweep">'
            + '\n<h2>Per task</h2><img id="task-grid" src="charts/task_grid.svg" alt="passes per task and model">'
            + f"\n<h2>Tasks</h2><p id=\"task-links\">{task_links}</p>")
    return page("scratchbench leaderboard", body)


def model_page(model: str, docs: list[dict], rows: list[dict]) -> str:
    sweeps = [r for r in rows if r["model"] == model]
    tallies = tally_tasks(docs)
    task_rows = [[f'<a href="../tasks/{safe_name(t.slug)}.html">{escape(t.slug)}</a>', escape(t.tier),
                  escape(_k_of_n(t.to_dict())), escape(t.to_dict()["verdict"])] for t in tallies.values()]
    solved = sum(t.passed for t in tallies.values())
    total, per_solved = cost_text(cost_figures(docs, solved))
    body = (f"<p class=\"sub\">{len(docs)} published draw(s) over {len(sweeps)} sweep(s) · "
            f"laptop {escape(rate_text(tier_spread(docs, 'laptop')))} · cost {escape(total)} · "
            f"cost per solved task {escape(per_solved)}</p>\n"
            + table(LEADERBOARD_HEAD, leaderboard_rows(sweeps, to_models=""), "sweeps")
            + f'\n<h2>Per task</h2><img id="model-grid" src="../charts/model_{safe_name(model)}.svg" alt="per task">\n'
            + table(["task", "tier", "passed (k of N)", "across draws"], task_rows, "tasks"))
    return page(f"model {model}", body, depth=1)


def _k_of_n(tally: dict) -> str:
    if tally["measured"] == 0:
        return f"not measured ({tally['reason']})"
    extra = f" · {tally['unmeasured']} not measured ({tally['reason']})" if tally["unmeasured"] else ""
    return f"{tally['passed']} of {tally['measured']}{extra}"


def task_page(slug: str, docs: list[dict]) -> str:
    sections = []
    for block in failure_shape(docs, slug):
        summary = (f"{block['passed']} of {block['measured']} measured draws passed" if block["measured"]
                   else f"not measured ({block['reason']})")
        shapes = [[str(s["draws"]), escape(s["status"]),
                   "<br>".join(f"<code>{escape(t)}</code>" for t in s["failed_tests"]) or "none (passed)"]
                  for s in block["signatures"]]
        sections.append(f"<h2>{escape(block['model'])}</h2><p>{escape(summary)}</p>\n"
                        + table(["draws", "status", "failing tests (the signature)"], shapes,
                                f"shapes-{safe_name(block['model'])}"))
    return page(f"task {slug}", "<p class=\"sub\">Failure shapes: draws grouped by identical status and "
                                "failing test ids.</p>\n" + "\n".join(sections), depth=1)


def build_site(leaderboard_dir: Path, out: Path) -> dict:
    """Write the site into `out`; {pages, charts} as paths relative to it."""
    docs = load_dir(leaderboard_dir)
    rows = leaderboard(leaderboard_dir)
    out = Path(out)
    for sub in ("models", "tasks", "charts"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    written = {"index.html": index_page(rows, sorted({e["slug"] for d in docs for e in d["tasks"]}))}
    for model, group in by_key(docs, "model").items():
        written[f"models/{safe_name(model)}.html"] = model_page(model, group, rows)
    for slug in sorted({e["slug"] for d in docs for e in d["tasks"]}):
        written[f"tasks/{safe_name(slug)}.html"] = task_page(slug, docs)
    missing = None
    try:
        written.update(_charts(docs, rows))
    except MissingExtra as exc:  # the pages are still written whole; only the pictures are missing
        missing = exc
    _remove_stale(out, written)
    for name, text in written.items():
        (out / name).write_text(text, encoding="utf-8")
    if missing:
        raise MissingExtra("the leaderboard's charts", "report", f"the {len(written)} pages were written to {out}")
    return {"pages": sorted(n for n in written if n.endswith(".html")),
            "charts": sorted(n for n in written if n.endswith(".svg"))}


def _charts(docs: list, rows: list) -> dict:
    found = {"charts/pass_rate.svg": charts.pass_rate_svg(rows), "charts/task_grid.svg": charts.task_grid_svg(docs)}
    for model, group in by_key(docs, "model").items():
        found[f"charts/model_{safe_name(model)}.svg"] = charts.task_grid_svg(group, f"{model}: passes per task")
    return found


def _remove_stale(out: Path, written: dict) -> None:
    """Pages and charts of an earlier build that this one does not write (a model since unpublished)."""
    for sub in ("models", "tasks", "charts"):
        for path in (out / sub).iterdir():
            if path.suffix in (".html", ".svg") and f"{sub}/{path.name}" not in written:
                path.unlink()
