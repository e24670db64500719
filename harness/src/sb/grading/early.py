"""The judge of `sb grade`, started before the command loads its plugins.

A fresh `sb grade` spends about 0.2 s loading every plugin and reading its task, and its
grading then waits about 0.4 s for a warm judge to import pytest and the task's
dependencies. The two can overlap: the command names one task, and by default the
built-in bubblewrap sandbox, so the judge its grading will take can be started from that
task's own entry point first. It is a head start and nothing more: the grading takes it
only when everything its key holds (the sandbox, the view, the hidden folder, the limits,
the imports: warm.py) equals what the command's session resolved; a judge not taken is
closed unused with the command's other warm judges.
"""

from __future__ import annotations

from sb.sandbox.base import Sandbox


def start_judge_early(slug: str, isolation: str | None) -> Sandbox | None:
    """The sandbox whose warm judge for `slug` is already starting, or None where no head
    start applies (another isolation, bwrap unusable, no such entry point, a cold judge)."""
    from sb.sandbox.bwrap import BwrapSandbox
    if isolation not in (None, BwrapSandbox.name) or BwrapSandbox.unavailable_reason():
        return None
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
