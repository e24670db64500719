"""The target of the `inspect_ai` entry point: importing it registers the task, the solver,
the scorer, its metrics and reducer, and the offline provider `sb-offline`."""

from sb_inspect import answer_once, measured, pass_rate, pass_rate_over_epochs, sb_grader, sb_offline, scratchbench  # noqa: F401
