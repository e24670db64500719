"""The speed results document, its file (`speed-*.json` under --results) and what reports read from it.

Speed files live beside `sb run`'s results but are a different document: `kind` is
"speed" and they carry `speed_schema_version`, never `schema_version`, so a reader of run
results can never mistake one for the other.
"""

from __future__ import annotations

import json
import os
import platform
import time
import uuid
from pathlib import Path

from sb.speed import capacity, figures, procedure

SPEED_SCHEMA_VERSION = 2
PREFIX = "speed-"


def _toolchain() -> dict:
    from sb.toolchain import document, fingerprint
    return {**document(), "fingerprint": fingerprint()}


def build_document(plan, measurement, floor: float | None, hardware: str | None) -> dict:
    """Every figure, the procedure and every per-request record, as written to the results file."""
    objectives = list(plan.objectives)
    levels = level_summaries(plan, measurement)
    capacities = [capacity.capacity(group, floor, objectives or None, plan.share) for group in capacity.groups(levels)]
    searches = measurement.searches or None
    for cap in capacities:
        _mark_search(cap, searches)
    named = next((r["model"] for r in [measurement.warmup, *measurement.records] if r.get("model")), None)
    from sb.results import harness_version
    return {
        "kind": "speed",
        "speed_schema_version": SPEED_SCHEMA_VERSION,
        "run_id": f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{uuid.uuid4().hex[:6]}",
        "run_at": measurement.started_at,
        "harness_version": harness_version(),
        "endpoint": plan.base_url,
        "model_requested": plan.model,
        "model": named,
        "hardware": hardware,
        "client_machine": {"python": platform.python_version(), "platform": platform.platform(),
                           "cpu_count": os.cpu_count()},
        "toolchain_fingerprint": _toolchain()["fingerprint"],
        "environment": _toolchain(),
        "procedure": procedure.describe(plan.max_tokens, list(plan.values()),
                                        {str(c): n for c, n in plan.per_level().items()}, _procedure_extra(plan)),
        "load": plan.load,
        "arrivals": ({"kind": plan.arrivals, "seed": plan.seed, "send_lag_bound_s": plan.lag_bound_s}
                     if plan.load == "open" else None),
        "slo": {"objectives": [o.as_dict() for o in objectives], "share": plan.share} if objectives else None,
        "prompt": ({"sizes": list(plan.prompt_tokens), "margin": plan.prompt_margin,
                    "calibration": measurement.calibration} if plan.prompt_tokens else None),
        "token_count_source": figures.token_source([r for r in measurement.records if r["flag"] is None]),
        "single_stream": figures.single_stream(levels),
        "levels": levels,
        "capacity": capacities[0] if capacities else capacity.capacity([], floor, objectives or None, plan.share),
        "capacities": capacities,
        "search": searches,
        "flagged_requests": sum(1 for r in measurement.records if r["flag"] is not None),
        "client": client_cost(measurement.client_cpu),
        "warmup": measurement.warmup,
        "requests": measurement.records,
    }


def level_summaries(plan, measurement) -> list:
    """One summary per level as run, ordered by prompt size (as asked) then load; probe order is kept in `probe`."""
    by_level: dict = {}
    for r in measurement.records:
        by_level.setdefault(r["level"], []).append(r)
    sizes = list(plan.prompt_sizes())
    specs = sorted(measurement.levels, key=lambda lv: (sizes.index(lv["prompt_tokens"]),
                                                        lv["rate_rps"] or lv["concurrency"]))
    lag_bound = plan.lag_bound_s if plan.load == "open" else None
    return [figures.level_summary(spec, by_level.get(spec["index"], []), list(plan.objectives), plan.share, lag_bound)
            for spec in specs]


def _procedure_extra(plan) -> dict:
    """What this run's options changed in the procedure, stated in its own words."""
    extra: dict = {}
    if plan.load == "open":
        extra["load"] = (f"open loop: requests sent on a {plan.arrivals} schedule (seed {plan.seed}) at each rate, "
                         f"regardless of earlier ones; a level whose p99 send lag exceeds "
                         f"{plan.lag_bound_s * 1e3:g} ms is client-limited")
        extra["rates_rps"] = list(plan.rates)
    if plan.prompt_tokens:
        extra["prompt"] = ("sized: the request's number, filler words, then the fixed prompt; the filler length is "
                           "calibrated from the server's prompt_tokens (two one-token probes, a third to check)")
        extra["prompt_check"] = (f"a request whose prompt the server counted more than {plan.prompt_margin:.0%} off "
                                 "the asked size is flagged 'prompt' and excluded")
    if plan.objectives:
        share = "" if plan.share is None else f" and at least {plan.share:.0%} of its requests met every objective"
        extra["capacity"] = ("highest level, walking up from the lowest, before one fails its objectives "
                             f"({', '.join(o.text for o in plan.objectives)}): a level holds when every objective "
                             f"holds at its percentile{share}")
    if plan.search:
        extra["search"] = (f"walk up doubling from {min(plan.values()):g} until a level breaks, then bisect "
                           + ("to one stream" if plan.load == "closed"
                              else f"to {plan.search_resolution:.0%} of the rate")
                           + f"; at most {plan.max_requests} measured requests per search")
    return extra


