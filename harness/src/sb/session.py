"""The one object a command owns: its plugins, loaded once, and what is read from them.

The CLI starts one Session per command, which is then the process's `default_session()`
that `sb.api`, the Inspect integration and a Ray node use (built on first use where no
command runs). Everything that needs a registry (tasks, adapters, sandboxes, executors,
reporters) is handed the session's plugin manager, so no other code loads plugins, and a
command reads every task package once.
"""

from __future__ import annotations

import threading

from sb.plugins import PluginManager, load_plugins


class Session:
    """The plugins of one command and the installed tasks, read once each."""

    def __init__(self, pm: PluginManager | None = None):
        self._pm = pm
        self._plugins_lock = threading.Lock()
        self._lock = threading.Lock()
        self._tasks: dict | None = None
        self._some: dict = {}  # the tasks read one by one (`named`) while not all were read
        self._broken: dict = {}

    @property
    def pm(self) -> PluginManager:
        """The plugins, loaded on first use: `sb grade` starts its judge before it needs them
        (sb/grading/early.py), and a plugin that cannot be loaded stops the command with one line."""
        with self._plugins_lock:
            if self._pm is None:
                self._pm = load_plugins()
            return self._pm

    def tasks(self) -> dict:
        """slug -> Task for every installed task package (a malformed one is in `broken`)."""
        with self._lock:
            if self._tasks is None:
                from sb.catalog import load_tasks
                self._tasks = load_tasks(self.pm, broken=self._broken)
            return self._tasks

    def named(self, slugs) -> tuple[dict, dict]:
        """(slug -> Task, package -> why it is broken) for the tasks a command names. An
        installed task package's entry point is its slug, so only those packages are read
        (a command that names one task reads one); a name that is not an entry point
        reads them all, as `tasks()` does."""
        with self._lock:
            if self._tasks is None and set(slugs) <= self.pm.entry_point_names:
                wanted = set(slugs) - set(self._some) - set(self._broken)
                if wanted:
                    from sb.catalog import load_tasks
                    self._some.update(load_tasks(self.pm, broken=self._broken, only=wanted))
                return dict(self._some), {k: v for k, v in self._broken.items() if k in set(slugs)}
        return self.tasks(), self.broken

    @property
    def broken(self) -> dict:
        """package name -> why it could not be loaded, once `tasks()` has read them."""
        self.tasks()
        return dict(self._broken)

    def sandbox(self, name: str | None, trusted: bool = False):
        """The named sandbox. Unnamed: bwrap, or for trusted code only (the reference, the
        starter), none when bwrap cannot run here. An unusable one is a one-line SbError."""
        from sb.sandbox.base import available_sandboxes, choose_sandbox
        if name is None and trusted:
            sandboxes = available_sandboxes(self.pm)
            if "bwrap" in sandboxes and sandboxes["bwrap"].unavailable_reason():
                name = "none"
        return choose_sandbox(name, self.pm)


_default: Session | None = None
_default_lock = threading.Lock()


def default_session() -> Session:
    """The process's session: the running command's (the CLI starts a fresh one per command),
    or one built on first use by callers with no command of their own (sb.api, Inspect, a
    Ray node), so a process loads its plugins once."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Session()
        return _default


def start_new_session() -> Session:
    """A fresh session as the process's default: what the CLI does at each command."""
    global _default
    with _default_lock:
        _default = Session()
        return _default
