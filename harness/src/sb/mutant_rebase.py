"""`sb mutants --rebase`: hand mutants moved onto a reference that changed under them.

A mutant patch is applied strictly, so one line added at the top of the reference stops
every patch below it from loading. Rebasing rewrites, in the task's own folder, each patch
that no longer applies, with every hunk placed where the lines it removes now are
(sb.mutant_patch.rebase); a patch that applies is left byte for byte. The verdicts are not
re-checked here: `sb mutants SLUG` afterwards grades the moved mutants as always.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Rebased:
    """One patch file's fate: `applies` (left as it is), `moved`, or `failed` with why; its
    `moves` (or, for a patch that only adds lines, the warning that nothing placed them)."""

    name: str
    state: str
    moves: list = field(default_factory=list)
    problem: str = ""
    path: str = ""


@dataclass
class RebaseReport:
    slug: str
    patches: list

    @property
    def ok(self) -> bool:
        return all(p.state != "failed" for p in self.patches)

    def to_dict(self) -> dict:
        return {"slug": self.slug, "ok": self.ok,
                "patches": [{"name": p.name, "state": p.state, "moves": p.moves, "problem": p.problem,
                             "path": p.path} for p in self.patches]}


def rebase_task(task) -> RebaseReport:
    """Every hand mutant patch of `task` checked against today's reference; each one that
    no longer applies rewritten in place, when it can be placed."""
    from sb.errors import TaskError
    from sb.mutant_patch import PatchError
    patches = []
    try:
        entries = task.mutant_entries()
    except TaskError as exc:  # something other than a patch in mutants/: this task only
        return RebaseReport(task.slug, [Rebased("mutants/", "failed", problem=str(exc))])
    for entry in entries:
        name = entry.name[:-len(".patch")]
        try:
            patches.append(_rebased(task, entry, name))
        except (PatchError, UnicodeDecodeError, OSError) as exc:
            patches.append(Rebased(name, "failed", problem=str(exc), path=str(entry)))
    return RebaseReport(task.slug, patches)


def _rebased(task, entry, name: str) -> Rebased:
    from sb.mutant_patch import StalePatch, apply, header, insertions, parse, rebase
    from sb.results import write_text_atomic
    spec = parse(entry.read_text(encoding="utf-8"))
    try:
        apply(task.reference_files, spec.diff)
        unchecked = [f"{where}: lines only added, placed by that number alone, so nothing checks where they "
                     "land after a change above them: read the mutant (sb export --mutant)"
                     for where in insertions(spec.diff)]
        return Rebased(name, "applies", unchecked, path=str(entry))
    except StalePatch:
        pass
    diff, moves = rebase(task.reference_files, spec.diff)
    if not isinstance(entry, Path):
        raise OSError(f"{task.package}/mutants is not a folder on disk (rebase an editable install or a checkout)")
    write_text_atomic(entry, header(spec.expected, spec.description, spec.reason) + diff,
                      mode=entry.stat().st_mode & 0o777)
    return Rebased(name, "moved", moves, path=str(entry))
