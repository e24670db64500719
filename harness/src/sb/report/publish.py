"""`sb publish RESULTS_FILE`: copy a finished draw into leaderboard/ under a stable name.

Refused: a file that is not a results document, a draw that did not finish, a draw in which
nothing was measured, a cost that does not re-derive from its tokens through the dated
price table, a draw whose set contradicts what SET_MANIFESTS.yaml froze for that set, and a
different file already published under the same name; a draw answered by another endpoint
than the provider's API, or by a `cmd:` agent, unless the user allows it. Publishing the
same file twice is a no-op.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sb import results
from sb.errors import SbError
from sb.report import manifests
from sb.report.draws import load_dir
from sb.report.served import model_label, ran_local_agent, served_at

MANIFEST_NAME = "SET_MANIFESTS.yaml"


def stable_name(doc: dict) -> str:
    """'<model>--<run id>.json': the same draw always lands on the same name. The model part
    is cut at 100 characters (a `cmd:` agent's model is its whole command line), the run id
    kept whole, so the name stays unique and fits a file system's 255."""
    from sb.names import safe_name
    return f"{safe_name(doc['model'], 100)}--{safe_name(doc['run_id'])}.json"


def cost_problems(doc: dict, where: str) -> list[str]:
    """Mismatches between the recorded costs and the ones re-derived from tokens (the same
    check tools/check_cost.py runs over leaderboard/ in CI)."""
    from sb.costs import check_document
    problems, _counts = check_document(doc, where)
    return problems


def publish(path: Path, leaderboard: Path, allow_endpoint: bool = False, allow_agent: bool = False) -> dict:
    """Copy `path` into `leaderboard`; {published, path, manifest_updated}. SbError when refused."""
    doc = results.load(path)
    check_answered_by(doc, path, allow_endpoint, allow_agent)
    if not doc.get("complete"):
        raise SbError(f"{path}: the draw did not finish (complete is false); resume it first")
    problems = cost_problems(doc, str(path))
    if problems:
        raise SbError(f"refused: the cost does not re-derive: {problems[0]}")
    doc = without_holdout(doc)
    check_measured(doc, path)  # on what is published: a holdout task's pass is withheld from the row
    dest = Path(leaderboard) / stable_name(doc)
    if dest.exists():
        if json.loads(dest.read_text(encoding="utf-8")) != doc:
            raise SbError(f"refused: {dest} already holds a different file for run {doc['run_id']}")
        return {"published": False, "path": str(dest), "manifest_updated": False}
    manifest = _manifest_with(doc, leaderboard)
    Path(leaderboard).mkdir(parents=True, exist_ok=True)
    if doc.get("holdout_withheld"):
        results.write_atomic(dest, doc)
    else:
        shutil.copyfile(path, dest)
    updated = write_manifest(leaderboard, manifest)
    return {"published": True, "path": str(dest), "manifest_updated": updated}


def check_answered_by(doc: dict, path: Path, allow_endpoint: bool, allow_agent: bool) -> None:
    """Refuse answers that are not the model's own through its provider's API unless the user
    allowed them: a `cmd:` agent (--allow-agent) runs unsandboxed, so its pass may be a copied
    reference; another endpoint (--allow-endpoint) may serve another model under the name."""
    if ran_local_agent(doc):
        if not allow_agent:
            raise SbError(f"refused: {path} was answered by a cmd: agent, which ran unsandboxed with your account's "
                          "access, so nothing stopped it reading the tasks' references and hidden tests; "
                          f"pass --allow-agent to publish it as '{model_label(doc)}'")
        return
    where = served_at(doc)
    if where and not allow_endpoint:
        official = doc.get("official_endpoint") or f"{doc.get('adapter')} has no provider API"
        raise SbError(f"refused: {path} was answered by {where}, not the provider's own API ({official}); "
                      f"pass --allow-endpoint to publish it as '{model_label(doc)}'")


def check_measured(doc: dict, path: Path) -> None:
    """Refuse a draw without evidence (every task adapter_error, say): its row would measure
    nothing, and no-evidence is never published as a result."""
    summary = results.rate(doc["tasks"])
    if not summary["measured"]:
        raise SbError(f"refused: {path}: nothing was measured ({summary['reason'] or 'no tasks'}); "
                      "a draw without evidence says nothing about the model")


def without_holdout(doc: dict) -> dict:
    """The document as published: holdout tasks' entries withheld (only their count is
    said), so a private task's name never reaches the leaderboard or the site."""
    kept = [e for e in doc["tasks"] if not e.get("holdout")]
    if len(kept) == len(doc["tasks"]):
        return doc
    public = {**doc, "tasks": kept, "holdout_withheld": len(doc["tasks"]) - len(kept),
              "tasks_requested": [s for s in doc.get("tasks_requested", []) if s in {e["slug"] for e in kept}]}
    return results.summarise(public)


def _manifest_with(doc: dict, leaderboard: Path) -> dict:
    """The manifest once `doc` is published; SbError if it contradicts a set already frozen."""
    published = load_dir(leaderboard) if Path(leaderboard).is_dir() else []
    return manifests.derive(published + [{**doc, "_path": stable_name(doc)}])


def write_manifest(leaderboard: Path, derived: dict) -> bool:
    """Write SET_MANIFESTS.yaml when its contents change; whether it was written."""
    path = Path(leaderboard) / MANIFEST_NAME
    text = manifests.render(derived)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True
