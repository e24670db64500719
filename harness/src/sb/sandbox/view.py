"""What of the installed Python a sandboxed process may see: an allow-list, per process.

The interpreter and its standard library, and the files of the distributions the process
needs (the task's declared dependencies and what they require; pytest for the judge).
Every site-packages folder is otherwise empty inside, so the worker never sees an
installed task package, the harness, another task's hidden tests, or anything else.
"""

from __future__ import annotations

import os
import re
import site
import sys
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

JUDGE_DISTRIBUTIONS = ("pytest",)


@dataclass(frozen=True)
class PythonView:
    readable: tuple  # folders and files bound read-only at their own paths
    masked: tuple    # folders shown empty first (site-packages), so only `readable` shows through
    search_path: tuple = ()  # the site folders those distributions live in, in the grader's order


def python_view(import_names: tuple, extra_distributions: tuple = ()) -> PythonView:
    """The interpreter plus the closure of the distributions behind `import_names`: worked
    out once per set of installed folders and kept on disk (sb/installed.py), since reading
    the distributions' RECORD files and requirements costs a fresh command about 0.1 s."""
    return _kept_view(tuple(sorted(set(import_names))), tuple(sorted(set(extra_distributions))))


@lru_cache(maxsize=None)
def _kept_view(import_names: tuple, extra_distributions: tuple) -> PythonView:
    import hashlib
    from sb import installed
    # the cheap inputs join the key: a different HOME has a different user site folder to mask
    wanted = "\n".join("\0".join(part) for part in (import_names, extra_distributions, sorted(_site_dirs()),
                                                      sorted(_interpreter_paths())))
    name = "view-" + hashlib.sha256(wanted.encode()).hexdigest()[:16]
    found = installed.cached(name, lambda: vars(_computed_view(import_names, extra_distributions)), _view_fields)
    return PythonView(**{k: tuple(v) for k, v in found.items()})


def _view_fields(found: dict) -> bool:
    return set(found) == {"readable", "masked", "search_path"} and all(
        isinstance(v, (list, tuple)) and all(isinstance(p, str) for p in v) for v in found.values())


def _computed_view(import_names: tuple, extra_distributions: tuple) -> PythonView:
    dists = set(extra_distributions)
    names = set(import_names) | ({"numpy"} if "torch" in import_names else set())  # tensors cross as numpy bytes
    for name in names:
        dists |= set(_distributions_of(name))
    entries: set[str] = set()
    for dist in sorted(_closure(tuple(sorted(dists)))):
        entries |= _entries(dist)
    masked = _site_dirs()
    bases = {str(Path(str(metadata.distribution(d).locate_file(""))).resolve()) for d in _closure(tuple(sorted(dists)))}
    order = [os.path.realpath(p) for p in sys.path if p]
    search = tuple(p for p in dict.fromkeys(order) if p in bases)  # a .pth-added folder is not found inside
    return PythonView(readable=_outermost(_interpreter_paths() | entries, masked), masked=tuple(sorted(masked)),
                      search_path=search)


def _outermost(paths, masked) -> tuple:
    """Drop a path whose parent is bound already (unless a mask lies between them)."""
    kept: list[str] = []
    for path in sorted(paths):
        parent = next((k for k in kept if path.startswith(k.rstrip("/") + "/")), None)
        if parent is None or any(m.startswith(parent.rstrip("/") + "/") and path.startswith(m) for m in masked):
            kept.append(path)
    return tuple(kept)


@lru_cache(maxsize=None)
def _packages_distributions() -> Mapping[str, list[str]]:
    """Import name -> the distributions providing it (kept on disk: sb/installed.py)."""
    from sb import installed
    return installed.cached("packages", lambda: {k: list(v) for k, v in metadata.packages_distributions().items()},
                            installed.strings_to_string_lists)


def _distributions_of(import_name: str) -> list:
    top = import_name.split(".")[0]
    return _packages_distributions().get(top, [top] if _installed(top) else [])


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@lru_cache(maxsize=None)
def _installed(name: str) -> bool:
    try:
        metadata.distribution(name)
        return True
    except metadata.PackageNotFoundError:
        return False


@lru_cache(maxsize=None)
def _closure(roots: tuple) -> frozenset:
    """Distribution names needed by `roots`, following Requires-Dist without extras."""
    seen, stack = set(), [_canonical(r) for r in roots]
    while stack:
        name = stack.pop()
        if name in seen or not _installed(name):
            continue
        seen.add(name)
        for requirement in metadata.requires(name) or ():
            parsed = _requirement(requirement)
            if parsed:
                stack.append(parsed)
    return frozenset(seen)


def _requirement(text: str) -> str | None:
    """The name of a requirement that applies here: markers naming an extra never do."""
    head, _, marker = text.partition(";")
    if "extra" in marker:
        return None
    if marker.strip() and not _marker_holds(marker):
        return None
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", head)
    return _canonical(match.group(1)) if match else None


def _marker_holds(marker: str) -> bool:
    try:
        from packaging.markers import Marker
        return Marker(marker).evaluate()
    except Exception:  # noqa: BLE001 - bind too much rather than break an import
        return True


@lru_cache(maxsize=None)
def _entries(dist_name: str) -> frozenset:
    """The top-level files and folders a distribution installed into its site-packages."""
    dist = metadata.distribution(dist_name)
    base = Path(str(dist.locate_file(""))).resolve()
    found = set()
    for file in dist.files or ():
        parts = Path(str(file)).parts
        if not parts or parts[0] in ("..", "/") or parts[0].endswith(".pth"):
            continue
        path = base / parts[0]
        if path.exists():
            found.add(str(path))
    return frozenset(found)


@lru_cache(maxsize=1)
def _interpreter_paths() -> frozenset:
    """The executable, the virtual environment's marker, and the standard library."""
    paths = {os.path.realpath(sys.executable), os.path.dirname(sys.executable)}
    paths |= {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")}
    paths |= {os.path.join(sys.base_prefix, "lib"), os.path.join(sys.base_prefix, "bin")}
    if sys.prefix != sys.base_prefix:
        paths |= {os.path.join(sys.prefix, "pyvenv.cfg"), os.path.join(sys.prefix, "bin")}
    return frozenset(p for p in paths if p and os.path.exists(p))


@lru_cache(maxsize=1)
def _site_dirs() -> frozenset:
    found = set(site.getsitepackages()) | {site.getusersitepackages()}
    found |= {p for p in sys.path if p.endswith(("site-packages", "dist-packages"))}
    stdlib = sysconfig.get_path("stdlib")
    found |= {os.path.join(stdlib, "site-packages"), os.path.join(stdlib, "dist-packages"),
              "/usr/lib/python3/dist-packages", "/usr/local/lib/python3/dist-packages"}
    return frozenset(os.path.realpath(p) for p in found if p and os.path.isdir(p))
