"""A second correct implementation, written differently from the one the solver is shown:
round-robin shares and hand-made digit groups. It agrees with the shown one on every int
(checked by the hidden tests' own battery) and may differ on anything the docstrings leave
open, such as arguments that are not int."""


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
    base = total_cents // parts
    remaining = total_cents - base * parts
    shares = []
    for index in range(parts):
        shares.append(base + 1 if index < remaining else base)
    return shares


def format_cents(cents: int) -> str:
    """Render an amount of cents as US dollars: a minus sign (if negative), a dollar sign,
    the whole dollars with a comma between each group of three digits, a point and exactly
    two digits of cents: format_cents(123456) == "$1,234.56", format_cents(-5) == "-$0.05".
    """
    negative = cents < 0
    magnitude = -cents if negative else cents
    digits, rest = str(magnitude // 100), magnitude % 100
    groups = []
    while len(digits) > 3:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    groups.insert(0, digits)
    return ("-" if negative else "") + "$" + ",".join(groups) + "." + str(rest).rjust(2, "0")
