"""Service-level objectives: parse `--slo`, judge each request and each level, and say what broke.

An objective is `METRIC:pXX OP BOUND`, for example `ttft:p90<=0.5s` (90% of requests see
their first token within 0.5 s) or `tps:p90>=20` (90% of requests stream at 20 tokens/s or
faster). Latencies (ttft, itl, e2e) are bounded from above, per-stream speed (tps) from
below, so for tps the level's value is the (100-XX)th percentile: the speed the slowest
(100-XX)% of requests fall under.

Why both a per-objective percentile and a share: the percentile is the promise as a
service states it ("p99 ITL under 60 ms"); the share is how many requests got everything
promised at once. A level can hold every percentile while too few requests met all of them
together (a slow first token on some, slow streaming on others). With `--slo` a level holds
when every objective holds and at least `share` of its requests met every objective;
`--floor` alone is the one-objective case `tps:p50>=FLOOR`, judged on the median alone as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sb.speed.figures import percentile
from sb.speed.records import token_gaps_s

METRICS = {"ttft": "time to first token", "itl": "inter-token latency", "e2e": "end-to-end latency",
           "tps": "per-stream tokens/s"}
LATENCY_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}
SPEED_UNITS = {"", "tok/s", "tokens/s", "t/s"}
DEFAULT_SHARE = 0.9
_PATTERN = re.compile(r"^\s*(?P<metric>[a-z0-9]+)\s*:\s*p(?P<pct>\d+(?:\.\d+)?)\s*(?P<op><=|>=)\s*"
                      r"(?P<value>\d+(?:\.\d+)?(?:e-?\d+)?)\s*(?P<unit>[a-zµ/]*)\s*$")


@dataclass(frozen=True)
class Objective:
    metric: str          # ttft | itl | e2e | tps
    pct: float           # the user's percentile, e.g. 90
    bound: float         # seconds for latencies, tokens/s for tps
    text: str            # as the user wrote it, normalised

    @property
    def upper(self) -> bool:
        """Latencies must stay under the bound; speed must stay over it."""
        return self.metric != "tps"

    def met(self, value) -> bool:
        if value is None:
            return False
        return value <= self.bound if self.upper else value >= self.bound

    def as_dict(self) -> dict:
        return {"metric": self.metric, "percentile": self.pct, "op": "<=" if self.upper else ">=",
                "bound": self.bound, "unit": "s" if self.upper else "tokens/s", "text": self.text}


def parse(text: str) -> list:
    """`ttft:p90<=0.5s,itl:p99<=60ms` -> objectives; ValueError names the part that is wrong."""
    objectives = [parse_one(part) for part in text.split(",") if part.strip()]
    if not objectives:
        raise ValueError(f"--slo names no objective: {text!r}")
    metrics = [o.metric for o in objectives]
    if len(set(zip(metrics, (o.pct for o in objectives)))) != len(objectives):
        raise ValueError(f"--slo names the same objective twice: {text!r}")
    return objectives


def parse_one(part: str) -> Objective:
    match = _PATTERN.match(part.strip().lower())
    if not match:
        raise ValueError(f"--slo objective {part.strip()!r} is not METRIC:pXX<=BOUND "
                         "(e.g. ttft:p90<=0.5s, tps:p90>=20)")
    metric, pct, op, unit = match["metric"], float(match["pct"]), match["op"], match["unit"]
    if metric not in METRICS:
        raise ValueError(f"--slo objective {part.strip()!r}: metric must be one of {', '.join(METRICS)}")
    if not 0 < pct < 100:
        raise ValueError(f"--slo objective {part.strip()!r}: the percentile must be between p0 and p100, exclusive")
    if metric == "tps":
        if op != ">=" or unit not in SPEED_UNITS:
            raise ValueError(f"--slo objective {part.strip()!r}: per-stream speed is a floor, e.g. tps:p90>=20")
        bound = float(match["value"])
        return Objective(metric, pct, bound, f"tps:p{pct:g}>={bound:g}tok/s")
    if op != "<=" or unit not in LATENCY_UNITS:
        raise ValueError(f"--slo objective {part.strip()!r}: a latency is a ceiling in s, ms or us, "
                         f"e.g. {metric}:p90<=500ms")
    bound = float(match["value"]) * LATENCY_UNITS[unit]
    return Objective(metric, pct, bound, f"{metric}:p{pct:g}<={_seconds(bound)}")


def floor_objective(floor: float) -> Objective:
    """`--floor F`: the median stream at F tokens/s or faster."""
    return Objective("tps", 50.0, float(floor), f"tps:p50>={floor:g}tok/s")


def _seconds(value: float) -> str:
    return f"{value * 1e3:g}ms" if value < 1 else f"{value:g}s"


def request_value(objective: Objective, record: dict):
    """This request's own figure for the objective; a request's ITL is the pXX of its own token gaps."""
    if objective.metric == "ttft":
        return record["ttft_s"]
    if objective.metric == "e2e":
        return record["e2e_s"]
    if objective.metric == "tps":
        return record["tokens_per_s"]
    return percentile(token_gaps_s(record), objective.pct)


def level_value(objective: Objective, valid: list):
    """The level's figure for the objective over its valid requests (ITL: over every token gap)."""
    if objective.metric == "itl":
        return percentile([gap for r in valid for gap in token_gaps_s(r)], objective.pct)
    values = [request_value(objective, r) for r in valid]
    values = [v for v in values if v is not None]
    return percentile(values, objective.pct if objective.upper else 100 - objective.pct)


