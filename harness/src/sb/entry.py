"""The `sb` console script: `sb grade SLUG DIR` starts its remembered judge first.

A fresh `sb grade` of a small task is mostly waiting: the judge it takes must import
pytest and the task's dependencies (about 0.2 s), and the command spends about 0.1 s
importing the CLI, the pipeline and the task package before it can start one. Here, before
any of that is imported, the judge the last `sb grade` of the same task took is started
from the cache (sb/grading/early.py); the command then runs as always and takes it only
where it is exactly the judge it would have started. Every other command goes straight
to sb.cli.
"""

from __future__ import annotations

import sys


def main() -> None:
    slug = graded_slug(sys.argv[1:])
    if slug is not None:
        from sb.grading.early import start_remembered_judge
        start_remembered_judge(slug)
    from sb.cli import main as cli_main
    cli_main()


def graded_slug(args: list) -> str | None:
    """The task of `grade SLUG DIR [--isolation bwrap] [--json]`, else None: a head start
    only where the default sandbox grades one named task."""
    if len(args) < 3 or args[0] != "grade" or args[1].startswith("-"):
        return None
    options = args[3:]
    for i, option in enumerate(options):
        if option == "--json":
            continue
        if option == "--isolation" and options[i + 1:i + 2] == ["bwrap"]:
            continue
        if option == "bwrap" and i > 0 and options[i - 1] == "--isolation":
            continue
        if option == "--isolation=bwrap":
            continue
        return None  # help, another sandbox, an option this does not know: no guess
    return args[1]
