"""Rich rendering of `sb speed`'s table: the one exception, beside sb.report.terminal, that imports rich.

It only draws what `sb.speed.results.table` returns; every figure is computed elsewhere.
"""

from __future__ import annotations

from rich.table import Table

from sb.report.terminal import PlainConsole


def print_speed(table: dict, written: list) -> None:
    console = PlainConsole(highlight=False, soft_wrap=False, markup=False)
    grid = Table(show_edge=False, header_style="bold", pad_edge=False, box=None)
    for column in table["columns"]:
        grid.add_column(column, overflow="fold")
    for row in table["rows"]:
        grid.add_row(*row)
    console.print(grid)
    for line in table["lines"] + [f"{label}: {path}" for label, path in written]:
        console.print(line)
