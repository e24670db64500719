"""Errors that the CLI turns into one-line messages and exit code 2.

A `SbError` is always the user's input or an installed package being wrong, never a
solution's fault: graders return records for those and never raise.
"""


class SbError(Exception):
    """Bad input: the CLI prints `sb: error: <message>` and exits 2."""


class TaskError(SbError):
    """A task package is malformed; the message names the package, file and field."""


class PluginError(SbError):
    """A plugin failed to load or registered a name another plugin already holds."""
