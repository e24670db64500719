"""Print a lock for grading hosted and served models: the laptop lock plus the SDKs.

`make install-sdk` (tools/install.sh --sdk) syncs the venv to what this prints: every entry
of the laptop lock, then the entries of the dev lock that the official SDKs (anthropic,
openai) need and the laptop lock lacks, found by following the dev lock's `# via` lines
from the SDKs down. Each entry keeps its hashes, so the SDKs are installed as pinned and
checked as everything else. A package both locks pin must be pinned alike; otherwise this
stops with one line naming it (relock with tools/lock.sh).

    python tools/sdk_lock.py locks/laptop.txt locks/dev.txt > /tmp/laptop-sdk.txt
"""

from __future__ import annotations

import re
import sys

SDKS = ("anthropic", "openai")
_ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text.split("[")[0]).lower()


def entries(path: str) -> dict:
    """{package: (version, the entry's lines, the packages it is there for)} of a uv lock."""
    found, current = {}, None
    for line in open(path, encoding="utf-8").read().splitlines():
        match = _ENTRY.match(line)
        if match:
            current = _name(match.group(1))
            found[current] = (match.group(2), [line], [])
        elif current and line.startswith("    "):
            found[current][1].append(line)
            via = re.match(r"^\s+#\s+(?:via\s+)?(\S+)\s*$", line)
            if via and via.group(1) != "via" and not via.group(1).startswith("-r"):
                found[current][2].append(_name(via.group(1)))
        else:
            current = None
    return found


def sdk_closure(dev: dict) -> set:
    """The SDKs and everything the dev lock has for them, transitively."""
    closure, grew = set(SDKS), True
    while grew:
        grew = False
        for package, (_, _, wanted_by) in dev.items():
            if package not in closure and any(parent in closure for parent in wanted_by):
                closure.add(package)
                grew = True
    return closure


def main(laptop_path: str, dev_path: str) -> int:
    laptop, dev = entries(laptop_path), entries(dev_path)
    missing = [sdk for sdk in SDKS if sdk not in dev]
    if missing:
        print(f"sdk_lock: {dev_path} has no {', '.join(missing)}", file=sys.stderr)
        return 1
    added = []
    for package in sorted(sdk_closure(dev)):
        if package in laptop:
            if laptop[package][0] != dev[package][0]:
                print(f"sdk_lock: {package} is {laptop[package][0]} in {laptop_path} and {dev[package][0]} in "
                      f"{dev_path}; relock with tools/lock.sh", file=sys.stderr)
                return 1
        else:
            added.append(package)
    sys.stdout.write(open(laptop_path, encoding="utf-8").read().rstrip("\n") + "\n")
    sys.stdout.write(f"# the SDKs and what they need, from {dev_path} (tools/sdk_lock.py)\n")
    for package in added:
        sys.stdout.write("\n".join(dev[package][1]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
