"""The `sb speed` click command. Light at import: the load generator, matplotlib and rich load on use."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from sb.errors import SbError

DEFAULT_LEVELS = "1,2,4,8,16,32"


def parse_levels(text: str) -> tuple:
    try:
        levels = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise SbError(f"--concurrency takes comma-separated positive integers, got {text!r}") from None
    if not levels or min(levels) < 1 or len(set(levels)) != len(levels):
        raise SbError(f"--concurrency takes distinct positive integers, got {text!r}")
    return tuple(sorted(levels))


@click.command()
@click.option("--base-url", required=True, help="the OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
@click.option("--model", required=True, help="the model name to send")
@click.option("--concurrency", "levels", default=DEFAULT_LEVELS, show_default=True,
              help="comma-separated concurrency levels")
@click.option("--max-tokens", type=click.IntRange(min=2), default=256, show_default=True,
              help="output tokens per request (the procedure's fixed 256; recorded)")
@click.option("--requests-per-level", type=click.IntRange(min=1), default=None,
              help="requests measured per level (default: max(8, 2 x streams); never fewer than the streams)")
@click.option("--floor", type=click.FloatRange(min=0, min_open=True), default=None,
              help="tokens/s per stream the service promises; gives the capacity")
@click.option("--hardware", default=None, help='the machine and accelerator, as you describe them (recorded)')
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True)
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=600.0,
              show_default=True, help="seconds one request may take")
@click.option("--api-key-env", default=None, help="name of an environment variable holding a bearer key (never recorded)")
@click.option("--json", "as_json", is_flag=True, help="print the results document")
def speed(base_url, model, levels, max_tokens, requests_per_level, floor, hardware, results_dir, timeout_s,
          api_key_env, as_json):
    """Measure serving speed and capacity of an OpenAI-compatible endpoint (see docs/speed.md).

    Exit 1 when no request of any level produced exactly the asked tokens (nothing measured).
    """
    from sb.speed import chart, results
    from sb.speed.client import Endpoint
    from sb.speed.loadgen import Plan, measure
    from sb.inputs import writable_dir
    try:
        Endpoint.from_base_url(base_url)
    except ValueError as exc:
        raise SbError(str(exc)) from None
    writable_dir(results_dir, "--results")  # before the first request, not after the measurement
    plan = Plan(base_url, model, parse_levels(levels), max_tokens, requests_per_level, timeout_s, _api_key(api_key_env))
    try:
        measurement = measure(plan)
    except OSError as exc:
        raise SbError(f"cannot reach {base_url}: {exc}") from None
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
