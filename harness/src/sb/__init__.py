"""scratchbench: grade model-written code against hidden tests.

The public surface is `__all__`; everything else is private to the harness.
"""

from sb.errors import PluginError, SbError, TaskError
from sb.hookspecs import hookimpl
from sb.models.base import Attempt, ModelAdapter, ModelOptions
from sb.outcome import Outcome, Status
from sb.sandbox.base import Completed, Job, Sandbox
from sb.task import Mutant, Task, load_packaged_task

__all__ = [
    "Attempt",
    "Completed",
    "Job",
    "ModelAdapter",
    "ModelOptions",
    "Mutant",
    "Outcome",
    "PluginError",
    "Sandbox",
    "SbError",
    "Status",
    "Task",
    "TaskError",
    "hookimpl",
    "load_packaged_task",
]
