"""`sb new SLUG`: a task package that validates out of the box, for authors to start from.

Every file a task needs, filled with the smallest honest example (a `clamp` function): the
pyproject with the entry point named after the slug, meta.yaml, prompt.md, a starter that
raises NotImplementedError, a reference, a hidden test checked against a brute-force
oracle, one caught mutant and the contract map. `pip install -e DIR` then `sb validate
SLUG` says ok; the author replaces the example, reference first.
"""

from __future__ import annotations

from pathlib import Path

from sb.errors import SbError
from sb.meta import SLUG


PLACEHOLDER_PROBES = "replace me: what the task probes, in one line"  # sb validate notes a task still holding it


def harness_requirement() -> str:
    """The harness versions a new task declares it works with: this release's series
    (`>=0.1,<0.2` for 0.1.x), so pip refuses to pair it with a harness of another series."""
    from importlib.metadata import version
    major, minor = (int(part) for part in version("scratchbench").split(".")[:2])
    upper = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    return f"scratchbench>={major}.{minor},<{upper}"


def files(slug: str) -> dict:
    package = f"sb_task_{slug}"
    src = f"src/{package}"
    return {
        "pyproject.toml": f'''[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "sb-task-{slug.replace('_', '-')}"
version = "1.0.0"
description = "scratchbench task: {slug}"
requires-python = ">=3.11"
dependencies = ["{harness_requirement()}"]

[project.entry-points.sb]
{slug} = "{package}"

[tool.hatch.build.targets.wheel]
packages = ["{src}"]
''',
        f"{src}/__init__.py": f'''"""scratchbench task package: {slug}."""
from sb import hookimpl, load_packaged_task


@hookimpl
def register_tasks(register):
    register(load_packaged_task(__name__))
''',
        f"{src}/meta.yaml": f'''slug: {slug}
version: 1
suite: coding
category: example
kind: files
tier: laptop
accelerator: null
difficulty: easy
time_limit_s: 60
deps: []
probes: "{PLACEHOLDER_PROBES}"
frozen_set: unvalidated
calibration: []
''',
        f"{src}/prompt.md": '''Implement `clamp(x, low, high)` in `solution.py`.

- Return `x` limited to the closed interval `[low, high]`: `low` when `x < low`, `high` when
  `x > high`, otherwise `x` itself.
- If `low > high`, raise `ValueError` before anything else.

Also implement `clamp_all(values, low, high)`: a new list holding `clamp(v, low, high)` for
each item of the list `values`. Leave `values` itself as it was.
''',
        f"{src}/starter/solution.py": '''def clamp(x, low, high):
    raise NotImplementedError


def clamp_all(values, low, high):
    raise NotImplementedError
''',
        f"{src}/reference/solution.py": '''def clamp(x, low, high):
    if low > high:
        raise ValueError(f"low {low} is above high {high}")
    return min(max(x, low), high)


def clamp_all(values, low, high):
    return [clamp(v, low, high) for v in values]
''',
        f"{src}/hidden_tests/_oracle.py": '''"""The brute-force oracle: the nearest member of the interval, by search
(independent of min/max)."""


def clamp(x, low, high):
    candidates = [low, high] + ([x] if low <= x <= high else [])
    return min(candidates, key=lambda c: (abs(c - x), c))
''',
        f"{src}/hidden_tests/test_solution.py": '''import pytest

import _oracle
from sb.judge import observe_call
from solution import clamp, clamp_all

CASES = [(5, 0, 10), (-3, 0, 10), (12, 0, 10), (0, 0, 0), (10, 0, 10), (-7, -9, -8)]


@pytest.mark.parametrize("x, low, high", CASES)
def test_clamp_matches_the_oracle(x, low, high):
    assert clamp(x, low, high) == _oracle.clamp(x, low, high)


def test_an_empty_interval_raises_value_error():
    with pytest.raises(ValueError):
        clamp(1, 5, 2)


def test_clamp_all_returns_a_new_list_and_leaves_its_input_alone():
    values = [-3, 5, 12, 0]
    # the list reaches the worker as a copy: observe_call calls clamp_all there and
    # brings the list back as the call left it
    seen = observe_call("solution", "clamp_all", values, 0, 10)
    assert seen.result == [_oracle.clamp(v, 0, 10) for v in values]
    assert seen.args[0] == values and seen.returned_argument is None
''',
        f"{src}/mutants/upper_bound_ignored.patch": '''caught: forgets the upper bound
--- a/solution.py
+++ b/solution.py
@@ -4 +4 @@
-    return min(max(x, low), high)
+    return max(x, low)
''',
        f"{src}/mutants/clamps_in_place.patch": '''caught: clamps the caller's list in place and returns it
--- a/solution.py
+++ b/solution.py
@@ -8 +8,3 @@
-    return [clamp(v, low, high) for v in values]
+    for i, v in enumerate(values):
+        values[i] = clamp(v, low, high)
+    return values
''',
        f"{src}/contract.yaml": '''- clause: "clamp returns x limited to the closed interval [low, high]"
  tests:
    - test_solution.py::test_clamp_matches_the_oracle
- clause: "low > high raises ValueError"
  tests:
    - test_solution.py::test_an_empty_interval_raises_value_error
- clause: "clamp_all returns a new list and leaves values as it was"
  tests:
    - test_solution.py::test_clamp_all_returns_a_new_list_and_leaves_its_input_alone
''',
    }


def create(slug: str, parent: Path) -> Path:
    if not SLUG.match(slug):
        raise SbError(f"slug {slug!r} must be lower_snake_case (letters, digits, underscores; a letter first)")
    dest = Path(parent) / slug
    if dest.exists():
        raise SbError(f"{dest} already exists")
    for name, text in files(slug).items():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_text(text, encoding="utf-8")
    return dest
