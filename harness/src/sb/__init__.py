"""scratchbench: grade model-written code against hidden tests.

The public surface is `__all__`; everything else is private to the harness.
"""

from sb.api import (ParsedReply, choose_sandbox, find_tasks, grade_files, grade_reply, parse_reply, precheck,
                    reply_schema, solver_messages)
from sb.errors import PluginError, SbError, TaskError
from sb.executors.base import Executor, Work
from sb.hookspecs import hookimpl
from sb.models.base import Attempt, ModelAdapter, ModelOptions
from sb.outcome import Outcome, Status
from sb.reporters import Reporter
from sb.sandbox.base import Completed, Job, Sandbox
from sb.task import Mutant, Task, load_packaged_task

__all__ = [
    "Attempt",
    "Completed",
    "Executor",
    "Job",
    "ModelAdapter",
    "ModelOptions",
    "Mutant",
    "Outcome",
    "ParsedReply",
    "PluginError",
    "Reporter",
    "Sandbox",
    "SbError",
    "Status",
    "Task",
    "TaskError",
    "Work",
    "choose_sandbox",
    "find_tasks",
    "grade_files",
    "grade_reply",
    "hookimpl",
    "load_packaged_task",
    "parse_reply",
    "precheck",
    "reply_schema",
    "solver_messages",
]
