"""Runs in the solution's process. Observations only: no expected value, no oracle.

What needs live objects there (whether a result shares objects with an earlier one, and
what summarize does when the module's parse_line is swapped for the caller's parser), and
long runs of calls, which would be thousands of round trips through the proxy.
"""
import sales


def modify_then_call_again(lines):
    """Call summarize, modify what came back the way a caller may, call it again."""
    first = sales.summarize(list(lines))
    totals, errors = first
    for key in list(totals):
        totals[key] = -1
    totals["~MODIFIED"] = 1
    errors.append(1_000_000)
    errors.insert(0, -5)
    second = sales.summarize(list(lines))
    return {
        "second": second,
        "first_after": first,
        "same_totals": second[0] is totals,
        "same_errors": second[1] is errors,
    }


def summarize_with_parser(parser, lines):
    """summarize(lines) while the module's parse_line is `parser` (restored afterwards)."""
    real = sales.parse_line
    sales.parse_line = parser
    try:
        return sales.summarize(list(lines))
    finally:
        sales.parse_line = real


def _outcome(name, argument):
    """("returned", value) or ("raised", the exception's built-in type name)."""
    try:
        return ("returned", getattr(sales, name)(argument))
    except Exception as exc:  # noqa: BLE001 - the exception's type is the observation
        return ("raised", next(cls for cls in type(exc).__mro__ if cls.__module__ == "builtins").__name__)


def run_calls(calls):
    """Make the calls [(name, argument), ...] in order, in one round trip; each call's outcome."""
    return [_outcome(name, argument) for name, argument in calls]


def summarize_iterables(lines):
    """summarize over the same lines handed as other iterables made here (an iterator, a
    generator, a tuple, a map object): each outcome."""
    lines = list(lines)
    return [_outcome("summarize", make()) for make in (
        lambda: iter(lines), lambda: (line for line in lines), lambda: tuple(lines), lambda: map(str, lines))]


def call_while_iterating(outer, nested):
    """summarize(outer) over a generator that, before yielding outer line i, makes the calls
    nested[i] (a list of (name, argument)). The outer outcome, then every nested outcome."""
    seen = []

    def lines():
        for index, line in enumerate(outer):
            for name, argument in nested.get(index, ()):
                seen.append(_outcome(name, argument))
            yield line

    return _outcome("summarize", lines()), seen
