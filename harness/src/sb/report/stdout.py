"""Standard output that outlives its reader: kept apart from the terminal layer so a command
guards it before anything heavy (rich) is imported."""

from __future__ import annotations

import sys


class _ClosedPipeSafe:
    """sys.stdout that, once the reader went away (`sb run | head -1`), swallows the rest:
    the sweep goes on and its results file is written; only the printing stops."""

    def __init__(self, stream):
        self._stream, self._closed = stream, False

    def write(self, text):
        if self._closed:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._divert()
            return len(text)

    def flush(self):
        if not self._closed:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._divert()

    def _divert(self):
        import os
        self._closed = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())  # the interpreter's last flush must not fail either
        except (OSError, ValueError):
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def guard_stdout() -> None:
    if not isinstance(sys.stdout, _ClosedPipeSafe) and sys.stdout is not None:
        sys.stdout = _ClosedPipeSafe(sys.stdout)
