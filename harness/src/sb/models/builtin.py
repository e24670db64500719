"""The control adapters: `reference` copies the reference, `starter` leaves the starter.

They need no key and no network, so a fresh clone can prove the whole pipeline: the
reference must score 100% and the starter 0%.
"""

from pathlib import Path

from sb.grading import write_files
from sb.hookspecs import hookimpl
from sb.models.base import Attempt, ModelAdapter, ModelOptions


class ReferenceAdapter(ModelAdapter):
    name = "reference"
    trusted = True  # the task's own code: may be graded without isolation when bwrap cannot run
    uses_settings = False
    supports_tool_loops = True  # through the task's own scripted agent
    routes = "reference (the task's own solution: the control run)"

    def solve(self, model: str, task, workdir: Path, options: ModelOptions) -> Attempt:
        write_files(workdir, task.reference_files)
        return Attempt(model_answered="reference")

    def tool_session(self, model: str, task, tools: list, options: ModelOptions):
        """For tool_loop tasks: the task's own scripted agent, driven through the real loop."""
        import importlib
        return importlib.import_module(f"{task.package}.agent").ScriptedAgent()


class StarterAdapter(ModelAdapter):
    name = "starter"
    trusted = True
    uses_settings = False
    leaves_starter = True  # tool_loop tasks too: the untouched starter, no conversation
    routes = "starter (leaves the starter untouched: must score 0%)"

    def solve(self, model: str, task, workdir: Path, options: ModelOptions) -> Attempt:
        return Attempt(model_answered="starter")


@hookimpl
def register_models(register):
    register(ReferenceAdapter())
    register(StarterAdapter())