def meets_all(objectives: list, record: dict) -> bool:
    """A flagged request (error, wrong token count, wrong prompt) met nothing: it is not good service."""
    return record["flag"] is None and all(o.met(request_value(o, record)) for o in objectives)


def judge_level(objectives: list, share, records: list, window_s: float) -> dict:
    """The level against the objectives: each objective's value, the share met, goodput, held or not.

    Goodput counts only requests that met every objective, over the same window as the
    aggregate: what the server delivered that a customer holding this SLO would accept.
    """
    valid = [r for r in records if r["flag"] is None]
    judged = []
    for o in objectives:
        value = level_value(o, valid)
        judged.append({**o.as_dict(), "value": value, "held": o.met(value), "excess": _excess(o, value)})
    good = [r for r in records if meets_all(objectives, r)]
    fraction = len(good) / len(records) if records else None
    share_held = share is None or (fraction is not None and fraction >= share)
    return {"objectives": judged, "share": share, "met_requests": len(good), "requests": len(records),
            "met_fraction": fraction, "share_held": share_held,
            "goodput_rps": len(good) / window_s if window_s > 0 else None,
            "goodput_tokens_per_s": sum(r["output_tokens"] for r in good) / window_s if window_s > 0 else None,
            "held": bool(records) and share_held and all(j["held"] for j in judged)}


def _excess(objective: Objective, value):
    """How far past the bound, as a ratio (> 1 is broken): 1.2 means 20% too slow, whichever the direction."""
    if value is None:
        return None
    if objective.upper:
        return value / objective.bound if objective.bound > 0 else float("inf")
    return objective.bound / value if value > 0 else float("inf")


def broken(judged: dict) -> list:
    """What broke at a level, worst first: each objective past its bound, then the share if it fell short."""
    parts = [j for j in judged["objectives"] if not j["held"]]
    parts.sort(key=lambda j: -(j["excess"] if j["excess"] is not None else float("inf")))
    out = [{"what": j["text"], "value": j["value"], "bound": j["bound"], "unit": j["unit"],
            "excess": j["excess"]} for j in parts]
    if not judged["share_held"]:
        out.append({"what": f"share >= {judged['share']:.0%}", "value": judged["met_fraction"],
                    "bound": judged["share"], "unit": "fraction", "excess": None})
    return out


def describe_break(item: dict) -> str:
    """One objective's failure in words: `itl:p99<=60ms: 72.1 ms`."""
    value, unit = item["value"], item["unit"]
    if value is None:
        shown = "no valid request"
    elif unit == "s":
        shown = f"{value * 1e3:.1f} ms"
    elif unit == "tokens/s":
        shown = f"{value:.1f} tokens/s"
    else:
        shown = f"{value:.0%} met every objective"
    return f"{item['what']}: {shown}"
