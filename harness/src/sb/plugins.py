"""The plugin manager: built-ins and installed packages, loaded on demand.

Nothing registers at import time. `load_plugins()` builds a fresh manager each call; a
command's `sb.session.Session` calls it once and hands its manager to everything else (tests
get their own), registers DEFAULT_PLUGINS, then every entry point of the group `sb`. Set
SB_LOAD_PLUGINS to a comma-separated list of entry-point names to load only those
(an empty value loads none beyond the built-ins).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from importlib.metadata import entry_points

import pluggy

from sb import hookspecs
from sb.errors import PluginError, SbError

ENTRY_POINT_GROUP = "sb"
DEFAULT_PLUGINS = (
    "sb.models.builtin",
    "sb.models.anthropic",
    "sb.models.openai",
    "sb.models.cmd",
    "sb.sandbox.builtin",
    "sb.executors.local",
    "sb.executors.ray",
    "sb.report.inspect_log",
)


class PluginManager(pluggy.PluginManager):
    """pluggy's manager with what sb records while loading, as declared attributes."""

    def __init__(self, project_name: str = ENTRY_POINT_GROUP) -> None:
        super().__init__(project_name)
        self.sources: dict[str, str] = {}        # entry-point name -> the distribution that provided it
        self.unnamed: dict = {}                   # entry-point name -> its entry point (sources: read when asked)
        self.entry_point_names: set[str] = set()  # the plugins registered from entry points
        self.broken: dict[str, str] = {}          # entry-point name -> why that plugin could not be used


def load_plugins() -> PluginManager:
    """A new PluginManager with the built-ins and the allowed entry points registered."""
    pm = PluginManager(ENTRY_POINT_GROUP)
    pm.add_hookspecs(hookspecs)
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    for ep in _allowed_entry_points():
        _register_entry_point(pm, ep)
    pm.check_pending()
    return pm


def _allowed_entry_points():
    wanted = os.environ.get("SB_LOAD_PLUGINS")
    names = None if wanted is None else {n.strip() for n in wanted.split(",") if n.strip()}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if names is None or ep.name in names:
            yield ep


def allowed_entry_point(name: str):
    """The one entry point called `name` that load_plugins() would load, else None."""
    found = [ep for ep in _allowed_entry_points() if ep.name == name]
    return found[0] if len(found) == 1 else None


def _register_entry_point(pm: PluginManager, ep) -> None:
    if pm.get_plugin(ep.name) is not None:
        return
    try:
        plugin = ep.load()
    except Exception as exc:  # noqa: BLE001 - one broken package never blocks the others: it is reported, not loaded
        broken_plugins(pm)[ep.name] = f"plugin {ep.name!r} ({_dist_name(ep)}) failed to load: {_first_line(exc)}"
        return
    pm.register(plugin, name=ep.name)
    pm.unnamed[ep.name] = ep  # its distribution's name is read from metadata only when a message needs it
    pm.entry_point_names.add(ep.name)


def broken_plugins(pm: PluginManager) -> dict[str, str]:
    """Entry-point name -> one line saying why that plugin could not be used."""
    return pm.broken


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _dist_name(ep) -> str:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else ep.value


def plugin_source(pm: PluginManager, plugin) -> str:
    """The distribution that provided `plugin`, or 'scratchbench' for built-ins."""
    name = pm.get_name(plugin)
    if name is None:
        return "scratchbench"
    entry_point = pm.unnamed.get(name)
    if name not in pm.sources and entry_point is not None:
        pm.sources[name] = _dist_name(entry_point)
    return pm.sources.get(name, "scratchbench")


@dataclass
class Registry:
    """Named things collected from one hook; a second registration of a name raises."""

    kind: str
    items: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict)

    def add(self, name: str, item, source: str) -> None:
        if name in self.items:
            raise PluginError(
                f"duplicate {self.kind} {name!r}: registered by {self.sources[name]} and {source}"
            )
        self.items[name] = item
        self.sources[name] = source


def choose(pm: PluginManager, hook_name: str, kind: str, name: str | None, default: str,
           label: str | None = None, hint: str = ""):
    """The registered class called `name` (or `default`) of a kind whose classes say why
    they cannot run (`unavailable_reason()`: sandboxes, executors), or the one-line SbError
    a user sees for an unknown or unusable one: `label` is what the user called it (the
    option's word, e.g. isolation), `hint` is added to the second."""
    classes = collect(pm, hook_name, kind, lambda cls: cls.name).items
    label, chosen = label or kind, name or default
    if chosen not in classes:
        raise SbError(f"unknown {label} {chosen!r}; choose one of: {', '.join(sorted(classes))}")
    reason = classes[chosen].unavailable_reason()
    if reason:
        raise SbError(f"{label} {chosen!r} cannot run here: {reason}{hint}")
    return classes[chosen]


def collect(pm: PluginManager, hook_name: str, kind: str, name_of, check=None, only=None) -> Registry:
    """Call one register_* hook plugin by plugin, so each registration knows its source. A
    plugin whose hook raises (a malformed task package) is set aside in `broken_plugins`
    and the others are still collected; `check(plugin_name, item)` may refuse an item.
    `only`: the names of the plugins to call (default: all)."""
    registry = Registry(kind)
    for impl in getattr(pm.hook, hook_name).get_hookimpls():
        name = impl.plugin_name
        if only is not None and name not in only:
            continue
        source = plugin_source(pm, impl.plugin)
        found: list = []
        try:
            impl.function(register=found.append)
            for item in found:
                if check:
                    check(name, item)
        except PluginError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, not loaded
            broken_plugins(pm)[name] = f"{source}: {exc}" if isinstance(exc, SbError) else \
                f"{source}: {_first_line(exc)}"
            continue
        for item in found:
            registry.add(name_of(item), item, source)
    return registry
