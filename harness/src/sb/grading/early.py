"""The judge of `sb grade`, started before the command loads its plugins.

A fresh `sb grade` spends about 0.2 s loading every plugin and reading its task, and its
grading then waits about 0.4 s for a warm judge to import pytest and the task's
dependencies. The two can overlap: the command names one task, and by default the
built-in bubblewrap sandbox, so the judge its grading will take can be started from that
task's own entry point first. It is a head start and nothing more: the grading takes it
only when everything its key holds (the sandbox, the view, the hidden folder, the limits,
the imports: warm.py) equals what the command's session resolved; a judge not taken is
closed unused with the command's other warm judges.

Reading the task's entry point still costs the imports of the pipeline and the task
package (about 0.1 s). So each `sb grade` also remembers, in the cache folder, the judge
its grading took, and the next `sb grade` of that task starts it from the console script
(sb/entry.py) before importing anything else. A remembered judge is a guess like any
head start: taken only when its key equals the session's, and rewritten when it differs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sb.sandbox.base import Job, Sandbox

_launched: dict = {}  # slug -> the sandbox whose remembered judge the console script started


def start_judge_early(slug: str, isolation: str | None) -> Sandbox | None:
    """The sandbox whose warm judge for `slug` is already starting, or None where no head
    start applies (another isolation, bwrap unusable, no such entry point, a cold judge)."""
    from sb.sandbox.bwrap import BwrapSandbox
    if isolation not in (None, BwrapSandbox.name) or BwrapSandbox.unavailable_reason():
        return None
    if slug in _launched:
        return _launched[slug]
    try:
        task = _registered_task(slug)
        sandbox = BwrapSandbox()
        if task is None:
            return None
        from sb.grading.pipeline import start_warm_judge
        return sandbox if start_warm_judge(task, sandbox) else None
    except Exception:  # noqa: BLE001 - a head start only: the command's own path meets and reports any error
        return None


def same_sandbox(early: Sandbox | None, chosen: Sandbox) -> Sandbox:
    """`early` where the session chose the same kind of sandbox, so its judge is found
    (warm judges are keyed by their sandbox instance); else `chosen`."""
    return early if early is not None and type(early) is type(chosen) else chosen


def _registered_task(slug: str):
    """The task that the entry point `slug` registers, read from that package alone."""
    from sb.plugins import allowed_entry_point
    entry_point = allowed_entry_point(slug)
    register_tasks = getattr(entry_point.load(), "register_tasks", None) if entry_point is not None else None
    if register_tasks is None:
        return None
    found: list = []
    register_tasks(register=found.append)
    return next((task for task in found if getattr(task, "slug", None) == slug), None)


def start_remembered_judge(slug: str) -> None:
    """The console script's head start: the judge the last `sb grade` of `slug` took,
    started in the default sandbox from the remembered file alone (no plugin, no task
    package read). Anything missing or unexpected: no head start, and nothing said."""
    if os.environ.get("SB_WARM_JUDGES", "1") == "0":
        return
    try:
        remembered = json.loads(_memory_path(slug).read_text())
        template, preimports = _job(remembered["template"]), [str(n) for n in remembered["preimports"]]
        import shutil
        # Not BwrapSandbox.unavailable_reason(): the trial jail it starts would hold this
        # start back by a hundredth of a second. Where bwrap is installed but cannot run,
        # the judge's jail fails at once, unused, and the command's own check reports why.
        if shutil.which("bwrap") is None or template.devices:
            return
        from sb.sandbox.bwrap import BwrapSandbox
        sandbox = BwrapSandbox()
        from sb.grading.warm import warm_judges
        if warm_judges().start(sandbox, template, preimports):
            _launched[slug] = sandbox
    except Exception:  # noqa: BLE001 - a head start only: the command's own path meets and reports any error
        return


def remember_judge(task, sandbox: Sandbox) -> None:
    """Keep, for the next `sb grade` of `task`, the judge a grading of it in `sandbox`
    takes; only where the head start would apply (bwrap, a warm judge, gradable here)."""
    from sb.grading.pipeline import _judge_view_job, _judged_warm, _preimports, precheck
    from sb.sandbox.bwrap import BwrapSandbox
    if type(sandbox) is not BwrapSandbox or not _judged_warm(task, sandbox) or precheck(task) is not None:
        return
    from sb.grading.warm import TEMPLATE_FIELDS
    template = _judge_view_job(task)
    data = {"template": {name: _plain(getattr(template, name)) for name in TEMPLATE_FIELDS},
            "preimports": _preimports(task)}
    path = _memory_path(task.slug)
    try:
        if path.exists() and json.loads(path.read_text()) == data:
            return
        from sb.results import write_atomic
        write_atomic(path, data)  # a reader sees the old file or the new one, never half of one
    except (OSError, ValueError):
        return  # no memory kept: the next command starts its judge from the entry point


def _plain(value):
    """JSON's form of a template field: a tuple of paths as a list of strings."""
    return [str(item) for item in value] if isinstance(value, tuple) else value


def _job(fields: dict) -> Job:
    def paths(name: str) -> tuple:
        return tuple(str(p) for p in fields[name])

    env = {str(k): str(v) for k, v in dict(fields["env"]).items()}
    private = fields["private_writes_mb"]
    return Job(argv=[], cwd=Path("/"), env=env, timeout_s=float(fields["timeout_s"]), readable=paths("readable"),
               masked=paths("masked"), hidden=paths("hidden"), devices=paths("devices"),
               memory_mb=int(fields["memory_mb"]), max_processes=int(fields["max_processes"]),
               max_file_mb=int(fields["max_file_mb"]), private_writes_mb=None if private is None else int(private))


def _memory_path(slug: str) -> Path:
    if not slug.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"not a task name: {slug!r}")  # never a path of the user's choosing
    from sb.cache import cache_dir
    return cache_dir() / "judges" / f"{slug}.json"
