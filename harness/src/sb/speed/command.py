"""The `sb speed` click command. Light at import: the load generator, matplotlib and rich load on use."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from sb.errors import SbError

DEFAULT_LEVELS = "1,2,4,8,16,32"


def parse_levels(text: str, option: str = "--concurrency", kind=int) -> tuple:
    """Distinct positive numbers, comma-separated, sorted; `kind` float for rates."""
    what = "integers" if kind is int else "numbers"
    try:
        levels = tuple(kind(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise SbError(f"{option} takes comma-separated positive {what}, got {text!r}") from None
    if not levels or min(levels) <= 0 or len(set(levels)) != len(levels):
        raise SbError(f"{option} takes distinct positive {what}, got {text!r}")
    return tuple(sorted(levels))


def objectives_of(slo_text: str | None, floor: float | None) -> tuple:
    """--slo's objectives, with --floor as one more (tps:p50>=FLOOR); empty when neither is given."""
    from sb.speed import slo
    objectives = []
    if slo_text is not None:
        try:
            objectives = slo.parse(slo_text)
        except ValueError as exc:
            raise SbError(str(exc)) from None
    if floor is not None:
        floor_objective = slo.floor_objective(floor)
        if floor_objective not in objectives:
            objectives.append(floor_objective)
    return tuple(objectives)


def build_plan(base_url, model, options: dict, api_key):
    """The run's plan from the command's options, refusing combinations that have no meaning."""
    from sb.speed.loadgen import Plan
    if options["levels"] is not None and options["rates"] is not None:
        raise SbError("--concurrency and --rate are two kinds of load: give one (closed loop or open loop)")
    objectives = objectives_of(options["slo"], options["floor"])
    if options["search"] and not objectives:
        raise SbError("--search needs an objective to search against: give --slo or --floor")
    rates = parse_levels(options["rates"], "--rate", float) if options["rates"] is not None else None
    levels = parse_levels(options["levels"] or DEFAULT_LEVELS)
    prompts = None
    if options["prompt_tokens"] is not None:
        prompts = tuple(parse_levels(options["prompt_tokens"], "--prompt-tokens"))
    return Plan(base_url, model, levels, options["max_tokens"], options["requests_per_level"], options["timeout_s"],
                api_key, rates=rates, arrivals=options["arrivals"], seed=options["seed"], prompt_tokens=prompts,
                prompt_margin=options["prompt_margin"], lag_bound_s=options["lag_bound_ms"] / 1e3,
                objectives=objectives, share=options["slo_share"] if options["slo"] is not None else None,
                search=options["search"], max_requests=options["max_requests"],
                search_resolution=options["search_resolution"])


@click.command()
@click.option("--base-url", required=True, help="the OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
@click.option("--model", required=True, help="the model name to send")
@click.option("--concurrency", "levels", default=None,
              help=f"comma-separated concurrency levels, closed loop [default: {DEFAULT_LEVELS}]")
@click.option("--rate", "rates", default=None,
              help="comma-separated requests/s: open loop, sent on schedule whatever earlier requests are doing")
@click.option("--arrivals", type=click.Choice(["poisson", "constant"]), default="poisson", show_default=True,
              help="open loop: the arrival schedule")
@click.option("--seed", type=int, default=0, show_default=True, help="open loop: the Poisson schedule's seed")
@click.option("--lag-bound-ms", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
              help="open loop: a level whose p99 send lag exceeds this is client-limited")
@click.option("--prompt-tokens", default=None,
              help="a prompt of about N tokens (comma-separated sizes for a sweep), calibrated against the server")
@click.option("--prompt-margin", type=click.FloatRange(min=0, min_open=True), default=0.1, show_default=True,
              help="a request whose prompt the server counts more than this fraction off is flagged")
@click.option("--slo", default=None,
              help="objectives, e.g. 'ttft:p90<=0.5s,itl:p99<=60ms,e2e:p90<=20s,tps:p90>=20'")
@click.option("--slo-share", type=click.FloatRange(min=0, max=1, min_open=True), default=0.9, show_default=True,
              help="with --slo: the share of requests that must meet every objective")
@click.option("--search", is_flag=True,
              help="walk the load up until the objective breaks, then bisect to the highest level that holds")
@click.option("--max-requests", type=click.IntRange(min=1), default=1000, show_default=True,
              help="with --search: at most this many measured requests per search")
@click.option("--search-resolution", type=click.FloatRange(min=0, min_open=True), default=0.05, show_default=True,
              help="with --search over --rate: stop once the gap is this fraction of the rate")
@click.option("--max-tokens", type=click.IntRange(min=2), default=256, show_default=True,
              help="output tokens per request (the procedure's fixed 256; recorded)")
@click.option("--requests-per-level", type=click.IntRange(min=1), default=None,
              help="requests measured per level (default: max(8, 2 x streams), never fewer than the streams; "
                   "open loop: ten seconds' worth, at least 8)")
@click.option("--floor", type=click.FloatRange(min=0, min_open=True), default=None,
              help="tokens/s per stream the service promises; gives the capacity")
@click.option("--hardware", default=None, help='the machine and accelerator, as you describe them (recorded)')
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True)
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=600.0,
              show_default=True, help="seconds one request may take")
@click.option("--api-key-env", default=None,
              help="name of an environment variable holding a bearer key (never recorded)")
@click.option("--json", "as_json", is_flag=True, help="print the results document")
def speed(base_url, model, max_tokens, requests_per_level, floor, hardware, results_dir, timeout_s, api_key_env,
          as_json, **options):
    """Measure serving speed and capacity of an OpenAI-compatible endpoint (see docs/speed.md).

    Exit 1 when no request of any level produced exactly the asked tokens (nothing measured).
    """
    from sb.speed import chart, results
    from sb.speed.client import Endpoint
    from sb.speed.loadgen import measure
    from sb.inputs import writable_dir
    try:
        Endpoint.from_base_url(base_url)
    except ValueError as exc:
        raise SbError(str(exc)) from None
    options.update(max_tokens=max_tokens, requests_per_level=requests_per_level, floor=floor, timeout_s=timeout_s)
    plan = build_plan(base_url, model, options, None)
    writable_dir(results_dir, "--results")  # before the first request, not after the measurement
    plan.api_key = _api_key(api_key_env)
    from sb.speed.openloop import SenderFailed
    try:
        measurement = measure(plan)
    except OSError as exc:
        raise SbError(f"cannot reach {base_url}: {exc}") from None
    except SenderFailed as exc:
        from sb.errors import Unavailable
        raise Unavailable(str(exc)) from None
    doc = results.build_document(plan, measurement, floor, hardware)
    path = results.write(results_dir, doc)
    try:
        chart_path = chart.render(doc, path.with_suffix(".png"))
    except ImportError:  # the measurement is written and printed; only the picture is missing
        chart_path = None
    if as_json:
        click.echo(json.dumps(doc, indent=2))
    else:
        from sb.speed.terminal import print_speed
        print_speed(results.table(doc), [("results", path)] + ([("chart", chart_path)] if chart_path else []))
    if chart_path is None:
        from sb.errors import MissingExtra
        raise MissingExtra("the chart", "speed", f"the results are in {path}")
    if results.measured_nothing(doc):
        sys.exit(1)


def _api_key(env_name: str | None):
    if env_name is None:
        return None
    if not os.environ.get(env_name):
        raise SbError(f"--api-key-env {env_name}: that environment variable is not set")
    return os.environ[env_name]
