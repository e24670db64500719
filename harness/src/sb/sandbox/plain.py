"""`--isolation none`: a plain subprocess with rlimits and an allow-listed environment.

It isolates nothing from the filesystem or network: use it only for code you trust
(the reference, your own solutions) or where bubblewrap cannot run. The results file
records that it was used.
"""

from sb.sandbox.base import Completed, Job, Sandbox
from sb.sandbox.process import closed_unless_started, limits_preexec, run_process


class PlainSandbox(Sandbox):
    name = "none"
    keeps_warm_judges = True
    description = "plain subprocess: rlimits and a clean environment, no filesystem or network isolation"

    def run(self, job: Job) -> Completed:
        with closed_unless_started(job):
            preexec = limits_preexec(job)
        return run_process(list(job.argv), job, "none", preexec=preexec)
