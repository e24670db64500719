"""The dated price table: USD per million tokens, each price with the date it took effect.

A cost is derived from a task's tokens and the price in effect on the day of the run, by
provider and model (a dated snapshot is priced as its model). Prices are never edited in
place: a change is a new entry with a later `as_of`, so an old results file still
re-derives to the cost it recorded (`tools/check_cost.py` checks every file in
leaderboard/). A model without a price has cost None and is reported as "unpriced": a
guessed price would be a wrong number that looks right.

`input` is uncached input; `cache_read` and `cache_write` are priced separately;
`output` includes reasoning (thinking) tokens, which providers bill as output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

UNPRICED = "unpriced"
TOKEN_KINDS = ("input", "output", "cache_read", "cache_write")
SNAPSHOT_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
ANTHROPIC_SOURCE = "https://docs.claude.com/en/docs/about-claude/pricing"
OPENAI_SOURCE = "https://platform.openai.com/docs/pricing"


@dataclass(frozen=True)
class Price:
    as_of: str          # ISO date this price took effect (or was last checked against the source)
    input: float
    output: float
    cache_read: float
    cache_write: float
    source: str


def _anthropic(as_of, input, output):
    """Anthropic: cache reads at 0.1x input, 5-minute cache writes at 1.25x input."""
    return Price(as_of, input, output, round(input * 0.1, 6), round(input * 1.25, 6), ANTHROPIC_SOURCE)


def _openai(as_of, input, output, cached):
    return Price(as_of, input, output, cached, 0.0, OPENAI_SOURCE)


# provider -> model -> prices, oldest first. Standard (not batch, not priority) tier,
# prompts under 200k tokens.
PRICES: dict[str, dict[str, tuple[Price, ...]]] = {
    "anthropic": {
        "claude-opus-4-5": (_anthropic("2025-11-24", 5.0, 25.0),),
        "claude-opus-4-1": (_anthropic("2025-08-05", 15.0, 75.0),),
        "claude-opus-4": (_anthropic("2025-05-22", 15.0, 75.0),),
        "claude-sonnet-4-5": (_anthropic("2025-09-29", 3.0, 15.0),),
        "claude-sonnet-4": (_anthropic("2025-05-22", 3.0, 15.0),),
        "claude-haiku-4-5": (_anthropic("2025-10-15", 1.0, 5.0),),
        "claude-3-5-haiku": (_anthropic("2024-11-04", 0.8, 4.0),),
    },
    "openai": {
        "gpt-5": (_openai("2025-08-07", 1.25, 10.0, 0.125),),
        "gpt-5-mini": (_openai("2025-08-07", 0.25, 2.0, 0.025),),
        "gpt-5-nano": (_openai("2025-08-07", 0.05, 0.40, 0.005),),
        "gpt-4.1": (_openai("2025-04-14", 2.0, 8.0, 0.50),),
        "gpt-4.1-mini": (_openai("2025-04-14", 0.40, 1.60, 0.10),),
        "gpt-4o": (_openai("2024-10-01", 2.50, 10.0, 1.25),),
        "o3": (_openai("2025-06-10", 2.0, 8.0, 0.50),),
        "o4-mini": (_openai("2025-04-16", 1.10, 4.40, 0.275),),
    },
}


def price_for(provider: str, model: str, on: date) -> tuple[str, Price] | None:
    """(priced model name, the price in effect on `on`) or None when unpriced."""
    table = PRICES.get(provider, {})
    name = model if model in table else SNAPSHOT_SUFFIX.sub("", model)
    in_effect = [p for p in table.get(name, ()) if date.fromisoformat(p.as_of) <= on]
    return (name, in_effect[-1]) if in_effect else None


def cost(provider: str, model: str, usage: dict | None, on: date) -> tuple[float | None, str]:
    """(USD rounded to 8 places, or None) and the price used: 'provider model as of DATE' or 'unpriced'."""
    found = price_for(provider, model, on) if usage else None
    if found is None or usage is None:
        return None, UNPRICED
    name, price = found
    total = sum(int(usage.get(kind) or 0) * getattr(price, kind) for kind in TOKEN_KINDS) / 1_000_000
    return round(total, 8), f"{provider} {name} as of {price.as_of}"
