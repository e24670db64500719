"""The one module that imports rich. Everything else returns data; this prints it.

Tests set NO_COLOR and COLUMNS and compare whole outputs, so layouts here are stable.
rich is imported by the first table or console, not with this module: `sb grade` prints
its verdict in plain lines, and importing rich took a few hundredths of a second of it.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from typing import TYPE_CHECKING

from sb.outcome import Status, counts_text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def console(stderr: bool = False) -> Console:
    """Markup and emoji codes off: every string printed here may hold text that came from a
    solution (an exception message, a test id), and `[/]` or `[green]` in it is data."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if _is_terminal(stream) else PIPED_WIDTH
    return _plain_console()(stderr=stderr, highlight=False, soft_wrap=False, markup=False, emoji=False, width=width)


CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def visible(text: str) -> str:
    """Control characters, line breaks included, shown as escapes: an ESC sequence or a
    newline in a solution's text (a file name, a failure message) would otherwise start a
    line of its own and print a pass that never happened. Every line this module prints is
    printed on its own, so no string given to a console holds a line break of ours."""
    return CONTROL.sub(_escape, text)


def _escape(match) -> str:
    code = ord(match.group())
    return {9: "\\t", 10: "\\n", 13: "\\r"}.get(code) or (f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}")


@lru_cache(maxsize=1)
def _plain_console() -> type:
    from rich.console import Console

    class PlainConsole(Console):
        """Every string rendered (printed or in a table cell) is shown with its control
        characters escaped; rich itself strips only a few of them and passes ESC through."""

        def render_str(self, text, **kwargs):
            return super().render_str(visible(text), **kwargs)
    return PlainConsole


PIPED_WIDTH = 100_000  # not a terminal (a log, CI, `| less`): plain columns that never wrap, like git


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def print_error(message: str) -> None:
    print(f"sb: error: {visible(message)}", file=sys.stderr)


def print_note(message: str) -> None:
    print(f"sb: {visible(message)}", file=sys.stderr)


def print_warning(message: str) -> None:
    print(f"sb: warning: {visible(message)}", file=sys.stderr)


