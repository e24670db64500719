"""The installed tasks, and the selections the CLI makes from them."""

from __future__ import annotations

from sb.errors import SbError
from sb.task import Task

TIER_CHOICES = ("laptop", "accelerated", "all")


def load_tasks(pm, broken: dict | None = None, only=None) -> dict:
    """slug -> Task from every register_tasks implementation (a duplicate slug raises), or
    from the plugins named in `only`. A malformed package is left out; `broken`, when
    given, receives its name and why."""
    from sb.plugins import broken_plugins, collect
    entry_point_names = set(pm.entry_point_names)
    registry = collect(pm, "register_tasks", "task", lambda task: task.slug,
                       check=lambda name, task: _slug_matches_entry_point(name, task, entry_point_names), only=only)
    if broken is not None:
        broken.update(broken_plugins(pm))
    return dict(sorted(registry.items.items()))


def _slug_matches_entry_point(plugin_name: str, task, entry_point_names: set) -> None:
    """An installed task package's entry point is named after its slug, so `--tasks NAME`
    and the warning about a broken package speak of the same thing."""
    from sb.errors import TaskError
    if plugin_name in entry_point_names and plugin_name != task.slug:
        raise TaskError(f"{task.package}: entry point {plugin_name!r} does not match the slug {task.slug!r}")


def select_tasks(tasks: dict, slugs=None, suite=None, tier="all", set_name=None, broken: dict | None = None,
                 names_must_match: bool = False) -> list:
    """Tasks named (unknown names are an error), else those matching every filter. With
    `names_must_match` (sb run, whose results record the set) a named task outside a filter
    given beside the names is an error; otherwise the names win."""
    if slugs:
        unknown = [s for s in slugs if s not in tasks]
        for slug in unknown:
            if broken and slug in broken:
                from sb.errors import Unavailable
                raise Unavailable(f"task {slug!r} cannot be loaded: {broken[slug]}")
        if unknown:
            raise SbError(f"unknown task {unknown[0]!r} (see `sb list`)")
        chosen = [tasks[s] for s in slugs]
    else:
        chosen = list(tasks.values())
    if tier not in TIER_CHOICES:
        raise SbError(f"unknown tier {tier!r}; choose one of: {', '.join(TIER_CHOICES)}")
    sets, suites = sorted({t.meta.frozen_set for t in tasks.values()}), sorted({t.meta.suite for t in tasks.values()})
    if set_name is not None and set_name not in sets:
        raise SbError(f"unknown set {set_name!r}; choose one of: {', '.join(sets)}")
    if suite is not None and suite not in suites:
        raise SbError(f"unknown suite {suite!r}; choose one of: {', '.join(suites)}")
    if slugs and names_must_match:
        _check_names_match(chosen, suite, tier, set_name)
    return [t for t in chosen if _matches(t, suite, tier, set_name) or slugs]


def _check_names_match(chosen: list, suite, tier, set_name) -> None:
    for task in chosen:
        for option, wanted, has in (("--set", set_name, task.meta.frozen_set), ("--suite", suite, task.meta.suite),
                                    ("--tier", None if tier == "all" else tier, task.meta.tier)):
            if wanted is not None and has != wanted:
                raise SbError(f"task {task.slug!r} is in {option[2:]} {has!r}, not {wanted!r}: drop {option}, or "
                              f"name only tasks of {option[2:]} {wanted!r}")


def _matches(task: Task, suite, tier, set_name) -> bool:
    return ((suite is None or task.meta.suite == suite)
            and (tier == "all" or task.meta.tier == tier)
            and (set_name is None or task.meta.frozen_set == set_name))


def task_row(task: Task) -> dict:
    """The `sb list --json` object for one task."""
    m = task.meta
    return {"slug": m.slug, "version": m.version, "suite": m.suite, "category": m.category, "kind": m.kind,
            "tier": m.tier, "accelerator": m.accelerator, "difficulty": m.difficulty,
            "time_limit_s": m.time_limit_s, "deps": list(m.deps), "set": m.frozen_set,
            "calibration": [vars(c) for c in m.calibration], "probes": m.probes, "package": task.package,
            "screen": [screen_row(s) for s in m.screen]}


def screen_row(screen) -> dict:
    return {"date": screen.date, "protocol": screen.protocol, "solves": screen.solves, "passed": screen.passed,
            "failures": [list(ids) for ids in screen.failures]}
