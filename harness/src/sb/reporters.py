"""Hand every finished draw to the registered reporters (the register_reporters hook).

A reporter publishes a results document elsewhere. Its failure is a one-line warning: the
results file is already written and is never lost because a dashboard was down. A reporter
marked `opt_in` (the built-in `inspect`) runs only when `sb run --report NAME[:ARG]` names
it; the others run after every run.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from sb.errors import SbError


class Reporter(ABC):
    """What the harness uses of a reporter (register it with the register_reporters hook)."""

    name: ClassVar[str] = ""
    opt_in: ClassVar[bool] = False       # runs only when named by --report
    wants_files: ClassVar[bool] = False  # is handed each task's files as it finishes (task_finished)

    @abstractmethod
    def report(self, doc: dict, path: Path) -> Path | None:
        """Publish one finished draw (`doc`, already written to `path`); raise to warn. Return
        the file it wrote, if any: `sb run` prints where it went."""

    def configured(self, argument: str | None) -> "Reporter":
        """The reporter `--report NAME[:ARGUMENT]` asks for; SbError for a bad argument, so a
        run stops before it costs anything."""
        if argument:
            raise SbError(f"reporter {self.name!r} takes no argument (got {argument!r})")
        return self

    def task_finished(self, entry: dict, doc: dict, files: dict) -> None:
        """One task of a run is graded: its entry, its draw's document and the declared files
        the model left ({name: bytes}). Called only on reporters that set `wants_files`."""


def _registry(pm):
    from sb.plugins import collect
    return collect(pm, "register_reporters", "reporter", lambda r: r.name).items


def chosen_reporters(specs, pm) -> dict:
    """name -> reporter: every one that is not opt-in, and those `specs` ("NAME" or
    "NAME:ARG") name, configured. An unknown name is an SbError listing the known ones."""
    registry = _registry(pm)
    chosen = {name: r for name, r in registry.items() if not r.opt_in}
    for spec in specs or ():
        name, _, argument = spec.partition(":")
        if name not in registry:
            raise SbError(f"unknown reporter {name!r}; choose one of: {', '.join(sorted(registry)) or 'none'}")
        chosen[name] = registry[name].configured(argument or None)
    return chosen


def notify_reporters(runs: list, pm, chosen: dict | None = None, on_written=None) -> list:
    """Call reporter.report(doc, path) for every (doc, path) and every chosen reporter (by
    default those that are not opt-in); return warnings, never raise. `on_written(name,
    path)` hears of each file a reporter says it wrote."""
    reporters = chosen if chosen is not None else chosen_reporters((), pm)
    warnings = []
    for name, reporter in reporters.items():
        for doc, path in runs:
            try:
                written = reporter.report(doc, path)
            except Exception as exc:  # noqa: BLE001 - a third party's bug must not cost a finished sweep
                warnings.append(f"reporter {name!r} failed on {path}: {type(exc).__name__}: {exc}")
                continue
            if written is not None and on_written is not None:
                on_written(name, written)
    return warnings


class RunReporters:
    """The reporters of one `sb run`, chosen and configured before any task runs. A reporter
    that wants the model's files gets them as each task finishes, read from the run's kept
    working folders (a scratch folder, removed after reporting, when --keep is not given)."""

    def __init__(self, specs, pm, keep_dir: Path | None):
        self.pm = pm
        self.reporters = chosen_reporters(specs, pm)
        self.wanting = [r for r in self.reporters.values() if r.wants_files]
        self._scratch: str | None = None
        if keep_dir is None and self.wanting:
            from sb.interrupt import lasting_directory  # marked: a reap never takes it for an abandoned one
            self._scratch = lasting_directory("sb-report-files-")
            keep_dir = Path(self._scratch)
        self.keep_dir = keep_dir

    def watch(self, on_task, tasks: list):
        """`on_task` (the progress printer, or None), also handing each task's files over."""
        if not self.wanting:
            return on_task
        declared = {task.slug: task.starter_files for task in tasks}

        def watched(entry: dict, doc: dict, total: int) -> None:
            if on_task:
                on_task(entry, doc, total)
            from sb.solver_output import read_solver_output
            folder = self._kept_folder(entry, doc)
            graded = entry.get("evidence") and folder.is_dir()  # else the folder holds no answer (or a past one)
            files = read_solver_output(folder, declared.get(entry["slug"], ())).files if graded else {}
            for reporter in self.wanting:
                reporter.task_finished(entry, doc, files)
        return watched

    def _kept_folder(self, entry: dict, doc: dict) -> Path:
        """The attempt's working folder under --keep: one folder per draw when several draws
        (models, --repeat) ran at once, else one per task."""
        from sb.names import safe_name
        assert self.keep_dir is not None  # set whenever a reporter wants files, the one caller's case
        per_draw = Path(self.keep_dir) / f"{safe_name(doc['model'], 60)}-d{doc['draw']}" / entry["slug"]
        return per_draw if per_draw.is_dir() else Path(self.keep_dir) / entry["slug"]

    def notify(self, runs: list, on_written=None) -> list:
        try:
            return notify_reporters(runs, self.pm, self.reporters, on_written)
        finally:
            if self._scratch is not None:
                from sb.interrupt import remove_directory
                remove_directory(self._scratch)
