"""`sb speed`'s table, drawn by the one rendering path every command uses (sb.report.terminal).

It only draws what `sb.speed.results.table` returns; every figure is computed elsewhere.
"""

from __future__ import annotations

from sb.report.terminal import _table, console, print_table


def print_speed(table: dict, written: list) -> None:
    grid = _table(*table["columns"])
    for row in table["rows"]:
        grid.add_row(*row)
    print_table(grid)
    out = console()
    for line in table["lines"] + [f"{label}: {path}" for label, path in written]:
        out.print(line)
