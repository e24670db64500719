"""Print (or --write into README.md) the task table generated from every task's meta.yaml.

A test keeps README.md in sync with this output, so the table can never drift from the
packages it describes.
"""

from __future__ import annotations

import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- task-table:start -->", "<!-- task-table:end -->"


def table() -> str:
    from sb.catalog import task_row
    from sb.session import Session
    tasks = Session().tasks().values()
    rows = [task_row(t) for t in tasks if not t.meta.holdout]  # a holdout task is never listed
    rows.sort(key=lambda r: ({"ml": 0, "coding": 1, "production": 2}[r["suite"]], r["tier"] != "laptop", r["slug"]))
    lines = ["| task | suite | category | tier | difficulty | set | probes |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        tier = r["tier"] + (f" ({r['accelerator']})" if r["accelerator"] else "")
        probes = r["probes"].replace("|", "/")
        lines.append(f"| {r['slug']} | {r['suite']} | {r['category']} | {tier} | {r['difficulty']} "
                     f"| {r['set']} | {probes} |")
    return "\n".join(lines)


def replace_block(text: str, block: str) -> str:
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{block}\n{END}{tail}"


def main() -> None:
    block = table()
    if "--write" in sys.argv:
        README.write_text(replace_block(README.read_text(), block))
    else:
        print(block)


if __name__ == "__main__":
    main()
