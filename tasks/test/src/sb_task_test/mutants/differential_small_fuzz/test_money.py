import random

import pytest

from money import format_cents, split_amount


def oracle_split(total, parts):
    if parts < 1 or total < 0:
        raise ValueError
    share, leftover = divmod(total, parts)
    return [share + 1] * leftover + [share] * (parts - leftover)


def oracle_format(cents):
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"


def behaves(function, *args):
    try:
        return function(*args)
    except ValueError:
        return "ValueError"
    except Exception as exc:
        return type(exc).__name__


@pytest.mark.parametrize("seed", range(3))
def test_split_matches_the_shown_copy(seed):
    rng = random.Random(seed)
    for _ in range(40):
        total, parts = rng.randrange(-3, 200), rng.randrange(-2, 9)
        assert behaves(split_amount, total, parts) == behaves(oracle_split, total, parts)


@pytest.mark.parametrize("seed", range(3))
def test_format_matches_the_shown_copy(seed):
    rng = random.Random(seed)
    for _ in range(40):
        cents = rng.randrange(-10**9, 10**9)
        assert format_cents(cents) == oracle_format(cents)
