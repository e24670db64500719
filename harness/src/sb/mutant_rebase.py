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
    from sb.mutant_patch import PatchError
    patches = []
    for entry in task.mutant_entries():
        name = entry.name[:-len(".patch")]
        try:
            patches.append(_rebased(task, entry, name))
        except (PatchError, UnicodeDecodeError, OSError) as exc:
            patches.append(Rebased(name, "failed", problem=str(exc), path=str(entry)))
    return RebaseReport(task.slug, patches)


ADDS_ONLY = ("it only adds lines, so it applies wherever its line numbers now fall: nothing checks where "
             "they land; read its mutant (sb export --mutant) after a change above them")


def _rebased(task, entry, name: str) -> Rebased:
    from sb.mutant_patch import StalePatch, apply, header, parse, rebase
    from sb.results import write_text_atomic
    spec = parse(entry.read_text(encoding="utf-8"))
    try:
        apply(task.reference_files, spec.diff)
        adds_only = not any(line.startswith("-") and not line.startswith("--- ") for line in spec.diff.splitlines())
        return Rebased(name, "applies", [ADDS_ONLY] if adds_only else [], path=str(entry))
    except StalePatch:
        pass
    diff, moves = rebase(task.reference_files, spec.diff)
    if not isinstance(entry, Path):
        raise OSError(f"{task.package}/mutants is not a folder on disk (rebase an editable install or a checkout)")
    write_text_atomic(entry, header(spec.expected, spec.description, spec.reason) + diff,
                      mode=entry.stat().st_mode & 0o777)
    return Rebased(name, "moved", moves, path=str(entry))
