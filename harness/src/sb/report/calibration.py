"""Calibration blocks re-derived from the draws under calibration/.

A task's meta.yaml `calibration` block (model, draws, passed, date per entry) is what
admits it to a numbered set, so it must be reproducible: the results files behind it live
in calibration/, and the block must equal what they say. Per task and model: `draws` is
the number of draws with evidence on that task (a draw that could not be measured is no
calibration), `passed` how many of those passed, `date` the day of the newest of them.
Every draw in calibration/ must back a declared entry, and the controls (reference,
starter) calibrate nothing: they prove the task, they say nothing about its difficulty.
"""

from __future__ import annotations

from pathlib import Path

from sb.meta import Meta, parse_meta
from sb.outcome import is_evidence

CONTROL_ADAPTERS = ("reference", "starter")


def derive_blocks(docs: list[dict]) -> dict[str, list[dict]]:
    """{slug: [{model, draws, passed, date}, ...] sorted by model} from calibration draws."""
    found: dict[tuple[str, str], dict] = {}
    for doc in docs:
        for entry in doc["tasks"]:
            if not is_evidence(entry["status"]):
                continue
            block = found.setdefault((entry["slug"], doc["model"]),
                                     {"model": doc["model"], "draws": 0, "passed": 0, "date": ""})
            block["draws"] += 1
            block["passed"] += bool(entry["passed"])
            block["date"] = max(block["date"], str(doc["run_at"])[:10])
    blocks: dict[str, list[dict]] = {}
    for (slug, _model), block in sorted(found.items()):
        blocks.setdefault(slug, []).append(block)
    return blocks


def declared_blocks(meta: Meta) -> list[dict]:
    return sorted(({"model": c.model, "draws": c.draws, "passed": c.passed, "date": c.date}
                   for c in meta.calibration), key=lambda b: b["model"])


def check(metas: list[Meta], docs: list[dict]) -> list[str]:
    """Every mismatch between the declared blocks and the draws, one line each; [] when all agree."""
    problems = [f"{Path(d.get('_path', '?')).name}: a {d['adapter']} control run is no calibration"
                for d in docs if d["adapter"] in CONTROL_ADAPTERS]
    derived = derive_blocks([d for d in docs if d["adapter"] not in CONTROL_ADAPTERS])
    known = {m.slug for m in metas}
    for meta in metas:
        declared, behind = declared_blocks(meta), derived.get(meta.slug, [])
        if declared != behind:
            problems.append(f"{meta.slug}: meta.yaml declares {_show(declared)}; calibration/ gives {_show(behind)}")
    problems += [f"{slug}: calibration/ holds draws for a task that is not in the repository"
                 for slug in sorted(set(derived) - known)]
    return problems


def _show(blocks: list[dict]) -> str:
    if not blocks:
        return "nothing"
    return ", ".join(f"{b['model']} {b['passed']}/{b['draws']} on {b['date']}" for b in blocks)


def repo_metas(tasks_root: Path) -> list[Meta]:
    """Every task's meta.yaml under tasks/<slug>/src/<package>/, parsed and validated."""
    paths = sorted(Path(tasks_root).glob("*/src/*/meta.yaml"))
    return [parse_meta(p.read_text(encoding="utf-8"), f"{p.parent.name}/meta.yaml") for p in paths]