def one_line(text: str, limit: int = 100) -> str:
    """The first line of `text`, cut to `limit` characters: tables stay one row per item."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def print_table(table: Table, leave_out_first: tuple = ()) -> None:
    """One row per line, in every command. Piped: plain columns two spaces apart, never cut,
    no trailing spaces, so a log or `| grep` sees every cell whole. On a terminal: the same
    columns fitted to its width (`fit_columns`), the header in bold, and a last line naming
    any column left out: those named in `leave_out_first` go first, in that order, then the
    rightmost."""
    columns = [[str(column.header), *[visible(str(cell)) for cell in column._cells]] for column in table.columns]
    terminal = _is_terminal(sys.stdout)
    out = console()
    headers = [column[0] for column in columns]
    order = [headers.index(h) for h in leave_out_first if h in headers]
    order += [i for i in reversed(range(len(columns))) if i not in order]
    shown, widths = fit_columns(columns, out.width, order) if terminal else (list(range(len(columns))), None)
    widths = widths or [max(len(cell) for cell in column) for column in columns]
    for index, row in enumerate(zip(*columns)):
        line = "  ".join(_cut(row[i], widths[i]).ljust(widths[i]) for i in shown).rstrip()
        out.print(line, style="bold" if terminal and index == 0 else None)
    left_out = [columns[i][0] for i in range(len(columns)) if i not in shown]
    if left_out:
        out.print(_cut(f"(left out to fit {out.width} columns: {', '.join(left_out)})", out.width))


MIN_COLUMN = 8   # a cut column keeps at least this many characters (its ellipsis included)
KEY_COLUMNS = 1  # the first column names the row (a slug, a model): never cut, never left out


def fit_columns(columns: list, width: int, leave_out_order: list) -> tuple:
    """(indices of the columns shown, every column's width) for rows of at most `width`
    characters: columns are left out, in `leave_out_order`, while even the shortest cut of
    those shown cannot fit,
    then the widest remaining column is cut, one character at a time, until the row fits.
    The key column is never cut; a row wider than the terminal is left only when it alone is."""
    natural = [max(len(cell) for cell in column) for column in columns]
    floor = [n if i < KEY_COLUMNS else min(n, MIN_COLUMN) for i, n in enumerate(natural)]
    shown = list(range(len(columns)))
    leaving = [i for i in leave_out_order if i >= KEY_COLUMNS]

    def total(widths):
        return sum(widths[i] for i in shown) + 2 * (len(shown) - 1)

    while leaving and total(floor) > width:
        shown.remove(leaving.pop(0))
    widths = list(natural)
    while total(widths) > width:
        cuttable = [i for i in shown if widths[i] > floor[i]]
        if not cuttable:
            break
        widest = max(cuttable, key=lambda i: (widths[i], i))
        widths[widest] -= 1
    return shown, widths


def _cut(cell: str, width: int) -> str:
    return cell if len(cell) <= width else cell[: width - 1] + "\u2026"


def _table(*columns: str) -> Table:
    from rich.table import Table
    table = Table(show_edge=False, header_style="bold", pad_edge=False, box=None)
    for column in columns:
        table.add_column(column)
    return table


def print_task_list(rows: list) -> None:
    table = _table("slug", "suite", "category", "tier", "diff", "limit", "deps", "set", "calibration", "screen",
                   "probes")
    for r in rows:
        tier = r["tier"] + (f" ({r['accelerator']})" if r["accelerator"] else "")
        calib = ", ".join(f"{c['model']} {c['passed']}/{c['draws']}" for c in r["calibration"]) or "-"
        table.add_row(r["slug"], r["suite"], r["category"], tier, r["difficulty"], f"{r['time_limit_s']}s",
                      ",".join(r["deps"]) or "-", r["set"], calib, screen_cell(r["screen"]), r["probes"])
    print_table(table, leave_out_first=("probes", "calibration", "deps", "limit", "category", "suite"))
    console().print(f"{len(rows)} task(s)")


def screen_cell(screens: list) -> str:
    """The newest screen as 'passed/solves one-shot', or '-'."""
    if not screens:
        return "-"
    newest = max(screens, key=lambda s: s["date"])
    return f"{newest['passed']}/{newest['solves']} one-shot"


def print_screens(rows: list) -> None:
    """Installed tasks' screens beside the leaderboard: how one-shot solves fared before
    admission. Never a rate of any model, so never in the leaderboard's columns."""
    screened = [r for r in rows if r["screen"]]
    if not screened:
        return
    table = _table("task (screen)", "set", "date", "one-shot passed", "failed solves' first failing test")
    for r in screened:
        for s in r["screen"]:
            table.add_row(r["slug"], r["set"], s["date"], f"{s['passed']}/{s['solves']}", _first_failing(s["failures"]))
    print_table(table)
    console().print("screens: independent one-shot solves before admission; never calibration, never a rate")


def _first_failing(failures: list) -> str:
    """Each failed solve's first failing test, a test several solves failed first named once
    with how many (`test_x.py::test_y x3`), in the order first met."""
    firsts = [ids[0] for ids in failures if ids]
    if not firsts:
        return "-"
    named = (f"{test} x{firsts.count(test)}" if firsts.count(test) > 1 else test for test in dict.fromkeys(firsts))
    return "; ".join(named)


def _counts(outcome) -> str:
    if outcome is None:
        return "-"
    return f"{outcome.status.value}{counts_text(outcome.counts)} {outcome.duration_s:.1f}s"


VERDICT_LABEL = {"ok": "ok", "broken": "BROKEN", "skipped": "skipped", "unchecked": "UNCHECKED"}


def print_validations(validations: list) -> None:
    table = _table("task", "reference", "starter", "verdict")
    for v in validations:
        label = VERDICT_LABEL[v.verdict] + (f": {one_line(v.reason, 400)}" if v.reason else "")
        if v.verdict == "ok" and v.worker_observed:  # said, so that a pass is never read as more than it proves
            n = len(v.worker_observed)
            label += (f" ({n} contract {'rule rests' if n == 1 else 'rules rest'} on what the solution's own process "
                      "reported; --json lists them)")
        table.add_row(v.slug, _counts(v.reference), _counts(v.starter), label)
    print_table(table)
    tally = {k: sum(1 for v in validations if v.verdict == k) for k in VERDICT_LABEL}
    console().print(" · ".join(f"{n} {VERDICT_LABEL[k]}" for k, n in tally.items() if n) or "no tasks")


def validation_progress(validation) -> None:
    """One line on stderr as each task's validation ends: long runs show they are alive."""
    print(f"{validation.slug} ... {VERDICT_LABEL[validation.verdict]}", file=sys.stderr, flush=True)


def mutants_progress(checks: list) -> None:
    if checks and all(c.actual == "unchecked" for c in checks):
        print(f"{checks[0].slug} ... UNCHECKED ({checks[0].detail})", file=sys.stderr, flush=True)
    elif checks:
        good = sum(1 for c in checks if c.ok and c.actual != "unchecked")
        print(f"{checks[0].slug} ... {good}/{len(checks)} mutants as expected", file=sys.stderr, flush=True)


def print_mutants(checks: list) -> None:
    table = _table("task", "mutant", "expected", "actual", "", "detail")
    for c in checks:
        table.add_row(c.slug, c.mutant, c.expected, c.actual, _mutant_mark(c), one_line(c.detail, 70))
    print_table(table)
    bad = sum(1 for c in checks if not c.ok)
    unchecked = sum(1 for c in checks if c.actual == "unchecked")
    checked = len(checks) - unchecked
    console().print(f"{checked - bad}/{checked} mutants as expected" + (f" · {bad} MISMATCH" if bad else "")
                    + (f" · {unchecked} UNCHECKED (no evidence: no device or missing deps)" if unchecked else ""))


def print_generated_line(report) -> None:
    """`softmax_stability ... 120 killed · 3 equivalent · 0 survived of 123 (45.1 s)`"""
    if report.problem:
        return console().print(f"{report.slug} ... BROKEN: {report.problem}")
    counts = " · ".join(f"{report.count(v)} {v}" for v in ("killed", "equivalent", "survived", "unchecked")
                        if report.count(v) or v != "unchecked")
    console().print(f"{report.slug} ... {counts} of {len(report.results)} ({report.wall_s} s)")


def print_generated(reports: list) -> None:
    for report in reports:
        for mutant_id in report.survivors:
            console().print(f"SURVIVED {report.slug} {mutant_id}")
        for mutant_id in report.stale:
            console().print(f"STALE {report.slug} {mutant_id} (listed as equivalent, no longer generated)")
    live = sum(len(r.results) - r.count("equivalent") - r.count("unchecked") for r in reports)
    killed = sum(r.count("killed") for r in reports)
    rate = f"{100 * killed / live:.1f}%" if live else "n/a"
    console().print(f"generated mutants: {killed}/{live} non-equivalent killed ({rate})")


def print_rebased(reports: list) -> None:
    """`sb mutants --rebase`: each patch moved or failed, with each move; then the counts."""
    for report in reports:
        for patch in report.patches:
            if patch.state == "moved":
                console().print(f"moved {report.slug} {patch.name}: rewrote {patch.path}")
            elif patch.state == "failed":
                console().print(f"FAILED {report.slug} {patch.name}: {patch.problem}")
            elif patch.moves:
                console().print(f"check {report.slug} {patch.name}")
            for move in patch.moves:
                console().print(f"  {move}")
    states = [p.state for r in reports for p in r.patches]
    counts = (f"{states.count('moved')} moved, {states.count('failed')} failed, "
              f"{states.count('applies')} applied as they were")
    moved = sorted({r.slug for r in reports for p in r.patches if p.state == "moved"})
    then = f"; grade the moved ones: sb mutants {' '.join(moved)}" if moved else ""
    console().print(f"mutant patches: {counts}{then}")


def _mutant_mark(check) -> str:
    if check.actual == "unchecked":
        return "UNCHECKED"
    return "ok" if check.ok else "MISMATCH"


def print_progress_line(entry: dict) -> None:
    """`softmax_stability ... pass (29 passed)`: one line per task as it finishes."""
    console().print(f"{entry['slug']} ... {_entry_result(entry)}")


def progress_printer(total: int = 0):
    """The per-task callback of `sb run`: a result line per finished task. On a terminal, a
    status line under them, redrawn every second: done of total, the tasks in flight and
    what each is doing, elapsed, an estimate of the time left, tokens and cost so far.
    Piped: the result lines only."""
    return LiveProgress(console(), total)


class LiveProgress:
    """Called from the schedule's threads (`phase`) and the calling thread (a finished task)."""

    TICK_S = 1.0

    def __init__(self, out, total: int):
        import threading
        import time
        self.out, self.total, self.live = out, total, out.is_terminal
        self.started, self.clock = time.monotonic(), time.monotonic
        self.flight: dict = {}
        self.docs: dict = {}
        self.lock, self.done = threading.Lock(), 0
        self.stop = threading.Event()
        self.shown = False
        if self.live:
            threading.Thread(target=self._tick, name="sb-progress", daemon=True).start()

    def phase(self, doc: dict, slug: str, phase: str) -> None:
        with self.lock:
            self.flight[(id(doc), slug)] = (slug, phase)
            self.docs[id(doc)] = doc
            self._redraw()

    def __call__(self, entry: dict, doc: dict, total: int) -> None:
        with self.lock:
            self.flight.pop((id(doc), entry["slug"]), None)
            self.docs[id(doc)] = doc
            self.done += 1
            self.total = max(self.total, total, self.done)
            self._clear()
            print_progress_line(entry)
            self._redraw()

    def close(self) -> None:
        self.stop.set()
        with self.lock:
            self._clear()
            self.live = False

    def _tick(self) -> None:
        while not self.stop.wait(self.TICK_S):
            with self.lock:
                self._redraw()

    def _clear(self) -> None:
        if self.shown:
            self.out.file.write("\r\x1b[2K")
            self.out.file.flush()
            self.shown = False

    def _redraw(self) -> None:
        if not self.live:
            return
        self._clear()
        self.out.file.write(_cut(visible(self.status()), max(20, self.out.width - 1)))
        self.out.file.flush()
        self.shown = True

    def status(self) -> str:
        """`3/12 done · 2 in flight: kv_cache solving, softmax grading · 42s · ~1m24s left · 1,234 tokens · $0.0120`."""
        elapsed = self.clock() - self.started
        left = ("estimating" if not self.done
                else f"~{_duration(elapsed / self.done * max(0, self.total - self.done))} left")
        flight = sorted(self.flight.values())
        doing = ", ".join(f"{slug} {phase}" for slug, phase in flight[:4]) + (" ..." if len(flight) > 4 else "")
        tokens = sum(v for doc in self.docs.values() for k, v in (doc.get("tokens") or {}).items()
                     if k in ("input", "output"))
        costs = [doc.get("usd_cost") for doc in self.docs.values() if doc.get("usd_cost") is not None]
        parts = [f"{self.done}/{self.total} done", f"{len(flight)} in flight" + (f": {doing}" if doing else ""),
                 _duration(elapsed), left, f"{tokens:,} tokens"] + ([f"${sum(costs):.4f}"] if costs else [])
        return " \u00b7 ".join(parts)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds}s" if seconds < 60 else f"{seconds // 60}m{seconds % 60:02d}s"


def _entry_result(entry: dict) -> str:
    counts = counts_text(entry.get("counts"))
    if entry["status"] in (Status.PASSED.value, Status.FAILED.value):
        return ("pass" if entry["passed"] else "fail") + counts
    return entry["status"] + (f": {entry['detail']}" if entry.get("detail") else "")


def format_rate(summary: dict | None) -> str:
    """'100% (5/5)' or 'not measured (2 needs_accelerator)': never 0% for no evidence."""
    from sb.results import rate_text
    text = rate_text(summary)
    if summary is None or summary.get("rate") is None:
        return text
    if summary.get("unmeasured"):
        text += f" · {summary['unmeasured']} not measured ({summary['reason']})"
    return text


def print_run_table(doc: dict) -> None:
    with_tokens = any(e.get("tokens") for e in doc["tasks"])
    table = _table("task", "category", "tier", "diff", "result", "time", "tests", *(["tokens"] if with_tokens else []))
    for e in doc["tasks"]:
        c = e.get("counts") or {}
        tests = f"{c.get('passed', 0)}/{c.get('passed', 0) + c.get('failed', 0) + c.get('missing', 0)}" if c else "-"
        result = {"passed": "pass", "failed": "fail"}.get(e["status"], e["status"])
        table.add_row(e["slug"], e["category"], e["tier"], e["difficulty"], result,
                      f"{e['duration_s']:.1f}s", tests, *([_tokens(e.get("tokens"))] if with_tokens else []))
    out = console()
    print_table(table)
    for e in doc["tasks"]:
        if e["status"] in (Status.COLLECTION_ERROR.value, Status.HARNESS_ERROR.value):
            out.print(f"BROKEN {e['slug']}: {one_line(e.get('detail') or e['status'], 200)} (not graded: the task or "
                      "the harness failed, not the model)")
    tiers = sorted(doc["pass_rate_by_tier"].items(), key=lambda item: item[0] != doc["headline_tier"])
    for tier, summary in tiers:
        tag = " · headline" if tier == doc["headline_tier"] else " · beside the headline, never in it"
        out.print(f"{tier} {format_rate(summary)}{tag}")
        suites = doc.get("pass_rate_by_suite") or {}
        if tier == doc["headline_tier"] and len(suites) > 1:
            out.print("  " + " · ".join(f"{suite} {format_rate(summary)}" for suite, summary in suites.items()))
    if doc["headline_tier"] not in doc["pass_rate_by_tier"]:
        out.print(f"{doc['headline_tier']} not measured (no {doc['headline_tier']} task in this run) · headline")
    cost = _run_cost(doc)
    tokens = f" · {_tokens(doc.get('tokens'))} tokens" if doc.get("tokens") else ""
    out.print(f"{doc['wall_clock_s']:.1f}s wall clock · {doc['attempts']} attempt per task{tokens} · {cost} · "
              f"isolation {doc['isolation']}")
    if doc.get("settings"):
        out.print("settings (set by the user): " + ", ".join(f"{k}={v}" for k, v in sorted(doc["settings"].items())))


def _tokens(usage) -> str:
    """Input and output tokens together, `1,234`; `-` where none were reported."""
    if not usage:
        return "-"
    return f"{sum(v for k, v in usage.items() if k in ('input', 'output')):,}"


def _run_cost(doc: dict) -> str:
    if any(e.get("usage_missing") for e in doc["tasks"]):
        known = f"${doc['usd_cost']:.4f} known" if doc.get("usd_cost") is not None else "nothing known"
        return f"cost unknown ({known}; the API reported no usage for some tasks)"
    if doc.get("usd_cost") is None:
        from sb.report.leaderboard import no_cost_note
        return no_cost_note([doc])
    partial = "" if doc.get("cost_complete", True) else " (partial: some tasks unpriced)"
    return f"${doc['usd_cost']:.4f}{partial}"


def print_reported(reporter: str, path) -> None:
    """Where a reporter of the run (`--report NAME`) wrote what it made of a draw."""
    console().print(f"{reporter}: {path}")


def print_results_written(path) -> None:
    console().print(f"results: {path}")


GRADE_FAILED_SHOWN = 20  # failing test ids sb grade prints; the rest are counted


def print_grade(outcome) -> None:
    """Plain lines, each escaped, as the errors are: no rich to import for one verdict."""
    lines = [f"{outcome.slug}: {outcome.summary()}"]
    if outcome.detail and outcome.status in (Status.PASSED, Status.FAILED):
        lines.append(f"  first failure: {one_line(outcome.detail, 300)}")
    lines += [f"  failed: {nodeid}" for nodeid in outcome.failed_tests[:GRADE_FAILED_SHOWN]]
    if len(outcome.failed_tests) > GRADE_FAILED_SHOWN:
        lines.append(f"  and {len(outcome.failed_tests) - GRADE_FAILED_SHOWN} more failed (--json lists every one)")
    if outcome.dropped_files:
        lines.append(f"  dropped (not declared by the starter): {', '.join(outcome.dropped_files)}")
    for line in lines:
        print(visible(line))


def print_drift(rows: list) -> None:
    """Public against holdout pass rates per model; a model with no holdout evidence has
    nothing to compare, and says so instead of a p-value of 1."""
    compared = [r for r in rows if r["holdout"]["measured"] and r["strata"]]
    for r in rows:
        if r not in compared:
            console().print(f"{r['model']}: nothing to compare (no holdout task measured in a suite and difficulty "
                            "it shares with a public one; docs/holdout.md)")
    if not compared:
        return
    table = _table("model", "public", "holdout", "strata", "p (public better)", "")
    rows = compared
    for r in rows:
        pub, hold = r["public"], r["holdout"]
        table.add_row(r["model"], f"{pub['passed']}/{pub['measured']}", f"{hold['passed']}/{hold['measured']}",
                      ", ".join(r["strata"]) or "none shared", f"{r['p_value']:.4f}",
                      "FLAGGED: public significantly better (contamination?)" if r["flagged"] else "")
    print_table(table)
    console().print(f"Fisher's exact test, one-sided, alpha {rows[0]['alpha'] if rows else 0.05}; "
                    "only suites and difficulties with both public and holdout tasks count")


def print_env(doc: dict) -> None:
    out = console()
    out.print(f"toolchain fingerprint {doc['fingerprint']}")
    out.print(f"python {doc['python']} ({doc['implementation']}) on {doc['platform']}, {doc['cpu_count']} CPUs")
    out.print("threads pinned: " + ", ".join(f"{k}={v}" for k, v in doc["thread_settings"].items()))
    bwrap = doc["sandbox"]["bwrap"]
    out.print(f"sandbox: bwrap {bwrap}" if bwrap else "sandbox: bwrap not installed (--isolation none only)")
    devices = [name for name, present in doc["accelerator"].items() if present]
    out.print(f"accelerator: {', '.join(devices) if devices else 'none'}")
    table = _table("distribution", "version")
    for name, version in doc["distributions"].items():
        table.add_row(name, version)
    print_table(table)


def print_models(rows: list) -> None:
    table = _table("adapter", "routes", "extra", "installed", "source")
    for r in rows:
        table.add_row(r["name"], r["routes"], r["extra"] or "-", "yes" if r["installed"] else "no", r["source"])
    print_table(table)


def print_last(doc: dict) -> None:
    print_run_table(doc)
    print_results_written(doc["_path"])


def _pct(value) -> str:
    return "-" if value is None else f"{value:.0%}"


def format_spread(summary: dict) -> str:
    """'80% (16/20) · draws 60%–100% · 95% CI 58%–92%', or 'not measured (reason)'."""
    if summary.get("rate") is None:
        return format_rate(summary)
    low, high = summary["ci"]
    text = (f"{summary['rate']:.0%} ({summary['passed']}/{summary['measured']}) · draws "
            f"{_pct(summary['low'])}–{_pct(summary['high'])} · 95% CI {_pct(low)}–{_pct(high)}")
    return text + (f" · {summary['unmeasured']} not measured ({summary['reason']})" if summary["unmeasured"] else "")


def _cost_cells(cost: dict) -> tuple[str, str]:
    if cost["usd"] is None:
        return cost["note"], "-"
    return f"${cost['usd']:.4f}", "-" if cost["per_solved"] is None else f"${cost['per_solved']:.4f}"


def print_leaderboard(rows: list) -> None:
    """Published sweeps, newest first: the headline beside the accelerated tier, never merged."""
    if not rows:
        console().print("no published results (publish one with `sb publish RESULTS_FILE`)")
        return
    table = _table("model", "set", "tasks", "draws", "laptop (headline)", "accelerated", "cost", "per solved",
                   "date")
    for r in rows:
        cost, per_solved = _cost_cells(r["cost"])
        model = r["model"]  # 'MODEL @ HOST' when another server answered (sb.report.served)
        table.add_row(model, r["task_set"], str(r["tasks"]), f"{r['draws']}/{r['draws_planned']}",
                      format_spread(r["headline"]), format_rate(r["accelerated"]), cost, per_solved,
                      r["run_at"][:10])
    print_table(table)
    console().print(f"{len(rows)} published sweep(s) · rates over evidence only · "
                    "95% CI: Wilson, pooled over task-draws")


def print_speed_summaries(rows: list) -> None:
    """`sb speed` runs beside the correctness leaderboard: how fast each model is served."""
    if not rows:
        return
    table = _table("model (speed)", "served as", "hardware", "single stream tok/s", "floor", "capacity",
                   "peak aggregate tok/s", "date")
    for r in rows:
        capacity = r.get("capacity_text") or ("-" if r.get("capacity_streams") is None
                                              else f"{r['capacity_streams']} streams")  # open loop: a rate
        floor = "-" if r["floor_tokens_per_s"] is None else f"{r['floor_tokens_per_s']:g}"
        single = "-" if r["single_stream_tokens_per_s"] is None else f"{r['single_stream_tokens_per_s']:.1f}"
        peak = "-" if r["peak_aggregate_tokens_per_s"] is None else f"{r['peak_aggregate_tokens_per_s']:.1f}"
        table.add_row(r["model"], r["model_served"] or "-", r["hardware"] or "-", single, floor, capacity, peak,
                      (r["run_at"] or "")[:10])
    print_table(table)


def _k_of_n(tally: dict) -> str:
    if tally["measured"] == 0:
        return f"not measured ({tally['reason']})"
    extra = f" (+{tally['unmeasured']} not measured: {tally['reason']})" if tally["unmeasured"] else ""
    return f"{tally['passed']}/{tally['measured']}{extra}"


def print_variance(blocks: list) -> None:
    """Per model (or sweep): each task's k of N draws and verdict, then every tier's spread."""
    out = console()
    for block in blocks:
        name = block.get("group_id") or block["model"]
        out.print(f"{name} · set {block['task_set']} · {block['draws']} draw(s)")
        table = _table("task", "tier", "passed", "across draws")
        for t in block["tasks"]:
            table.add_row(t["slug"], t["tier"], _k_of_n(t), t["verdict"])
        print_table(table)
        verdicts = [t["verdict"] for t in block["tasks"]]
        out.print(" · ".join(f"{verdicts.count(v)} {v}" for v in ("always", "never", "split", "not measured")
                             if verdicts.count(v)))
        for tier, summary in block["tiers"].items():
            tag = " · headline" if tier == block["headline_tier"] else " · beside the headline, never in it"
            out.print(f"{tier} {format_spread(summary)}{tag}")
        out.print("")


def print_failures(data: dict) -> None:
    """The failure shape of one task: failing ids by frequency, then draws grouped by signature."""
    out = console()
    for block in data["models"]:
        measured = (f"{block['passed']}/{block['measured']} measured draws passed" if block["measured"]
                    else f"not measured ({block['reason']})")
        extra = (f" · {block['unmeasured']} not measured ({block['reason']})"
                 if block["unmeasured"] and block["measured"] else "")
        out.print(f"{data['slug']} · {block['model']} · {measured}{extra}")
        for failing in block["failing_tests"]:
            out.print(f"  {failing['draws']}/{block['measured']}  {failing['test']}")
        for i, shape in enumerate(block["signatures"], 1):
            tests = len(shape["failed_tests"])
            what = "pass" if shape["status"] == Status.PASSED.value else f"{shape['status']}, {tests} failing test(s)"
            out.print(f"  signature {i}: {shape['draws']} draw(s) · {what}")
        out.print("")


def print_html(data: dict) -> None:
    console().print(f"wrote {len(data['pages'])} page(s) and {len(data['charts'])} chart(s) to {data['site']} "
                    f"(open {data['site']}/index.html)")


def print_inspect(data: dict) -> None:
    console().print(f"wrote {len(data['logs'])} Inspect log(s) to {data['log_dir']} "
                    f"(inspect view --log-dir {data['log_dir']})", markup=False, highlight=False)


def print_compare(data: dict) -> None:
    """Per-task counts for both models, then the paired test's sentence."""
    table = _table("task", "tier", data["a"], data["b"], "favours")
    names = {"a": data["a"], "b": data["b"], "tie": "tie", None: "not compared (no evidence)"}
    for row in data["tasks"]:
        table.add_row(row["slug"], row["tier"], _k_of_n(row["a"]), _k_of_n(row["b"]), names[row["winner"]])
    out = console()
    print_table(table)
    out.print(data["verdict"])


def print_published(data: dict) -> None:
    state = "published" if data["published"] else "already published, unchanged"
    manifest = " · SET_MANIFESTS.yaml updated" if data["manifest_updated"] else ""
    console().print(f"{state}: {data['path']}{manifest}")
