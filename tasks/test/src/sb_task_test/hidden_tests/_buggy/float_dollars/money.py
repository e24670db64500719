"""Small helpers for amounts of money held as whole cents."""


def split_amount(total_cents: int, parts: int) -> list[int]:
    """Split `total_cents` into `parts` whole-cent shares, as evenly as possible.

    The shares sum to `total_cents` exactly and differ from each other by at most one cent;
    the larger shares come first: split_amount(10, 3) == [4, 3, 3].
    Raises ValueError if `parts` is less than 1 or `total_cents` is negative.
    """
    if parts < 1:
        raise ValueError("parts must be at least 1")
    if total_cents < 0:
        raise ValueError("total_cents must not be negative")
    share, leftover = divmod(total_cents, parts)
    return [share + 1] * leftover + [share] * (parts - leftover)


def format_cents(cents: int) -> str:
    """Render an amount of cents as US dollars: a minus sign (if negative), a dollar sign,
    the whole dollars with a comma between each group of three digits, a point and exactly
    two digits of cents: format_cents(123456) == "$1,234.56", format_cents(-5) == "-$0.05".
    """
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) / 100:,.2f}"
