"""Errors that the CLI turns into one-line messages and exit code 2.

A `SbError` is always the user's input or an installed package being wrong, never a
solution's fault: graders return records for those and never raise.
"""


class SbError(Exception):
    """Bad input: the CLI prints `sb: error: <message>` and exits `exit_code` (2)."""

    exit_code = 2


class Unavailable(SbError):
    """What was asked for exists but cannot be used (a broken task package, a sweep stopped
    by failing transport): one line and exit 1, like any other failure of the run."""

    exit_code = 1


class TaskError(SbError):
    """A task package is malformed; the message names the package, file and field. Exit 1:
    the package cannot be used, which is not the user's typing."""

    exit_code = 1


class PluginError(SbError):
    """A plugin failed to load or registered a name another plugin already holds."""


class MissingExtra(Unavailable):
    """An optional part is not installed; everything that did not need it is done."""

    def __init__(self, what: str, extra: str, done: str = ""):
        tail = f"; {done}" if done else ""
        super().__init__(f"{what} needs matplotlib, which is not installed: pip install 'scratchbench[{extra}]'{tail}")
