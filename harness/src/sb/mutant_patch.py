"""A hand mutant stored as its difference from the reference: a small patch file.

`mutants/<name>.patch` is a unified diff of the reference with no context lines, headed by
its verdict and description, so a wrong version reads as the lines it changes:

    caught: subtracts the slice max in place, so the caller's array comes back shifted
    --- a/softmax.py
    +++ b/softmax.py
    @@ -20 +20,2 @@
    -    shifted = x - m
    +    shifted = x
    +    shifted -= m

A mutant expected to survive says so, with a second header line `reason: ...`. The text
before the first `--- ` line is the header (git apply and patch(1) skip it too). Applying
is strict: every removed line must be exactly the reference's line at the stated number,
so a patch made against an older reference fails to load, naming the file and line,
instead of grading some third version nobody wrote. `rebase` (`sb mutants SLUG --rebase`)
moves such a patch onto the changed reference where the lines it removes can be found.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

FileSet = dict[str, bytes]
VERDICTS = ("caught", "survives")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"


class PatchError(ValueError):
    """A patch that does not parse or does not apply; the message says where."""


class StalePatch(PatchError):
    """A well-formed patch whose lines are not where it says: made against another version
    of the reference (`rebase` may move it)."""


@dataclass(frozen=True)
class MutantPatch:
    expected: str
    description: str
    reason: str
    diff: str


def make_patch(expected: str, description: str, reference: FileSet, files: FileSet, reason: str = "") -> str:
    """The patch file text turning `reference` into `reference` overlaid with `files`."""
    return header(expected, description, reason) + file_diffs(reference, files)


def header(expected: str, description: str, reason: str = "") -> str:
    """A patch file's header lines: its verdict and description, and a survivor's reason."""
    text = f"{expected}: {one_line(description)}\n"
    return text + (f"reason: {one_line(reason)}\n" if reason else "")


def file_diffs(reference: FileSet, files: FileSet) -> str:
    """Zero-context unified diffs of every file in `files` that differs from the reference."""
    chunks = []
    for name in sorted(files):
        old, new = reference.get(name), files[name]
        if old == new:
            continue
        chunks.append(_diff_one(name, old, new))
    if not chunks:
        raise PatchError("the files do not differ from the reference")
    return "".join(chunks)


def _diff_one(name: str, old: bytes | None, new: bytes) -> str:
    old_lines = lines_of(_text(old, name)) if old is not None else []
    new_lines = lines_of(_text(new, name))
    lines = difflib.unified_diff(old_lines, new_lines, "/dev/null" if old is None else f"a/{name}", f"b/{name}", n=0)
    out = []
    for line in lines:
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n" + _NO_NEWLINE + "\n")
    return "".join(out)


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PatchError(f"{name}: not UTF-8; a mutant patch holds text files only") from None


def lines_of(text: str) -> list:
    """Lines split at '\\n' only, each keeping it (str.splitlines also splits at form feeds)."""
    return [line for line in re.split(r"(?<=\n)", text) if line]


def one_line(text: str) -> str:
    """A header line: line breaks shown as the escapes \\r and \\n, other spaces kept."""
    return str(text).strip().replace("\r", "\\r").replace("\n", "\\n")


def parse(text: str) -> MutantPatch:
    """The header and the diff of a patch file's text."""
    head, sep, rest = text.partition("\n--- ")
    if not sep:
        raise PatchError("no '--- a/FILE' line: a mutant patch is a header, then a unified diff")
    diff = "--- " + rest
    fields = {}
    for number, line in enumerate(head.split("\n"), 1):  # one_line escapes \r and \n only
        key, colon, value = line.partition(":")
        if not colon or key.strip() not in (*VERDICTS, "reason") or key.strip() in fields:
            raise PatchError(f"header line {number}: expected 'caught: DESCRIPTION' or 'survives: DESCRIPTION' "
                             "then, for survives, 'reason: WHY'")
        fields[key.strip()] = value.strip()
    verdicts = [v for v in VERDICTS if v in fields]
    if len(verdicts) != 1 or not fields[verdicts[0]]:
        raise PatchError("the header needs one line 'caught: DESCRIPTION' or 'survives: DESCRIPTION'")
    expected = verdicts[0]
    if expected == "survives" and not fields.get("reason"):
        raise PatchError("a mutant expected to survive needs a line 'reason: WHY'")
    return MutantPatch(expected, fields[expected], fields.get("reason", ""), diff)


def apply(reference: FileSet, diff: str) -> FileSet:
    """The files the diff changes, each as the reference's file with the hunks applied."""
    return _apply(reference, diff, None)


