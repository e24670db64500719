"""Where graded code runs. See docs/sandbox.md for the threat model."""

from sb.sandbox.base import Completed, Job, Sandbox, available_sandboxes, choose_sandbox

__all__ = ["Completed", "Job", "Sandbox", "available_sandboxes", "choose_sandbox"]
