"""meta.yaml: parsed into a `Meta`, every field checked, errors naming package, file, field.

The set admission rule lives here too, so a task cannot claim a numbered set (v2 and up)
that its calibration has not earned: the loader refuses it with an error, never a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from sb.errors import TaskError

try:
    from yaml import CSafeLoader as _SafeLoader  # libyaml, where PyYAML was built with it
except ImportError:
    from yaml import SafeLoader as _SafeLoader

SUITES = ("ml", "coding", "production")
KINDS = ("files", "reply", "tool_loop")
TIERS = ("laptop", "accelerated")
ACCELERATORS = ("cuda", "metal")
DIFFICULTIES = ("easy", "medium", "hard")
NAMED_SETS = ("unvalidated", "warmup", "v1")
CONTROL_MODELS = ("reference", "starter")  # they calibrate nothing: their rates are known by construction
SLUG = re.compile(r"^[a-z][a-z0-9_]*$")
MAX_TIME_LIMIT_S = 3600  # the design card's budget is five minutes a task; an hour is already a typo
KNOWN_KEYS = frozenset({"slug", "version", "suite", "category", "kind", "tier", "accelerator", "cpu_checkable",
                        "difficulty", "time_limit_s", "deps", "probes", "frozen_set", "calibration", "holdout",
                        "screen"})


class _Loader(_SafeLoader):  # libyaml: `sb list` parses every task's meta
    """Safe loading that refuses a key given twice (YAML would silently keep the last)."""


def _no_duplicates(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} appears twice", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)
_LOADER = _Loader


@dataclass(frozen=True)
class Calibration:
    model: str
    draws: int
    passed: int
    date: str

    @property
    def pass_rate(self) -> float:
        return self.passed / self.draws


@dataclass(frozen=True)
class Screen:
    """One screen before admission (docs/writing-a-task.md): independent one-shot solves that
    saw only prompt.md and the starter, each graded. Never calibration: a screen enters no
    rate, no leaderboard and not the set admission rule."""

    date: str
    protocol: str
    solves: int
    passed: int
    failures: tuple[tuple[str, ...], ...]  # one entry per failed solve: its failing test ids


@dataclass(frozen=True)
class Meta:
    slug: str
    version: int
    suite: str
    category: str
    kind: str
    tier: str
    accelerator: str | None
    cpu_checkable: bool
    difficulty: str
    time_limit_s: int
    deps: tuple[str, ...]
    probes: str
    frozen_set: str
    calibration: tuple[Calibration, ...] = field(default=())
    holdout: bool = False  # a private task: never listed in published tables (docs/holdout.md)
    screen: tuple[Screen, ...] = field(default=())


def parse_meta(text: str, where: str) -> Meta:
    """Parse and validate meta.yaml text; `where` is 'package/meta.yaml' for messages."""
    try:
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise TaskError(f"{where}: not valid YAML ({_first_line(exc)})") from exc
    if not isinstance(data, dict):
        raise TaskError(f"{where}: expected a mapping of fields")
    unknown = sorted(str(k) for k in data if k not in KNOWN_KEYS)
    if unknown:
        raise TaskError(f"{where}: field {unknown[0]!r}: unknown (known fields: {', '.join(sorted(KNOWN_KEYS))})")
    check = _Checker(data, where)
    meta = Meta(
        slug=check.slug(),
        version=check.integer("version", minimum=1),
        suite=check.choice("suite", SUITES),
        category=check.text("category"),
        kind=check.choice("kind", KINDS),
        tier=check.choice("tier", TIERS),
        accelerator=check.optional_choice("accelerator", ACCELERATORS),
        cpu_checkable=check.boolean("cpu_checkable", default=False),
        difficulty=check.choice("difficulty", DIFFICULTIES),
        time_limit_s=check.integer("time_limit_s", minimum=1, maximum=MAX_TIME_LIMIT_S),
        deps=check.import_names("deps"),
        probes=check.text("probes"),
        frozen_set=check.set_name(),
        calibration=check.calibration(),
        holdout=check.boolean("holdout", default=False),
        screen=check.screens(),
    )
    _check_tier(meta, where)
    _check_admission(meta, where)
    return meta


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _check_tier(meta: Meta, where: str) -> None:
    if meta.tier == "accelerated" and meta.accelerator is None:
        raise TaskError(f"{where}: field 'accelerator': required when tier is accelerated")
    if meta.tier == "laptop" and meta.accelerator is not None:
        raise TaskError(f"{where}: field 'accelerator': must be null for the laptop tier")


def _check_admission(meta: Meta, where: str) -> None:
    """Numbered sets from v2 need two calibration entries of at least five draws whose top
    two pass rates are not both 100%: a task every model aces separates no one."""
    if meta.frozen_set in NAMED_SETS:
        return
    entries = [c for c in meta.calibration if c.draws >= 5 and c.model not in CONTROL_MODELS]
    if len(entries) < 2:
        raise TaskError(
            f"{where}: field 'frozen_set': {meta.frozen_set} needs two calibration entries "
            f"of at least five draws (has {len(entries)})"
        )
    top = sorted((c.pass_rate for c in entries), reverse=True)[:2]
    if top == [1.0, 1.0]:
        raise TaskError(
            f"{where}: field 'frozen_set': {meta.frozen_set} refused: the top two calibrated "
            "pass rates are both 100%"
        )


class _Checker:
    """Field-by-field validation with messages that name the field."""

    def __init__(self, data: dict, where: str):
        self.data = data
        self.where = where

    def fail(self, name: str, problem: str):
        raise TaskError(f"{self.where}: field {name!r}: {problem}")

    def get(self, name: str):
        if name not in self.data:
            self.fail(name, "missing")
        return self.data[name]

    def text(self, name: str) -> str:
        value = self.get(name)
        if not isinstance(value, str) or not value.strip():
            self.fail(name, "must be a non-empty string")
        return value.strip()

    def slug(self) -> str:
        value = self.text("slug")
        if not SLUG.match(value):
            self.fail("slug", f"{value!r} must be lower_snake_case")
        return value

    def integer(self, name: str, minimum: int, maximum: int | None = None) -> int:
        value = self.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.fail(name, f"must be an integer >= {minimum}, got {value!r}")
        if maximum is not None and value > maximum:
            self.fail(name, f"must be at most {maximum}, got {value!r}")
        return value

    def import_names(self, name: str) -> tuple[str, ...]:
        """Top-level import names (numpy, torch): what `find_spec` checks before grading."""
        names = self.string_list(name)
        for value in names:
            if not value.isidentifier():
                self.fail(name, f"{value!r} is not a top-level import name (no dots, no version specifiers)")
        return names

    def boolean(self, name: str, default: bool) -> bool:
        value = self.data.get(name, default)
        if not isinstance(value, bool):
            self.fail(name, f"must be true or false, got {value!r}")
        return value

    def choice(self, name: str, allowed) -> str:
        value = self.get(name)
        if value not in allowed:
            self.fail(name, f"must be one of {', '.join(allowed)}; got {value!r}")
        return value

    def optional_choice(self, name: str, allowed) -> str | None:
        if self.data.get(name) is None:
            return None
        return self.choice(name, allowed)

    def string_list(self, name: str) -> tuple[str, ...]:
        value = self.data.get(name) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(name, "must be a list of strings")
        return tuple(value)

    def set_name(self) -> str:
        value = self.text("frozen_set")
        if value not in NAMED_SETS and not re.match(r"^v([2-9]|[1-9][0-9]+)$", value):
            self.fail("frozen_set", f"must be one of {', '.join(NAMED_SETS)} or v2, v3, ...; got {value!r}")
        return value

    def calibration(self) -> tuple[Calibration, ...]:
        value = self.data.get("calibration") or []
        if not isinstance(value, list):
            self.fail("calibration", "must be a list")
        return tuple(self._calibration_entry(i, entry) for i, entry in enumerate(value))

    def screens(self) -> tuple[Screen, ...]:
        value = self.data.get("screen") or []
        if not isinstance(value, list):
            self.fail("screen", "must be a list of {date, protocol, solves, passed, failures}")
        return tuple(self._screen_entry(i, entry) for i, entry in enumerate(value))

    def _screen_entry(self, index: int, entry) -> Screen:
        name = f"screen[{index}]"
        keys = {"date", "protocol", "solves", "passed", "failures"}
        if not isinstance(entry, dict) or set(entry) != keys:
            self.fail(name, f"needs exactly the keys {', '.join(sorted(keys))}")
        solves, passed, failures = entry["solves"], entry["passed"], entry["failures"]
        if not (isinstance(solves, int) and isinstance(passed, int) and 0 <= passed <= solves and solves > 0):
            self.fail(name, f"needs 0 <= passed <= solves and solves > 0; got {passed}/{solves}")
        if not isinstance(failures, list) or len(failures) != solves - passed or not all(
                isinstance(ids, list) and ids and all(isinstance(i, str) and i for i in ids) for ids in failures):
            self.fail(name, f"'failures' must list, for each of the {solves - passed} failed solves, "
                            "its failing test ids")
        return Screen(str(entry["date"]), str(entry["protocol"]), solves, passed,
                      tuple(tuple(ids) for ids in failures))

    def _calibration_entry(self, index: int, entry) -> Calibration:
        name = f"calibration[{index}]"
        if not isinstance(entry, dict) or not {"model", "draws", "passed", "date"} <= entry.keys():
            self.fail(name, "needs model, draws, passed and date")
        draws, passed = entry["draws"], entry["passed"]
        if not (isinstance(draws, int) and isinstance(passed, int) and 0 <= passed <= draws and draws > 0):
            self.fail(name, f"needs 0 <= passed <= draws and draws > 0; got {passed}/{draws}")
        return Calibration(str(entry["model"]), draws, passed, str(entry["date"]))
