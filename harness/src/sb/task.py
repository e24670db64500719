"""A task as read from its package: metadata, prompt, starter, hidden tests, reference, mutants.

Everything is read through importlib.resources, so an installed wheel works exactly as an
editable checkout does. File sets are kept as {relative path: bytes} so grading never
needs to know where a package lives on disk.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from importlib.resources.abc import Traversable

import yaml

from sb.errors import TaskError
from sb.meta import Meta, parse_meta

FileSet = dict[str, bytes]
SKIPPED_NAMES = {"__pycache__", ".DS_Store", ".pytest_cache"}


@dataclass(frozen=True)
class Mutant:
    """A plausible wrong version: the reference with `files` replacing same-named files
    (the files its patch changes, applied when the task is read)."""

    name: str
    description: str
    expected: str  # "caught" or "survives"
    reason: str
    files: FileSet = field(repr=False)
    patch: str = field(default="", repr=False)


@dataclass(frozen=True, eq=False)
class Task:
    meta: Meta
    package: str
    root: Traversable = field(repr=False)

    @property
    def slug(self) -> str:
        return self.meta.slug

    @cached_property
    def prompt(self) -> str:
        return self.root.joinpath("prompt.md").read_text(encoding="utf-8")

    @cached_property
    def starter_files(self) -> FileSet:
        return read_tree(self.root.joinpath("starter"))

    @property
    def declared_files(self) -> tuple[str, ...]:
        """The only file names ever taken from a solver's output."""
        return tuple(sorted(self.starter_files))

    @cached_property
    def reference_files(self) -> FileSet:
        """reference/ over the starter: a starter file the reference leaves as given (the
        module a test-writing task shows) is graded exactly as a solver who keeps it."""
        return {**self.starter_files, **read_tree(self.root.joinpath("reference"))}

    @cached_property
    def hidden_test_files(self) -> FileSet:
        return read_tree(self.root.joinpath("hidden_tests"))

    @cached_property
    def mutants(self) -> tuple[Mutant, ...]:
        """Every hand mutant; a TaskError naming every patch that does not load, not just the first."""
        found, problems = [], []
        for entry in self.mutant_entries():
            try:
                found.append(self._read_patch(entry))
            except TaskError as exc:
                problems.append(exc)
        if problems:
            shown = "; ".join(map(str, problems[:3])) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
            hint = f" ({self._rebase_hint})" if any(isinstance(p, StaleMutant) for p in problems) else ""
            count = f"{len(problems)} of {len(found) + len(problems)}"
            raise TaskError(f"{count} mutant patches do not load: {shown}{hint}")
        return tuple(found)

    def mutant_entries(self) -> list[Traversable]:
        """mutants/*.patch in name order; anything else there is a TaskError."""
        folder = self.root.joinpath("mutants")
        if not folder.is_dir():
            return []
        entries = sorted((e for e in folder.iterdir() if e.name not in SKIPPED_NAMES), key=lambda e: e.name)
        for entry in entries:
            if not (entry.is_file() and entry.name.endswith(".patch")):
                raise TaskError(f"{self.package}/mutants/{entry.name}: a mutant is a NAME.patch file "
                                "(tools/mutants_to_patches.py converts a folder holding whole files)")
        return entries

    def mutant(self, name: str) -> Mutant:
        """One hand mutant, reading only its own patch: another that no longer loads does not stop it."""
        for entry in self.mutant_entries():
            if entry.name == f"{name}.patch":
                try:
                    return self._read_patch(entry)
                except StaleMutant as exc:
                    raise TaskError(f"{exc} ({self._rebase_hint})") from None
        raise TaskError(f"{self.package}: no mutant named {name!r}")

    @property
    def _rebase_hint(self) -> str:
        return (f"after a change to the reference, sb mutants {self.slug} --rebase moves a patch whose lines moved; "
                "one whose lines changed is made again")

    def mutant_solution(self, mutant: Mutant) -> FileSet:
        return {**self.reference_files, **mutant.files}

    @cached_property
    def content_hash(self) -> str:
        """A hash of what defines the task: prompt, starter, hidden tests, reference, declared
        dependencies. A change to any of them without a version bump is a different task
        under the same name, which `sb validate` and the reports refuse to pool."""
        digest = hashlib.sha256(b"sb-task-v1\0" + self.prompt.encode("utf-8"))
        digest.update(("deps:" + ",".join(self.meta.deps)).encode())
        for label, files in (("t", self.hidden_test_files), ("r", self.reference_files), ("s", self.starter_files)):
            for name in sorted(files):
                digest.update(f"{label}:{name}:".encode() + hashlib.sha256(files[name]).digest())
        return digest.hexdigest()[:16]

    @cached_property
    def contract(self) -> tuple["Clause", ...]:
        """contract.yaml: each normative sentence of prompt.md and the tests that enforce it."""
        where = f"{self.package}/contract.yaml"
        spec = self._yaml("contract.yaml")
        if spec is None:
            return ()
        if not isinstance(spec, list):
            raise TaskError(f"{where}: must be a list of {{clause, tests}} entries")
        return tuple(_clause(entry, f"{where}: entry {i + 1}") for i, entry in enumerate(spec))

    @property
    def equivalent_mutants(self) -> dict[str, str]:
        """equivalent_mutants.yaml: generated mutants whose behaviour the prompt allows, with why."""
        return self._equivalents["id"]

    @property
    def equivalent_files(self) -> dict[str, str]:
        """equivalent_mutants.yaml's `file:` entries: files no change to which can change a
        verdict (a test-writing task's shown module, never run), every mutant of them with why."""
        return self._equivalents["file"]

    def equivalent_reason(self, mutant_id: str, file: str) -> str | None:
        """Why a generated mutant is equivalent (its own entry, else its file's), or None."""
        return self.equivalent_mutants.get(mutant_id) or self.equivalent_files.get(file)

    @cached_property
    def _equivalents(self) -> dict[str, dict[str, str]]:
        where = f"{self.package}/equivalent_mutants.yaml"
        spec = self._yaml("equivalent_mutants.yaml") or []
        if not isinstance(spec, list):
            raise TaskError(f"{where}: must be a list of {{id, reason}} or {{file, reason}} entries")
        found: dict[str, dict[str, str]] = {"id": {}, "file": {}}
        for i, entry in enumerate(spec):
            if not isinstance(entry, dict) or set(entry) not in ({"id", "reason"}, {"file", "reason"}):
                raise TaskError(f"{where}: entry {i + 1}: needs exactly the keys id and reason, or file and reason")
            if not str(entry["reason"]).strip():
                raise TaskError(f"{where}: entry {i + 1}: field 'reason': must be a non-empty string")
            key = "id" if "id" in entry else "file"
            found[key][str(entry[key])] = str(entry["reason"]).strip()
        return found

    def _yaml(self, name: str):
        entry = self.root.joinpath(name)
        if not entry.is_file():
            return None
        try:
            return yaml.safe_load(entry.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise TaskError(f"{self.package}/{name}: not valid YAML: {str(exc).splitlines()[0]}") from None

    def _read_patch(self, entry: Traversable) -> Mutant:
        """mutants/NAME.patch: the mutant as its difference from the reference (sb/mutant_patch.py)."""
        from sb import mutant_patch
        where, name = f"{self.package}/mutants/{entry.name}", entry.name[:-len(".patch")]
        try:
            spec = mutant_patch.parse(_utf8(entry, where))
            files = mutant_patch.apply(self.reference_files, spec.diff)
        except mutant_patch.StalePatch as exc:
            raise StaleMutant(f"{where}: {exc}") from None
        except mutant_patch.PatchError as exc:
            raise TaskError(f"{where}: {exc}") from None
        return Mutant(name, spec.description, spec.expected, spec.reason, files, spec.diff)


class StaleMutant(TaskError):
    """A mutant patch made against another version of the reference."""


@dataclass(frozen=True)
class Clause:
    """One rule of the prompt and the hidden test ids (or test names, for every variant of a
    parametrised test) that fail when a solution breaks it. `trusted`, when set, says why a
    pass does not prove the rule: its tests read an observation made in the solution's own
    process, which a solution aimed at the probe can forge. Declared, so that `sb validate`
    and docs/sandbox.md say it. A rule no test observes has no place in a contract: every
    clause names at least one test, trusted or not."""

    clause: str
    tests: tuple
    trusted: str = ""


def _clause(entry, where: str) -> Clause:
    if not isinstance(entry, dict) or not {"clause", "tests"} <= set(entry) <= {"clause", "tests", "trusted"}:
        raise TaskError(f"{where}: needs the keys clause and tests (and trusted, optionally), no others")
    tests, trusted = entry["tests"], entry.get("trusted", "")
    if not isinstance(entry["clause"], str) or not entry["clause"].strip():
        raise TaskError(f"{where}: field 'clause': must be a non-empty string")
    if "trusted" in entry and (not isinstance(trusted, str) or not trusted.strip()):
        raise TaskError(f"{where}: field 'trusted': must say, in a non-empty string, "
                        "why a pass does not prove the rule")
    if not isinstance(tests, list) or not all(isinstance(t, str) and t for t in tests) or not tests:
        raise TaskError(f"{where}: field 'tests': must list at least one test id (a rule no test observes "
                        "needs a test before it can be in the contract)")
    return Clause(entry["clause"].strip(), tuple(tests), trusted.strip())


def walk_tree(folder: Traversable, prefix: str = ""):
    """(relative posix path, entry) for every file under `folder`, caches skipped."""
    if not folder.is_dir():
        return
    for entry in folder.iterdir():
        if entry.name in SKIPPED_NAMES or entry.name.endswith(".pyc"):
            continue
        path = f"{prefix}{entry.name}"
        if entry.is_dir():
            yield from walk_tree(entry, path + "/")
        else:
            yield path, entry


def read_tree(folder: Traversable) -> FileSet:
    """Every file under `folder` as {relative posix path: bytes}."""
    return {path: entry.read_bytes() for path, entry in walk_tree(folder)}


def load_packaged_task(package: str) -> Task:
    """Read and check the task shipped as package data of `package` (see docs/task-format.md)."""
    return _load(resources.files(package), package)


def load_task_dir(folder, package: str | None = None) -> Task:
    """Read a task from a plain folder laid out like a task package (authoring and tests)."""
    from pathlib import Path
    root = Path(folder)
    return _load(root, package or root.name)


def _load(root: Traversable, package: str) -> Task:
    """The one loader behind both: meta.yaml parsed and the layout checked, from a package
    or a folder alike (both are Traversables)."""
    meta_file = root.joinpath("meta.yaml")
    if not meta_file.is_file():
        raise TaskError(f"{package}/meta.yaml: missing")
    task = Task(parse_meta(_utf8(meta_file, f"{package}/meta.yaml"), f"{package}/meta.yaml"), package, root)
    _check_layout(task)
    return task


def _utf8(entry, where: str) -> str:
    try:
        return entry.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TaskError(f"{where}: not UTF-8 (byte {exc.start})") from None


def _check_layout(task: Task) -> None:
    """Names only, no contents: loading every task must stay cheap for `sb list`."""
    pkg = task.package
    if not task.root.joinpath("prompt.md").is_file():
        raise TaskError(f"{pkg}/prompt.md: missing")
    starter = tree_names(task.root.joinpath("starter"))
    if not starter:
        raise TaskError(f"{pkg}/starter: missing or empty (the starter declares the solution's files)")
    if not tree_names(task.root.joinpath("reference")):
        raise TaskError(f"{pkg}/reference: missing or empty (a correct solution; a starter file it keeps as given "
                        "may be left out)")
    if not any(n.rsplit("/", 1)[-1].startswith("test_") for n in tree_names(task.root.joinpath("hidden_tests"))):
        raise TaskError(f"{pkg}/hidden_tests: no test_*.py file")
    shadowing = _shadowing_modules(starter, task.meta.deps)
    if shadowing:
        raise TaskError(f"{pkg}/starter: {shadowing[0]!r} is also the name of a module the grading imports (the "
                        "standard library's, a dependency's or the harness's); name the solution's module otherwise")


# What the judge and the worker import themselves, besides the standard library and a task's
# deps: a solution module of one of these names would be served in its place, or not, depending
# on whether the judge imported it before the solution's hook (a warm judge preimports them).
GRADING_MODULES = frozenset({"pytest", "_pytest", "pluggy", "iniconfig", "packaging", "numpy", "torch", "triton",
                             "sb", "_wire"})


def _shadowing_modules(starter_names: set, deps) -> list:
    """The starter's top-level module names that are also modules the grading imports."""
    import sys
    tops = {name.split("/")[0].removesuffix(".py") for name in starter_names if "/" in name or name.endswith(".py")}
    taken = set(sys.stdlib_module_names) | GRADING_MODULES | set(deps)
    return sorted(tops & taken)


def tree_names(folder: Traversable) -> set:
    return {path for path, _ in walk_tree(folder)}