def rebase(reference: FileSet, diff: str) -> tuple[str, list[str]]:
    """The diff remade against a reference that changed since it was written, and one line
    per hunk that moved.

    Each hunk that removes lines goes to the one place, after the hunk before it, where
    exactly those lines now are. Two equal `return out` lines are told apart by nothing in a
    patch without context, so lines that appear more than once, like lines that appear
    nowhere, are a PatchError: that mutant must be made again. A hunk that only adds lines
    has nothing to place it by: it moves with its nearest neighbour in the same file, and
    its line says to check it."""
    moves: list[str] = []
    changed = _apply(reference, diff, moves)
    return file_diffs(reference, changed), moves


def insertions(diff: str) -> list[str]:
    """Where the diff's hunks that only add lines go (`softmax.py after line 12`): applied by
    their line numbers alone, with nothing in the patch to check the place."""
    found, name = [], ""
    for line in lines_of(diff):
        if line.startswith("+++ b/"):
            name = line[len("+++ b/"):].rstrip("\n")
        match = _HUNK.match(line)
        if match and match[2] == "0":
            found.append(f"{name} after line {match[1]}")
    return found


def _apply(reference: FileSet, diff: str, moves: list | None) -> FileSet:
    changed: FileSet = {}
    lines = lines_of(diff)
    i = 0
    while i < len(lines):
        if not lines[i].startswith("--- "):
            raise PatchError(f"diff line {i + 1}: expected '--- a/FILE', got {lines[i].rstrip()!r}")
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ b/"):
            raise PatchError(f"diff line {i + 2}: expected '+++ b/FILE'")
        name = lines[i + 1][len("+++ b/"):].rstrip("\n")
        old_name = lines[i][4:].rstrip("\n")
        if old_name != "/dev/null" and old_name != f"a/{name}":
            raise PatchError(f"diff line {i + 1}: renames are not supported ({old_name} -> b/{name})")
        if name in changed:
            raise PatchError(f"{name}: changed twice in one patch")
        base = reference.get(name) if old_name != "/dev/null" else None
        if old_name != "/dev/null" and base is None:
            raise PatchError(f"{name}: not a file of the reference")
        if i + 2 >= len(lines) or not lines[i + 2].startswith("@@"):
            raise PatchError(f"{name}: no hunk ('@@ -LINE +LINE @@') after its header")
        i, hunks = _hunks(name, lines, i + 2)
        old = lines_of(_text(base, name)) if base is not None else []
        starts = _strict_starts(name, old, hunks) if moves is None else _moved_starts(name, old, hunks, moves)
        changed[name] = _patched(old, hunks, starts).encode("utf-8")
    if not changed:
        raise PatchError("the diff changes no file")
    return changed


@dataclass(frozen=True)
class _Hunk:
    start: int       # the line number its header names
    first: int       # the index of the first old line it replaces (a pure insertion: the line it follows + 1)
    removed: tuple
    added: tuple


def _hunks(name: str, lines: list, i: int) -> tuple[int, list]:
    hunks = []
    while i < len(lines) and lines[i].startswith("@@"):
        match = _HUNK.match(lines[i])
        if not match:
            raise PatchError(f"{name}: bad hunk header {lines[i].rstrip()!r}")
        start, count = int(match[1]), int(match[2] if match[2] is not None else 1)
        added_count = int(match[4] if match[4] is not None else 1)
        i, removed, added = _hunk_body(name, lines, i + 1, count, added_count)
        hunks.append(_Hunk(start, start - 1 if count else start, tuple(removed), tuple(added)))
    return i, hunks


def _hunk_body(name: str, lines: list, i: int, removing: int, adding: int) -> tuple[int, list, list]:
    """The hunk's removed and added lines, read by the counts its header gives (so a removed
    line that itself starts with '-- ' is never taken for the next file's header)."""
    removed: list[str] = []
    added: list[str] = []
    while len(removed) < removing or len(added) < adding or (i < len(lines) and lines[i].startswith("\\")):
        if i >= len(lines):
            raise PatchError(f"{name}: the diff ends inside a hunk")
        line = lines[i]
        if line.startswith("\\"):
            target = added if added else removed
            if not target:
                raise PatchError(f"{name}: a 'No newline' marker follows nothing")
            target[-1] = target[-1].rstrip("\n")
        elif line[:1] == "-" and len(removed) < removing and not added:
            removed.append(line[1:])
        elif line[:1] == "+" and len(added) < adding:
            added.append(line[1:])
        else:
            raise PatchError(f"{name}: line {line.rstrip()!r} does not fit the hunk's counts")
        i += 1
    return i, removed, added