def _mark_search(cap: dict, searches) -> None:
    """A capacity found by a search that stopped early is a lower bound, and says so."""
    search = next((s for s in searches or [] if s["prompt_tokens"] == cap["prompt_tokens"]), None)
    if search is None:
        cap["exact"] = None
        return
    cap["exact"] = search["exact"]
    if not search["exact"] and search["stopped_by"] == "request bound":
        cap["stopped_by"] = "request bound"


def client_cost(per_level: list) -> dict:
    cpu = sum(level["cpu_s"] for level in per_level)
    tokens = sum(level["streamed_tokens"] for level in per_level)
    for level in per_level:
        level["cpu_ms_per_token"] = (1e3 * level["cpu_s"] / level["streamed_tokens"]
                                     if level["streamed_tokens"] else None)
    return {"cpu_s": cpu, "streamed_tokens": tokens, "cpu_ms_per_token": 1e3 * cpu / tokens if tokens else None,
            "per_level": per_level}


def _safe(name: str) -> str:
    from sb.names import safe_name
    return safe_name(name, empty="model")


def results_path(results_dir: Path, doc: dict) -> Path:
    return Path(results_dir) / f"{PREFIX}{_safe(doc['model_requested'])}-{doc['run_id']}.json"


def write(results_dir: Path, doc: dict) -> Path:
    from sb.results import write_atomic
    path = results_path(results_dir, doc)
    doc["chart"] = path.with_suffix(".png").name
    write_atomic(path, doc)
    return path


def measured_nothing(doc: dict) -> bool:
    return not any(level["valid"] for level in doc["levels"])


def is_speed_document(doc) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == "speed" and "speed_schema_version" in doc


def summary(doc: dict, path: Path | None = None) -> dict:
    """One line's worth of a speed run, for `sb report` beside correctness results of the same model."""
    cap = doc["capacity"]
    single = doc.get("single_stream") or {}
    return {"path": str(path) if path else None, "model": doc["model_requested"], "model_served": doc["model"],
            "endpoint": doc["endpoint"], "hardware": doc["hardware"], "run_at": doc["run_at"],
            "load": doc.get("load", "closed"),
            "single_stream_tokens_per_s": single.get("tokens_per_s"), "floor_tokens_per_s": cap["floor_tokens_per_s"],
            "objectives": cap.get("objectives") or [],
            "capacity_streams": cap["capacity_streams"], "capacity_rate_rps": cap.get("capacity_rate_rps"),
            "capacity_text": capacity_text(cap),
            "peak_aggregate_tokens_per_s": cap["peak_aggregate_tokens_per_s"],
            "peak_at_concurrency": cap["peak_at_concurrency"]}


def capacity_text(cap: dict) -> str:
    """`6 streams`, `3.5 requests/s`, `>= 16 streams` (a search stopped early) or `-`."""
    value = cap.get("capacity", cap.get("capacity_streams"))
    if value is None:
        return "-"
    if cap.get("stopped_by") == "client-limited" and not value:
        return "not measured (client-limited)"
    lower = ">= " if cap.get("stopped_by") in ("request bound", "client-limited") else ""
    return f"{lower}{value:g} {cap.get('unit', 'streams')}"


