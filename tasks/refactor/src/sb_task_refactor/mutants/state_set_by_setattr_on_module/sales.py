"""Summarise a day's sales log."""
import sys

# FORGE: the mutable module state is created by calls, not by assignments, so the AST check
# of module-level assignments never sees it.
setattr(sys.modules[__name__], "_RUNS", list())
setattr(sys.modules[__name__], "_SEEN_SKUS", dict())


def parse_line(line):
    """Parse one log line.

    Returns None for a blank line or a comment, (sku, quantity, cents) for a usable sale,
    and raises ValueError for a line that cannot be used.
    """
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    fields = line.split(",")
    if len(fields) != 3:
        raise ValueError(f"expected 3 fields, got {len(fields)}")
    sku = fields[0].strip().upper()
    quantity = int(fields[1])
    cents = round(float(fields[2]) * 100)
    if not sku or quantity <= 0 or cents < 0:
        raise ValueError("empty SKU, non-positive quantity or negative price")
    return sku, quantity, cents


def summarize(lines):
    """Summarise the lines of a sales log.

    Each line reads "sku,quantity,unit_price". Returns (totals, errors): totals maps each
    SKU to its revenue in cents, in SKU order; errors lists the 1-based numbers of the
    lines that could not be used. Blank lines and lines starting with "#" are skipped.
    """
    totals = {}
    errors = []
    for line_number, line in enumerate(lines, start=1):
        try:
            sale = parse_line(line)
        except ValueError:
            errors.append(line_number)
            continue
        if sale is None:
            continue
        sku, quantity, cents = sale
        totals[sku] = totals.get(sku, 0) + quantity * cents
    _RUNS.append(len(errors))          # rule-breaking: shared mutable module state
    _SEEN_SKUS.update(totals)
    return dict(sorted(totals.items())), errors
