"""The lock's inputs and its check.

The locks (locks/laptop.txt, locks/dev.txt) pin every third-party distribution with its
hashes; the workspace's own packages (the harness and one per task) are not in them: they
are installed editable from the working tree with --no-deps, so nothing they ask for is
resolved at install time. This file says what each tier asks for and checks that its lock
satisfies it:

  python tools/check_lock.py                 fail, one line per problem, when a pyproject (the
                                             harness's or any task's) asks for something a lock
                                             does not satisfy
  python tools/check_lock.py --input TIER    the requirements uv compiles TIER's lock from
                                             (tools/lock.sh writes them to a temporary file)
  python tools/check_lock.py --extras TIER   the header line recording the extras the lock holds

A tier is the harness with some of its extras, every task package, and a hand-kept pins
file (locks/TIER.in). laptop is what `make run` needs; dev is laptop plus every harness
extra, every integrations/* package and locks/dev.in: what `make test` needs.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / "locks"
RELOCK = "bash tools/lock.sh"
LAPTOP_EXTRAS = ("report", "speed")
TIERS = ("laptop", "dev")
EXTRAS_HEADER = "# sb-lock-extras:"
SDISTS_HEADER = "# sb-lock-sdists:"


def _pyproject(path: Path) -> dict:
    return tomllib.loads(path.read_text())["project"]


def members(root: Path = ROOT, tier: str = "dev") -> list[Path]:
    """The workspace's packages: the harness first, then every task with a pyproject, then (in
    the dev tier) every integration (integrations/*: sb-inspect), which the tests install."""
    found = [root / "harness"] + sorted(p.parent for p in (root / "tasks").glob("*/pyproject.toml"))
    if tier == "dev":
        found += sorted(p.parent for p in (root / "integrations").glob("*/pyproject.toml"))
    return found


def harness_extras(tier: str, root: Path = ROOT) -> list[str]:
    extras = sorted(_pyproject(root / "harness" / "pyproject.toml").get("optional-dependencies", {}))
    return [e for e in extras if e in LAPTOP_EXTRAS] if tier == "laptop" else extras


def pin_files(tier: str, root: Path = ROOT) -> list[Path]:
    return [root / "locks" / "laptop.in"] + ([root / "locks" / "dev.in"] if tier == "dev" else [])


def workspace_names(root: Path = ROOT) -> set[str]:
    return {canonicalize_name(_pyproject(m / "pyproject.toml")["name"]) for m in members(root)}


def asked(tier: str, root: Path = ROOT) -> list[tuple[str, Requirement]]:
    """(where, requirement) for everything the tier's pyprojects and pins files ask for."""
    out = []
    for member in members(root, tier):
        project = _pyproject(member / "pyproject.toml")
        where = str((member / "pyproject.toml").relative_to(root))
        out += [(where, Requirement(r)) for r in project.get("dependencies", [])]
        if member.name == "harness":
            for extra in harness_extras(tier, root):
                out += [(f"{where} [{extra}]", Requirement(r))
                        for r in project.get("optional-dependencies", {})[extra]]
    for pins in pin_files(tier, root):
        for line in pins.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                out.append((str(pins.relative_to(root)), Requirement(line)))
    return out


def input_lines(tier: str, root: Path = ROOT) -> list[str]:
    """What uv compiles the tier from; paths relative to the repository root (lock.sh runs there)."""
    extras = harness_extras(tier, root)
    lines = [f"-r {p.relative_to(root)}" for p in pin_files(tier, root)]
    lines.append(f"-e ./harness[{','.join(extras)}]" if extras else "-e ./harness")
    lines += [f"-e ./{m.relative_to(root)}" for m in members(root, tier)[1:]]
    return lines


def extras_line(tier: str, root: Path = ROOT) -> str:
    """Which extras of which third-party package the lock was compiled with."""
    ws = workspace_names(root)
    found: dict[str, set[str]] = {}
    for _, req in asked(tier, root):
        if req.extras and canonicalize_name(req.name) not in ws:
            found.setdefault(canonicalize_name(req.name), set()).update(req.extras)
    return EXTRAS_HEADER + "".join(f" {n}[{','.join(sorted(e))}]" for n, e in sorted(found.items()))


_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;\\]+)")


