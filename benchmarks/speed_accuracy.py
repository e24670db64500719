"""How accurate is `sb speed`, and what does it cost the client? One run, both answers side by side.

Runs the whole procedure against the scripted server (sb.speed.scripted, its own process),
whose stamps on the shared monotonic clock say when it really read each request and sent
each chunk, and prints per concurrency level the error of every figure against those
stamps, next to the client's CPU time per streamed token. Targets (issue 11): time to
first token within 1 ms at every level up to 32 streams, inter-token latency and
throughput within 0.5%, client CPU under 0.05 ms per streamed token.

    .venv/bin/python benchmarks/speed_accuracy.py [--ttft-ms 50] [--itl-ms 5] [--requests-per-level N]

TTFT error splits into `up` (request written by the client -> fully read by the server)
and `down` (chunk handed to the kernel by the server -> stamped by the client): on an idle
loopback both are tens of microseconds; a busy machine shows here as descheduling delay.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from sb.speed import figures
from sb.speed.loadgen import Plan, measure
from sb.speed.scripted import scripted_server

TARGETS = {"ttft_ms": 1.0, "relative_pct": 0.5, "cpu_ms_per_token": 0.05}


def _pct(measured: float, true: float) -> float:
    return 100.0 * (measured - true) / true


def level_errors(measurement, truth: dict, level: int, cpu: dict) -> dict:
    records = [r for r in measurement.records if r["concurrency"] == level]
    valid = [r for r in records if r["flag"] is None]
    origin = measurement.origin_ns
    ttft, up, down, itl, rate = [], [], [], [], []
    for r in valid:
        t = truth[r["id"]]
        written_ns = origin + r["written_s"] * 1e9
        ttft.append(1e3 * r["ttft_s"] - (t["sent_ns"][0] - t["read_ns"]) / 1e6)
        up.append((t["read_ns"] - written_ns) / 1e6)
        down.append((written_ns + r["ttft_s"] * 1e9 - t["sent_ns"][0]) / 1e6)
        itl.append(_pct(r["itl_s"], (t["sent_ns"][-1] - t["sent_ns"][0]) / 1e9 / (t["tokens"] - 1)))
        rate.append(_pct(r["tokens_per_s"], t["tokens"] / ((t["end_ns"] - t["read_ns"]) / 1e9)))
    served = [truth[r["id"]] for r in records]
    window = (max(t["end_ns"] for t in served) - min(t["read_ns"] for t in served)) / 1e9
    summary = figures.level_summary(level, records)
    true_aggregate = sum(truth[r["id"]]["tokens"] for r in valid) / window
    busy = sum(t["end_ns"] - t["read_ns"] for t in served) / 1e9
    absolute = [abs(e) for e in ttft]
    return {
        "concurrency": level, "requests": len(valid),
        "ttft_error_ms": {"median": figures.percentile(absolute, 50), "p99": figures.percentile(absolute, 99),
                          "max": max(absolute)},
        "up_ms_median": figures.percentile(up, 50), "down_ms_median": figures.percentile(down, 50),
        "itl_error_pct_max": max(abs(e) for e in itl), "rate_error_pct_max": max(abs(e) for e in rate),
        "aggregate_error_pct": _pct(summary["aggregate_tokens_per_s"], true_aggregate),
        "achieved_concurrency": summary["achieved_concurrency"], "true_concurrency": busy / window,
        "ttft_ms_median": 1e3 * summary["ttft_s"]["median"], "itl_ms_median": 1e3 * summary["itl_s"]["median"],
        "cpu_ms_per_token": cpu["cpu_ms_per_token"],
    }


def run(args) -> list:
    with scripted_server(ttft_ms=args.ttft_ms, itl_ms=args.itl_ms) as server:
        plan = Plan(server.base_url, "scripted", levels=tuple(args.levels), requests_per_level=args.requests_per_level)
        measurement = measure(plan)
        truth = server.truth()
    from sb.speed.results import client_cost
    per_level = {c["concurrency"]: c for c in client_cost(measurement.client_cpu)["per_level"]}
    return [level_errors(measurement, truth, level, per_level[level]) for level in plan.levels]


HEADER = (f"{'streams':>7} {'reqs':>4} | {'TTFT err ms p50/p99/max':>24} {'up/down ms':>12} | "
          f"{'ITL err %':>9} {'rate err %':>10} {'aggr err %':>10} | {'conc meas/true':>14} | "
          f"{'TTFT ms':>7} {'ITL ms':>6} | {'CPU ms/token':>12}")


def row(e: dict) -> str:
    t = e["ttft_error_ms"]
    return (f"{e['concurrency']:>7} {e['requests']:>4} | {t['median']:>8.3f}/{t['p99']:>7.3f}/{t['max']:>7.3f} "
            f"{e['up_ms_median']:>5.2f}/{e['down_ms_median']:>6.2f} | {e['itl_error_pct_max']:>9.4f} "
            f"{e['rate_error_pct_max']:>10.4f} {e['aggregate_error_pct']:>+10.4f} | "
            f"{e['achieved_concurrency']:>6.2f}/{e['true_concurrency']:>7.2f} | {e['ttft_ms_median']:>7.2f} "
            f"{e['itl_ms_median']:>6.3f} | {e['cpu_ms_per_token']:>12.4f}")


def verdict(errors: list) -> list:
    ttft = max(e["ttft_error_ms"]["median"] for e in errors)
    relative = max(max(e["itl_error_pct_max"], e["rate_error_pct_max"], abs(e["aggregate_error_pct"])) for e in errors)
    cpu = max(e["cpu_ms_per_token"] for e in errors)
    return [f"TTFT error (worst level median): {ttft:.3f} ms, target < {TARGETS['ttft_ms']} ms: "
            f"{'met' if ttft < TARGETS['ttft_ms'] else 'NOT met'}",
            f"ITL / throughput error (worst request or level): {relative:.4f}%, target < {TARGETS['relative_pct']}%: "
            f"{'met' if relative < TARGETS['relative_pct'] else 'NOT met'}",
            f"client CPU (worst level): {cpu:.4f} ms per streamed token, target < {TARGETS['cpu_ms_per_token']} ms: "
            f"{'met' if cpu < TARGETS['cpu_ms_per_token'] else 'NOT met'}"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ttft-ms", type=float, default=50.0)
    parser.add_argument("--itl-ms", type=float, default=5.0)
    parser.add_argument("--levels", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--requests-per-level", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    errors = run(args)
    if args.json:
        print(json.dumps(errors, indent=2))
        return 0
    print(f"scripted server: TTFT {args.ttft_ms} ms, ITL {args.itl_ms} ms, 256 tokens; {os.cpu_count()} cores, "
          f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(HEADER)
    for e in errors:
        print(row(e))
    print("\n".join(verdict(errors)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
