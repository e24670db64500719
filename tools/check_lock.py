"""The lock's inputs and its check.

The locks (locks/laptop.txt, locks/dev.txt, and the platform locks of PLATFORM_LOCKS) pin
every third-party distribution with its hashes; the workspace's own packages (the harness
and one per task) are not in them: they are installed editable from the working tree with
--no-deps, so nothing they ask for is resolved at install time. This file says what each
tier asks for and checks that its lock satisfies it:

  python tools/check_lock.py                 fail, one line per problem, when a pyproject (the
                                             harness's or any task's) asks for something a lock
                                             does not satisfy
  python tools/check_lock.py --input TIER    the requirements uv compiles TIER's lock from
                                             (tools/lock.sh writes them to a temporary file)
  python tools/check_lock.py --extras TIER   the header line recording the extras the lock holds
  python tools/check_lock.py --header LOCK   every sb-lock-* header line of a lock but sb-lock-sdists
  python tools/check_lock.py --platform-locks   NAME PLATFORM TIER TITLE, one line per platform lock
  python tools/check_lock.py --overrides LOCK | --constraints LOCK   what uv resolves LOCK with

A tier is the harness with some of its extras, every task package, and a hand-kept pins
file (locks/TIER.in). laptop is what `make run` needs; dev is laptop plus every harness
extra, every integrations/* package and locks/dev.in: what `make test` needs. Both are
locked for CPython 3.11 on x86_64 Linux with the CPU torch. A platform lock (PLATFORM_LOCKS)
is a tier resolved for another platform or torch build, within that tier's lock.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class PlatformLock:
    """A tier's lock for another platform than x86_64 Linux, or another torch build than the CPU one.

    Its requirements are the tier's (pyprojects and locks/*.in), those of the root pyproject's
    hatch environment `hatch_env`, and `pins`, which replace the same-named requirements
    everywhere (uv's --override): torch==2.13.0+cpu exists only for x86_64 Linux, and PyPI's
    torch 2.13.0 asks for triton==3.7.1 on Linux, where the project pins triton 3.9.0.
    `left_out` names what the platform has no wheel of, and why; the check skips those. It is
    resolved within the tier's lock (less what `pins` and `left_out` name), so a package has one
    version across the locks. Markers are evaluated with `markers`, the platform's environment.
    """

    tier: str
    platform: str   # uv's --python-platform
    title: str      # the header's first line: "# The {title}: every ..."
    markers: dict
    hatch_env: str | None = None
    pins: dict = field(default_factory=dict)       # requirement -> why
    left_out: dict = field(default_factory=dict)   # name -> why


_LINUX = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}
_PY311 = {"python_version": "3.11", "python_full_version": "3.11.0", "implementation_name": "cpython",
          "platform_python_implementation": "CPython"}
TORCH_PYPI = "torch==2.13.0"
TRITON_OVER_TORCH = {"triton==3.9.0": "locks/laptop.in's pin, over PyPI torch 2.13.0's own triton==3.7.1"}
PLATFORM_LOCKS = {
    "laptop-macos-arm64": PlatformLock(
        "laptop", "aarch64-apple-darwin", "laptop tier's lock for macOS on Apple silicon (the metal tier's platform)",
        {**_PY311, "sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix",
         "platform_machine": "arm64"},
        hatch_env="metal", pins={TORCH_PYPI: "PyPI's build: CPU and MPS on macOS"},
        left_out={"triton": "no macOS wheel"}),
    "laptop-linux-aarch64": PlatformLock(
        "laptop", "aarch64-manylinux_2_28", "laptop tier's lock for aarch64 Linux",
        {**_PY311, **_LINUX, "platform_machine": "aarch64"},
        pins={TORCH_PYPI: "PyPI's build, a CUDA 13 one on aarch64 (it runs on CPU too): the +cpu wheel "
                          "is served only by download.pytorch.org", **TRITON_OVER_TORCH}),
    "cuda": PlatformLock(
        "laptop", "x86_64-manylinux_2_28", "cuda tier's lock (the laptop tier with PyPI's CUDA torch)",
        {**_PY311, **_LINUX, "platform_machine": "x86_64"},
        hatch_env="cuda", pins={TORCH_PYPI: "PyPI's build: CUDA 13 on x86_64 Linux", **TRITON_OVER_TORCH}),
}
LOCK_NAMES = TIERS + tuple(PLATFORM_LOCKS)
PLATFORM_HEADER = "# sb-lock-platform:"
OVERRIDES_HEADER = "# sb-lock-overrides:"
LEFT_OUT_HEADER = "# sb-lock-left-out:"


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
    """(where, requirement) for everything the tier's pyprojects and pins files ask for; for a
    platform lock, its tier's with its own pins in place of those of locks/*.in, and its hatch
    environment's."""
    if tier in PLATFORM_LOCKS:
        return _platform_asked(PLATFORM_LOCKS[tier], root)
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


def _hatch_env(name: str, root: Path = ROOT) -> list[str]:
    envs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["hatch"]["envs"]
    return envs[name].get("dependencies", [])


def _platform_asked(lock: PlatformLock, root: Path) -> list[tuple[str, Requirement]]:
    pinned = {canonicalize_name(Requirement(p).name) for p in lock.pins}
    pin_files_ = {str(p.relative_to(root)) for p in pin_files(lock.tier, root)}
    out = [(w, r) for w, r in asked(lock.tier, root)
           if not (w in pin_files_ and canonicalize_name(r.name) in pinned)]
    if lock.hatch_env:
        out += [(f"pyproject.toml [tool.hatch.envs.{lock.hatch_env}]", Requirement(r))
                for r in _hatch_env(lock.hatch_env, root)]
    return out + [("tools/check_lock.py PLATFORM_LOCKS", Requirement(p)) for p in lock.pins]


def overrides(name: str) -> list[str]:
    """uv's --override lines: the lock's pins, and what it leaves out as a never-true marker."""
    lock = PLATFORM_LOCKS[name]
    return list(lock.pins) + [f'{n} ; sys_platform == "never"' for n in lock.left_out]


def constraints(name: str, root: Path = ROOT) -> list[str]:
    """The tier's lock as constraints, less what the platform lock pins or leaves out."""
    lock = PLATFORM_LOCKS[name]
    mine = {canonicalize_name(Requirement(p).name) for p in lock.pins} | set(lock.left_out)
    pins = read_lock(root / "locks" / f"{lock.tier}.txt")["pins"]
    return [f"{n}=={v}" for n, v in sorted(pins.items()) if n not in mine]


def header_lines(name: str, root: Path = ROOT) -> list[str]:
    """The sb-lock-* lines a lock starts with (sdists aside, which lock.sh finds by dry runs)."""
    lines = [extras_line(name, root)]
    lock = PLATFORM_LOCKS.get(name)
    if lock:
        lines[:0] = [f"{PLATFORM_HEADER} {lock.platform}, CPython 3.11, within locks/{lock.tier}.txt",
                     *(f"{OVERRIDES_HEADER} {p} ({why})" for p, why in lock.pins.items()),
                     *(f"{LEFT_OUT_HEADER} {n} ({why})" for n, why in lock.left_out.items())]
    return lines


def input_lines(tier: str, root: Path = ROOT) -> list[str]:
    """What uv compiles the tier from; paths relative to the repository root (lock.sh runs there)."""
    if tier in PLATFORM_LOCKS:
        lock = PLATFORM_LOCKS[tier]
        return input_lines(lock.tier, root) + (_hatch_env(lock.hatch_env, root) if lock.hatch_env else [])
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
    for tier in LOCK_NAMES:
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
        platform = PLATFORM_LOCKS.get(tier)
        markers, left_out = (platform.markers, platform.left_out) if platform else (None, {})
        for where, req in asked(tier, root):
            name = canonicalize_name(req.name)
            if name in ws or name in left_out or (req.marker is not None and not req.marker.evaluate(markers)):
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
    ap.add_argument("--input", choices=LOCK_NAMES, help="print the requirements a lock is compiled from")
    ap.add_argument("--extras", choices=LOCK_NAMES, help="print the extras header line of a lock")
    ap.add_argument("--header", choices=LOCK_NAMES, help="print the sb-lock-* header lines of a lock")
    ap.add_argument("--platform-locks", action="store_true", help="print NAME PLATFORM TIER TITLE per platform lock")
    ap.add_argument("--overrides", choices=PLATFORM_LOCKS, help="print a platform lock's uv --override lines")
    ap.add_argument("--constraints", choices=PLATFORM_LOCKS, help="print what a platform lock is resolved within")
    ap.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.input:
        print("\n".join(input_lines(args.input, args.root)))
        return 0
    if args.extras:
        print(extras_line(args.extras, args.root))
        return 0
    if args.header:
        print("\n".join(header_lines(args.header, args.root)))
        return 0
    if args.platform_locks:
        print("\n".join(f"{n} {lock.platform} {lock.tier} {lock.title}" for n, lock in PLATFORM_LOCKS.items()))
        return 0
    if args.overrides:
        print("\n".join(overrides(args.overrides)))
        return 0
    if args.constraints:
        print("\n".join(constraints(args.constraints, args.root)))
        return 0
    found = problems(args.root)
    for line in found:
        print(line)
    if not found:
        print(f"check_lock: {', '.join(f'locks/{t}.txt' for t in LOCK_NAMES)} satisfy every pyproject")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