def read_lock(path: Path) -> dict:
    """pins: name -> version; extras: name -> the extras locked; sdists: the packages built
    from source; unhashed: the pins that carry no hash."""
    lock = {"pins": {}, "extras": {}, "sdists": set(), "unhashed": []}
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith(EXTRAS_HEADER):
            for item in line[len(EXTRAS_HEADER):].split():
                name, _, rest = item.partition("[")
                lock["extras"][canonicalize_name(name)] = set(rest.rstrip("]").split(","))
        elif line.startswith(SDISTS_HEADER):
            lock["sdists"] = {canonicalize_name(n) for n in line[len(SDISTS_HEADER):].split()}
        m = _PIN.match(line)
        if m:
            lock["pins"][canonicalize_name(m.group(1))] = Version(m.group(3))
            if i + 1 >= len(lines) or "--hash=sha256:" not in lines[i + 1]:
                lock["unhashed"].append(m.group(1))
    return lock


def built_for(root: Path = ROOT) -> set[str]:
    """The source-only packages locks/build.in says it holds the build tools of."""
    path = root / "locks" / "build.in"
    text = path.read_text() if path.exists() else ""
    return {canonicalize_name(m) for m in re.findall(r"^# for: ([A-Za-z0-9._-]+)", text, re.M)}


def problems(root: Path = ROOT) -> list[str]:
    out = []
    ws = workspace_names(root)
    for tier in TIERS:
        lock = root / "locks" / f"{tier}.txt"
        rel = lock.relative_to(root)
        if not lock.exists():
            out.append(f"check_lock: {rel} is missing: run {RELOCK}")
            continue
        lock_ = read_lock(lock)
        pins, extras = lock_["pins"], lock_["extras"]
        if lock_["unhashed"]:
            out.append(f"check_lock: {rel} pins {lock_['unhashed'][0]} without a hash: run {RELOCK}")
        for name in sorted(lock_["sdists"] - built_for(root)):
            out.append(f"check_lock: {rel} builds {name} from source but locks/build.in names no build tools "
                       f"for it (a '# for: {name}' line): add them, then run {RELOCK}")
        for where, req in asked(tier, root):
            name = canonicalize_name(req.name)
            if name in ws or (req.marker is not None and not req.marker.evaluate()):
                continue
            if name not in pins:
                out.append(f"check_lock: {where} asks for {req} but {rel} has no {req.name}: run {RELOCK}")
            elif not req.specifier.contains(pins[name], prereleases=True):
                out.append(f"check_lock: {where} asks for {req} but {rel} pins {req.name}=={pins[name]}: run {RELOCK}")
            elif not set(req.extras) <= extras.get(name, set()):
                missing = ",".join(sorted(set(req.extras) - extras.get(name, set())))
                out.append(f"check_lock: {where} asks for {req} but {rel} holds {req.name} without [{missing}]: "
                           f"run {RELOCK}")
    build = root / "locks" / "build.txt"
    if not build.exists() or read_lock(build)["unhashed"]:
        out.append(f"check_lock: locks/build.txt is missing or has a pin without a hash: run {RELOCK}")
    return list(dict.fromkeys(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", choices=TIERS, help="print the requirements a tier's lock is compiled from")
    ap.add_argument("--extras", choices=TIERS, help="print the extras header line of a tier's lock")
    ap.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.input:
        print("\n".join(input_lines(args.input, args.root)))
        return 0
    if args.extras:
        print(extras_line(args.extras, args.root))
        return 0
    found = problems(args.root)
    for line in found:
        print(line)
    if not found:
        print(f"check_lock: {', '.join(f'locks/{t}.txt' for t in TIERS)} satisfy every pyproject")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
