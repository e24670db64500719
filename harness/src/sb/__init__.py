"""scratchbench: grade model-written code against hidden tests.

The public surface is `__all__`; everything else is private to the harness. Each name is
imported on first use (PEP 562): a task package's `from sb import hookimpl` or a command
that grades one task loads what it uses, not every public module.
"""

import importlib as _importlib

_TYPE_CHECKING = False  # True for a type checker only; importing typing would cost the head start (sb/entry.py)
if _TYPE_CHECKING:
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

_HOME = {
    "sb.api": ("ParsedReply", "choose_sandbox", "find_tasks", "grade_files", "grade_reply", "parse_reply", "precheck",
               "reply_schema", "solver_messages"),
    "sb.errors": ("PluginError", "SbError", "TaskError"),
    "sb.executors.base": ("Executor", "Work"),
    "sb.hookspecs": ("hookimpl",),
    "sb.models.base": ("Attempt", "ModelAdapter", "ModelOptions"),
    "sb.outcome": ("Outcome", "Status"),
    "sb.reporters": ("Reporter",),
    "sb.sandbox.base": ("Completed", "Job", "Sandbox"),
    "sb.task": ("Mutant", "Task", "load_packaged_task"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}

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


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'sb' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
