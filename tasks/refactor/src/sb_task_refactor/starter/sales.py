"""Summarise a day's sales log."""

_totals = {}
_errors = []
_line_number = 0


def summarize(lines):
    """Summarise the lines of a sales log.

    Each line reads "sku,quantity,unit_price". Returns (totals, errors): totals maps each
    SKU to its revenue in cents, in SKU order; errors lists the 1-based numbers of the
    lines that could not be used. Blank lines and lines starting with "#" are skipped.
    """
    global _line_number
    _totals.clear()
    del _errors[:]
    _line_number = 0
    for line in lines:
        _line_number += 1
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) != 3:
            _errors.append(_line_number)
            continue
        sku = fields[0].strip().upper()
        try:
            quantity = int(fields[1])
            cents = round(float(fields[2]) * 100)
        except ValueError:
            _errors.append(_line_number)
            continue
        if not sku or quantity <= 0 or cents < 0:
            _errors.append(_line_number)
            continue
        _totals[sku] = _totals.get(sku, 0) + quantity * cents
    return dict(sorted(_totals.items())), list(_errors)
