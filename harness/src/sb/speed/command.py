"""The `sb speed` click command. Light at import: the load generator is imported on use."""

import click

from sb.errors import SbError


@click.command()
@click.option("--base-url", required=True)
@click.option("--model", required=True)
def speed(base_url, model):
    """Measure serving speed of an OpenAI-compatible endpoint (see docs/speed.md)."""
    raise SbError("sb speed is not built yet")