def _strict_starts(name: str, old: list, hunks: list) -> list:
    cursor = 0
    for hunk in hunks:
        if hunk.first < cursor or hunk.first > len(old):
            raise StalePatch(f"{name}: hunk at line {hunk.start} is out of order or past the end of the reference")
        if not _removes_at(old, hunk, hunk.first):
            raise StalePatch(f"{name}: line {hunk.start} of the reference is not what the patch removes "
                             "(made against another version of the reference?)")
        cursor = hunk.first + len(hunk.removed)
    return [hunk.first for hunk in hunks]


def _moved_starts(name: str, old: list, hunks: list, moves: list) -> list:
    """Where each hunk goes in a changed reference (rebase's search); each move noted."""
    starts: list = [None] * len(hunks)
    cursor = 0
    for n, hunk in enumerate(hunks):
        if not hunk.removed:
            continue
        places = [q for q in range(cursor, len(old) - len(hunk.removed) + 1) if _same_lines(old, hunk, q)]
        if not places:
            after = " after the hunks before it" if cursor else ""
            raise PatchError(f"{name}: the lines the hunk at line {hunk.start} removes are nowhere in the "
                             f"reference{after}; make this mutant again")
        if len(places) > 1:
            raise PatchError(f"{name}: the lines the hunk at line {hunk.start} removes are at lines "
                             f"{', '.join(str(q + 1) for q in places[:4])}: which one it meant cannot be known; "
                             "make this mutant again")
        at = places[0]
        if not _fits_the_end(old, hunk, at):
            raise PatchError(f"{name}: the hunk at line {hunk.start} ends the file without a newline, and at line "
                             f"{at + 1} the reference goes on; make this mutant again")
        starts[n], cursor = at, at + len(hunk.removed)
        if at != hunk.first:
            moves.append(f"{name}: the hunk at line {hunk.start} moved to line {at + 1}")
    located = [n for n, at in enumerate(starts) if at is not None]
    for n, hunk in enumerate(hunks):
        if starts[n] is None:
            starts[n] = _beside_neighbour(n, hunks, starts, located, len(old))
            if starts[n] != hunk.first:
                moves.append(f"{name}: the lines added after line {hunk.start} now follow line {starts[n]}, moved "
                             "with the hunk beside them (they remove nothing to place them by: check them)")
    return starts


def _beside_neighbour(n: int, hunks: list, starts: list, located: list, length: int) -> int:
    """Where a hunk that only adds lines goes: moved as its nearest placed neighbour (the one
    before it, else the one after), kept between the hunks around it."""
    before = [m for m in located if m < n]
    after = [m for m in located if m > n]
    neighbour = before[-1] if before else after[0] if after else None
    shift = starts[neighbour] - hunks[neighbour].first if neighbour is not None else 0
    low = starts[n - 1] + len(hunks[n - 1].removed) if n else 0
    high = starts[after[0]] if after else length
    return min(max(hunks[n].first + shift, low), high)


def _patched(old: list, hunks: list, starts: list) -> str:
    out, cursor = [], 0  # cursor: old lines already copied or consumed
    for hunk, at in zip(hunks, starts):
        if at < cursor or at > len(old):
            raise PatchError(f"hunk at line {hunk.start} is out of order or past the end of the reference")
        out.extend(old[cursor:at])
        out.extend(hunk.added)
        cursor = at + len(hunk.removed)
    out.extend(old[cursor:])
    return "".join(out)


def _removes_at(old: list, hunk: _Hunk, at: int) -> bool:
    """The hunk's removed lines are the reference's at `at`, and it fits the file's end there."""
    return _same_lines(old, hunk, at) and _fits_the_end(old, hunk, at)


def _same_lines(old: list, hunk: _Hunk, at: int) -> bool:
    window = old[at:at + len(hunk.removed)]
    return len(window) == len(hunk.removed) and [_strip(x) for x in window] == [_strip(x) for x in hunk.removed]


def _fits_the_end(old: list, hunk: _Hunk, at: int) -> bool:
    """A hunk whose last line has no newline (`\\ No newline at end of file`, either side)
    ends the file: anywhere else the next line would be glued to it."""
    ends_file = at + len(hunk.removed) == len(old)
    if hunk.removed and not hunk.removed[-1].endswith("\n") and not (ends_file and not old[-1].endswith("\n")):
        return False
    return not (hunk.added and not hunk.added[-1].endswith("\n") and not ends_file)


def _strip(line: str) -> str:
    return line.rstrip("\n")
