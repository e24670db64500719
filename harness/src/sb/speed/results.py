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

from sb.speed import figures, procedure

SPEED_SCHEMA_VERSION = 1
PREFIX = "speed-"


def _toolchain() -> dict:
    from sb.toolchain import document, fingerprint
    return {**document(), "fingerprint": fingerprint()}


def build_document(plan, measurement, floor: float | None, hardware: str | None) -> dict:
    """Every figure, the procedure and every per-request record, as written to the results file."""
    levels = [figures.level_summary(c, [r for r in measurement.records if r["concurrency"] == c])
              for c in plan.levels]
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
        "procedure": procedure.describe(plan.max_tokens, list(plan.levels),
                                        {str(c): n for c, n in plan.per_level().items()}),
        "token_count_source": figures.token_source([r for r in measurement.records if r["flag"] is None]),
        "single_stream": figures.single_stream(levels),
        "levels": levels,
        "capacity": figures.capacity(levels, floor),
        "flagged_requests": sum(1 for r in measurement.records if r["flag"] is not None),
        "client": client_cost(measurement.client_cpu),
        "warmup": measurement.warmup,
        "requests": measurement.records,
    }


def client_cost(per_level: list) -> dict:
    cpu = sum(level["cpu_s"] for level in per_level)
    tokens = sum(level["streamed_tokens"] for level in per_level)
    for level in per_level:
        level["cpu_ms_per_token"] = 1e3 * level["cpu_s"] / level["streamed_tokens"] if level["streamed_tokens"] else None
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
            "single_stream_tokens_per_s": single.get("tokens_per_s"), "floor_tokens_per_s": cap["floor_tokens_per_s"],
            "capacity_streams": cap["capacity_streams"], "peak_aggregate_tokens_per_s": cap["peak_aggregate_tokens_per_s"],
            "peak_at_concurrency": cap["peak_at_concurrency"]}


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


TABLE_COLUMNS = ("streams", "achieved", "valid", "flagged", "per-stream tok/s", "aggregate tok/s",
                 "TTFT ms p50/p90/p99", "ITL ms p50/p90/p99", "e2e s p50/p90/p99")


def table(doc: dict) -> dict:
    """The terminal table as plain strings: {columns, rows, lines}; sb.speed.terminal only renders it."""
    rows = []
    for lv in doc["levels"]:
        flagged = ", ".join(f"{n} {flag}" for flag, n in lv["flagged"].items()) or "0"
        rows.append([str(lv["concurrency"]), _num(lv["achieved_concurrency"], 2), f"{lv['valid']}/{lv['requests']}",
                     flagged, _num(lv["per_stream_tokens_per_s"]), _num(lv["aggregate_tokens_per_s"]),
                     "/".join(_ms(lv["ttft_s"][q]) for q in ("median", "p90", "p99")),
                     "/".join(_ms(lv["itl_s"][q]) for q in ("median", "p90", "p99")),
                     "/".join(_num(lv["e2e_s"][q], 2) for q in ("median", "p90", "p99"))])
    return {"columns": list(TABLE_COLUMNS), "rows": rows, "lines": summary_lines(doc)}


def summary_lines(doc: dict) -> list:
    cap, single = doc["capacity"], doc.get("single_stream")
    lines = [f"model {doc['model'] or '?'} (asked for {doc['model_requested']}) at {doc['endpoint']}"
             f" · hardware: {doc['hardware'] or 'not stated'}"]
    if single:
        lines.append(f"single stream: {_num(single['tokens_per_s'])} tokens/s, {_num(single['e2e_s'], 2)} s end to end")
    lines.append(f"procedure: {doc['procedure']['output_tokens']} tokens per request, EOS ignored, temperature 0, "
                 f"warm-up discarded; token counts from {doc['token_count_source'] or 'nothing valid'}; "
                 f"{doc['flagged_requests']} request(s) flagged and excluded")
    if cap["floor_tokens_per_s"] is None:
        lines.append("capacity: no --floor given, the curve only")
    else:
        lines.append(f"capacity: {cap['capacity_streams']} stream(s) at >= {cap['floor_tokens_per_s']:g} tokens/s each")
        if cap["explanation"]:
            lines.append(cap["explanation"])
    errors = [r["error"] for r in doc["requests"] if r["error"]]
    if errors:
        lines.append(f"{len(errors)} request(s) failed; the first: {errors[0]}")
    cost = doc["client"]["cpu_ms_per_token"]
    lines.append(f"client CPU: {_num(cost, 4)} ms per streamed token")
    return lines