def summaries(results_dir: Path, model: str | None = None) -> list:
    """Every speed results file under `results_dir` (optionally one model's), oldest first; unreadable files skipped."""
    found = []
    for path in sorted(Path(results_dir).glob(f"{PREFIX}*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if is_speed_document(doc) and (model is None or model in (doc["model_requested"], doc["model"])):
            found.append(summary(doc, path))
    return sorted(found, key=lambda s: (s["run_at"] or "", s["path"]))


def _ms(value) -> str:
    return "-" if value is None else f"{value * 1e3:.1f}"


def _num(value, digits=1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _triple(spread: dict, render) -> str:
    return "/".join(render(spread[q]) for q in ("median", "p90", "p99"))


TABLE_COLUMNS = ("streams", "achieved", "valid", "flagged", "per-stream tok/s", "aggregate tok/s",
                 "TTFT ms p50/p90/p99", "ITL ms p50/p90/p99", "e2e s p50/p90/p99")


def table(doc: dict) -> dict:
    """The terminal table as plain strings: {columns, rows, lines}; sb.speed.terminal only renders it."""
    columns = _columns(doc)
    rows = [[cell(lv) for _, cell in columns] for lv in doc["levels"]]
    return {"columns": [name for name, _ in columns], "rows": rows, "lines": summary_lines(doc)}


def _columns(doc: dict) -> list:
    """(heading, cell function) for this run: open-loop, prompt-size, SLO and search columns only when used."""
    open_loop = doc.get("load") == "open"
    columns = [("rate req/s", lambda lv: f"{lv['rate_rps']:g}")] if open_loop else [
        ("streams", lambda lv: str(lv["concurrency"]))]
    if doc.get("search"):
        columns.insert(0, ("probe", lambda lv: "-" if lv.get("probe") is None else f"#{lv['probe']}"))
    if doc.get("prompt"):
        columns.append(("prompt tok asked/server", lambda lv: f"{lv['prompt_tokens']}/"
                        + _num(lv["prompt_tokens_reported"]["median"], 0)))
    columns += [
        ("achieved", lambda lv: _num(lv["achieved_concurrency"], 2)),
        ("valid", lambda lv: f"{lv['valid']}/{lv['requests']}"),
        ("flagged", lambda lv: ", ".join(f"{n} {flag}" for flag, n in lv["flagged"].items()) or "0"),
        ("per-stream tok/s", lambda lv: _num(lv["per_stream_tokens_per_s"])),
        ("aggregate tok/s", lambda lv: _num(lv["aggregate_tokens_per_s"])),
        ("TTFT ms p50/p90/p99", lambda lv: _triple(lv["ttft_s"], _ms)),
        ("ITL ms p50/p90/p99", lambda lv: _triple(lv["itl_s"], _ms)),
        ("e2e s p50/p90/p99", lambda lv: _triple(lv["e2e_s"], lambda v: _num(v, 2))),
    ]
    if open_loop:
        columns += [("sent req/s", lambda lv: _num(lv["sent_rate_rps"], 2)),
                    ("send lag ms p50/p99",
                     lambda lv: f"{_ms(lv['send_lag_s']['median'])}/{_ms(lv['send_lag_s']['p99'])}"
                     + (" CLIENT-LIMITED" if lv["client_limited"] else ""))]
    if doc.get("slo"):
        columns += [("met", lambda lv: _pct(lv["slo"]["met_fraction"])),
                    ("goodput req/s", lambda lv: _num(lv["slo"]["goodput_rps"], 2)),
                    ("goodput tok/s", lambda lv: _num(lv["slo"]["goodput_tokens_per_s"])),
                    ("SLO", _slo_cell)]
    return columns


def _pct(value) -> str:
    return "-" if value is None else f"{value:.0%}"


def _slo_cell(level: dict) -> str:
    from sb.speed import slo
    if level["slo"]["held"]:
        return "held"
    worst = slo.broken(level["slo"])
    return "broke: " + (worst[0]["what"] if worst else "no request")


def summary_lines(doc: dict) -> list:
    single = doc.get("single_stream")
    lines = [f"model {doc['model'] or '?'} (asked for {doc['model_requested']}) at {doc['endpoint']}"
             f" · hardware: {doc['hardware'] or 'not stated'}"]
    if single:
        lines.append(f"single stream: {_num(single['tokens_per_s'])} tokens/s, {_num(single['e2e_s'], 2)} s end to end")
    lines.append(f"procedure: {doc['procedure']['output_tokens']} tokens per request, EOS ignored, temperature 0, "
                 f"warm-up discarded; token counts from {doc['token_count_source'] or 'nothing valid'}; "
                 f"{doc['flagged_requests']} request(s) flagged and excluded")
    lines += _load_lines(doc) + _prompt_lines(doc)
    for cap in doc.get("capacities") or [doc["capacity"]]:
        lines += capacity_lines(cap, len(doc.get("capacities") or []) > 1)
    lines += _search_lines(doc)
    errors = [r["error"] for r in doc["requests"] if r["error"]]
    if errors:
        lines.append(f"{len(errors)} request(s) failed; the first: {errors[0]}")
    cost = doc["client"]["cpu_ms_per_token"]
    lines.append(f"client CPU: {_num(cost, 4)} ms per streamed token")
    return lines


def _load_lines(doc: dict) -> list:
    arrivals = doc.get("arrivals")
    if not arrivals:
        return []
    lines = [f"open loop: {arrivals['kind']} arrivals (seed {arrivals['seed']}), sent on schedule whatever earlier "
             f"requests were doing; send lag bound {arrivals['send_lag_bound_s'] * 1e3:g} ms at p99"]
    for lv in doc["levels"]:
        if lv.get("client_limited"):
            lines.append(f"rate {lv['rate_rps']:g} req/s is CLIENT-LIMITED: "
                         f"p99 send lag {_ms(lv['send_lag_s']['p99'])} ms "
                         f"> {arrivals['send_lag_bound_s'] * 1e3:g} ms: the client did not send on schedule, so the "
                         "server was not offered this load and the level is not counted as its capacity")
    return lines


def _prompt_lines(doc: dict) -> list:
    prompt = doc.get("prompt")
    if not prompt:
        return []
    lines = []
    for size in prompt["sizes"]:
        cal = prompt["calibration"].get(str(size)) or {}
        flagged = sum(1 for r in doc["requests"] if r.get("prompt_tokens_target") == size and r["flag"] == "prompt")
        if cal.get("tokens_per_word") is None:
            found = cal.get("note") or "not calibrated"
        else:
            found = (f"the server counted {cal['reported']} ({cal['tokens_per_word']:.2f} tokens per word, "
                     f"{cal['fixed_tokens']:.0f} fixed)")
        lines.append(f"prompt {size} tokens: {cal.get('words')} filler words; {found}; {flagged} request(s) more than "
                     f"{prompt['margin']:.0%} off flagged")
    return lines


def capacity_lines(cap: dict, name_prompt: bool = False) -> list:
    """The capacity, what broke at the next level (worst first), and the naive figure with why it is higher."""
    label = f"capacity (prompt {cap['prompt_tokens']} tokens)" if name_prompt else "capacity"
    if not cap["objectives"]:
        return [f"{label}: no --floor or --slo given, the curve only"]
    share = "" if cap["share"] is None else f" for >= {cap['share']:.0%} of requests"
    floor = cap["floor_tokens_per_s"]
    floor_only = floor is not None and cap["objectives"] == [f"tps:p50>={floor:g}tok/s"]
    holding = f"at >= {floor:g} tokens/s each" if floor_only else f"holding {', '.join(cap['objectives'])}{share}"
    if cap["stopped_by"] == "client-limited" and not cap["capacity"]:
        lines = [f"{label}: not measured: the lowest level was client-limited"]
    elif cap["load"] == "closed":
        lines = [f"{label}: {cap['capacity_streams']} stream(s) {holding}"]
    else:
        lines = [f"{label}: {cap['capacity_rate_rps']:g} requests/s {holding}"]
    at = _at(cap, cap["next_level"])
    if cap["stopped_by"] == "objective" and cap["broken_at_next"]:
        from sb.speed import slo
        parts = [slo.describe_break(item) for item in cap["broken_at_next"]]
        lines.append(f"{at}: {parts[0]} broke first" + (f" (then {'; '.join(parts[1:])})" if parts[1:] else ""))
    elif cap["stopped_by"] == "client-limited" and cap["capacity"]:
        lines.append(f"{at} the client could not keep the schedule: the capacity is at least that of the level below")
    elif cap["stopped_by"] == "every level held":
        lines.append("every level measured held: the capacity is at least the highest level")
    elif cap["stopped_by"] == "request bound":
        lines.append("the search reached its request bound before it closed the gap: the capacity is a lower bound")
    if cap["explanation"]:
        lines.append(cap["explanation"])
    return lines


def _at(cap: dict, value) -> str:
    if value is None:
        return "-"
    return f"at {value:g} streams" if cap["load"] == "closed" else f"at {value:g} requests/s"


def _search_lines(doc: dict) -> list:
    lines = []
    for search in doc.get("search") or []:
        probed = ", ".join(f"{p['value']:g}{'' if p['held'] else ' (broke)'}" for p in search["probes"])
        size = "" if search["prompt_tokens"] is None else f" (prompt {search['prompt_tokens']} tokens)"
        lines.append(f"search{size} on {search['on']}: probed {probed}; {search['requests_used']} of at most "
                     f"{search['budget_requests']} requests; stopped: {search['stopped_by']}")
    return lines
