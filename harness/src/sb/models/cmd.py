"""`cmd:<command>`: an external agent writes the files.

The command runs through the shell in the working directory that holds the starter files,
with SB_TASK (the slug) and SB_PROMPT (the path of prompt.md, written outside the working
directory so it is never graded) in its environment, and SB_MODEL_SETTINGS (JSON) when the
user set any knob. Whatever it leaves there is graded under the usual rules (declared
names only). Its exit status is recorded; a non-zero exit, or running past the timeout,
is adapter_error. What it writes to stderr is kept with the attempt whatever its exit (the
last AGENT_STDERR_BYTES; sb run writes it to a file named in the task's entry). It reports
no tokens, so it has no usage and no cost.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from sb.hookspecs import hookimpl
from sb.models.base import Attempt, ModelAdapter, ModelOptions
from sb.outcome import Status

AGENT_STDERR_BYTES = 65536


class CommandAdapter(ModelAdapter):
    name = "cmd"
    routes = "cmd:<command> (an external agent run in the working directory)"

    def claims(self, model: str) -> bool:
        return False  # only as cmd:<command>

    def preflight(self, model: str, options: ModelOptions) -> None:
        """A command naming its program by a relative path (`./my-agent.sh`, `bin/agent`) would
        look for it in each task's working folder, and fail there as exit 127 for every task."""
        import shlex
        try:
            words = [w for w in shlex.split(model) if "=" not in w.split("/", 1)[0]]  # past VAR=value
        except ValueError:
            return  # the shell will say what is wrong with its quoting, once per task
        program = words[0] if words else ""
        if "/" in program and not program.startswith(("/", "~")):
            from sb.errors import SbError
            raise SbError(f"cmd: runs the command in each task's working folder, where {program} is not: name it "
                          f"by its full path ({Path(program).resolve()})")

    def solve(self, model: str, task, workdir: Path, options: ModelOptions) -> Attempt:
        if not model.strip():
            return Attempt(status=Status.ADAPTER_ERROR, detail="cmd: needs a command, as cmd:<command>")
        from sb.interrupt import temporary_directory
        with temporary_directory(f"sb-prompt-{task.slug}-") as tmp:
            prompt = Path(tmp) / "prompt.md"
            prompt.write_text(task.prompt, encoding="utf-8")
            return run_agent(model, workdir, agent_env(task.slug, prompt, options.settings), options.timeout_s)


def agent_env(slug: str, prompt: Path, settings: dict) -> dict:
    env = dict(os.environ, SB_TASK=slug, SB_PROMPT=str(prompt))
    if settings:
        env["SB_MODEL_SETTINGS"] = json.dumps(settings, sort_keys=True)
    return env


def run_agent(command: str, workdir: Path, env: dict, timeout_s: float) -> Attempt:
    """Run the command in its own process group, so a timeout kills everything it started."""
    from sb.interrupt import track_group, untrack_group
    proc = subprocess.Popen(command, shell=True, cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    track_group(proc.pid)
    try:
        _, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
        return Attempt(status=Status.ADAPTER_ERROR, detail=f"the command ran past {timeout_s:g}s and was killed",
                       exit_status=proc.returncode, agent_stderr=_tail(stderr))
    finally:
        untrack_group(proc.pid)
    if proc.returncode != 0:
        last = (stderr.decode("utf-8", errors="replace").strip().splitlines() or [""])[-1][:300]
        return Attempt(status=Status.ADAPTER_ERROR, exit_status=proc.returncode, agent_stderr=_tail(stderr),
                       detail=f"the command exited with status {proc.returncode}" + (f": {last}" if last else ""))
    return Attempt(model_answered=command, exit_status=0, agent_stderr=_tail(stderr))


def _tail(stderr: bytes | None) -> str | None:
    """The last AGENT_STDERR_BYTES of what the agent wrote to stderr, as text; None for nothing."""
    if not stderr:
        return None
    return stderr[-AGENT_STDERR_BYTES:].decode("utf-8", errors="replace")


@hookimpl
def register_models(register):
    register(CommandAdapter())
