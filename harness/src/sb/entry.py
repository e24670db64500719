"""The `sb` console script: `sb grade SLUG DIR` starts its remembered judge first.

A fresh `sb grade` of a small task is mostly waiting: the judge it takes must import
pytest and the task's dependencies (about 0.2 s), and the command spends about 0.1 s
importing the CLI, the pipeline and the task package before it can start one. Here, before
any of that is imported, the judge the last `sb grade` of the same task took is started
from the cache (sb/grading/early.py); the command then runs as always and takes it only
where it is exactly the judge it would have started, and ends without the interpreter's
teardown (QuickEnd). Every other command goes straight to sb.cli.
"""

from __future__ import annotations

import sys


def main() -> None:
    slug = graded_slug(sys.argv[1:])
    if slug is None:
        from sb.cli import main as cli_main
        return cli_main()
    ending = QuickEnd.install()
    from sb.grading.early import start_remembered_judge
    start_remembered_judge(slug)
    from sb.cli import main as cli_main
    try:
        cli_main()
    except SystemExit as done:
        ending.status = done.code
        raise
    ending.status = 0


class QuickEnd:
    """`sb grade` ends without the interpreter's teardown (freeing every module the command
    imported: about 0.02 s, a tenth of what a fresh `sb grade` adds to bare pytest).

    Its handler is the first registered at exit, so it runs last: after the interpreter
    has joined every non-daemon thread and run every other exit handler (the warm judges'
    closing among them). There it flushes standard output and error and ends the process
    with the command's status. Nothing of the command is left to teardown: its files are
    written whole and closed (results, caches), its folders removed by their own handlers.
    Where a handler was registered before this one (a coverage tool's, at start-up), or the
    command ends by an exception rather than an exit status, the interpreter ends as usual."""

    UNSET = object()

    def __init__(self) -> None:
        self.status = QuickEnd.UNSET

    @classmethod
    def install(cls) -> QuickEnd:
        import atexit
        ending = cls()
        counted = getattr(atexit, "_ncallbacks", None)  # CPython's; elsewhere, no quick end
        if counted is not None and counted() == 0:
            atexit.register(ending.end)
        return ending

    def end(self) -> None:
        if self.status is QuickEnd.UNSET:
            return
        code = self.status
        code = code if isinstance(code, int) else 0 if code is None else 1
        for stream in (sys.stdout, sys.stderr):
            if stream is None or getattr(stream, "closed", False):
                continue  # a descriptor closed from the start: nothing to flush, as for the interpreter
            try:
                stream.flush()
            except BrokenPipeError:
                pass  # the reader went away: the status still counts
            except OSError:
                code = 120  # what the interpreter's own last flush ends with (a full disk, say)
        import os
        os._exit(code)


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
