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
    routes = "reference (the task's own solution: the control run)"

    def solve(self, model: str, task, workdir: Path, options: ModelOptions) -> Attempt:
        write_files(workdir, task.reference_files)
        return Attempt(model_answered="reference")


class StarterAdapter(ModelAdapter):
    name = "starter"
    trusted = True
    routes = "starter (leaves the starter untouched: must score 0%)"

    def solve(self, model: str, task, workdir: Path, options: ModelOptions) -> Attempt:
        return Attempt(model_answered="starter")


@hookimpl
def register_models(register):
    register(ReferenceAdapter())
    register(StarterAdapter())
