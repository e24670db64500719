"""scratchbench runs as Inspect eval logs, for `inspect view` and `inspect view bundle`.

One log per results document (one draw), one sample per task: the messages `sb` sent
(rebuilt from the installed task when its content hash is the entry's), the files the
model left (when the run kept them), the verdict as a score (CORRECT or INCORRECT, the
failing test ids as its explanation, the entry in its metadata), and the tokens and cost.
The metrics are sb's own: the pass rate over evidence only (NaN when nothing was
measured, never 0) and how many tasks were measured.

Holdout tasks are left out, as `sb publish` leaves them out (the log says how many): a log
is made to be shared, and a holdout prompt that is shared is a public task.

The built-in reporter `inspect` writes these logs after `sb run --report inspect:DIR`; it
is off unless asked for. `sb report --inspect DIR` writes them for published results.
inspect-ai is imported only here, and only when a log is written.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path

from sb.errors import SbError
from sb.hookspecs import hookimpl
from sb.reporters import Reporter

TARGET = "every hidden test the reference passes"
MAX_SHOWN_BYTES = 200_000  # a sample shows at most this much of the model's files


def inspect_installed() -> None:
    from importlib.util import find_spec
    if find_spec("inspect_ai") is None:
        raise SbError("Inspect logs need inspect-ai, which is not installed: pip install 'scratchbench[inspect]'")


def write_log(doc: dict, log_dir: Path, files: dict | None = None, source: Path | None = None) -> Path:
    """Write `doc` as `<log_dir>/<results file name>.eval`; `files` maps slug -> {name: bytes}."""
    from inspect_ai.log import write_eval_log
    name = (Path(source).stem if source else doc["run_id"]) + ".eval"
    path = Path(log_dir) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(eval_log(doc, files or {}, source), str(path))
    return path


def write_logs(results_dir: Path, log_dir: Path) -> dict:
    """Every results file under `results_dir` (published results keep no files) as a log."""
    from sb.report.draws import load_dir
    inspect_installed()
    docs = load_dir(results_dir)
    if not docs:
        raise SbError(f"no finished draws in {results_dir}")
    written = [str(write_log(doc, log_dir, source=doc.get("_path"))) for doc in docs]
    return {"log_dir": str(log_dir), "logs": written}


def eval_log(doc: dict, files: dict, source: Path | None = None):
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalPlan, EvalPlanStep, EvalSpec, EvalStats
    entries = [e for e in doc["tasks"] if not e.get("holdout")]  # as `sb publish`: a log gets shared
    model = f"{doc['adapter']}/{doc['model']}"
    started = datetime.fromisoformat(doc["run_at"])
    finished = (started + timedelta(seconds=float(doc.get("wall_clock_s") or 0))).isoformat()
    samples = [_sample(entry, model, files.get(entry["slug"])) for entry in entries]  # files: None if not kept
    spec = EvalSpec(created=doc["run_at"], task="scratchbench", task_id=doc["run_id"], run_id=doc["group_id"],
                    task_version=doc.get("harness_version") or 0, model=model, config=EvalConfig(),
                    dataset=EvalDataset(name=doc.get("task_set") or "scratchbench", samples=len(entries),
                                        sample_ids=[e["slug"] for e in entries]),
                    packages={"scratchbench": doc.get("harness_version") or "unknown"},
                    metadata=_run_metadata(doc, source, withheld=len(doc["tasks"]) - len(entries)))
    plan = EvalPlan(steps=[EvalPlanStep(solver=f"sb run --model {doc['adapter']}:{doc['model']}",
                                        params={"settings": doc.get("settings") or {}})])
    return EvalLog(status="success" if doc.get("complete") else "started", eval=spec, plan=plan,
                   results=_results(entries), samples=samples,
                   stats=EvalStats(started_at=doc["run_at"], completed_at=finished,
                                   model_usage=_usage_total(model, samples)))


def _run_metadata(doc: dict, source, withheld: int) -> dict:
    keys = ("run_id", "group_id", "draw", "draws", "sweep_key", "adapter", "isolation", "toolchain_fingerprint",
            "task_set", "headline_tier", "usd_cost", "cost_complete", "endpoint", "base_url", "complete")
    return {"scratchbench": {**{k: doc.get(k) for k in keys}, "holdout_withheld": withheld,
                             "results_file": str(source) if source else None}}


def _results(entries: list):
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore
    from sb.results import rate
    summary = rate(entries)
    pass_rate = summary["rate"] if summary["rate"] is not None else math.nan
    metrics = {"pass_rate": EvalMetric(name="pass_rate", value=pass_rate),
               "measured": EvalMetric(name="measured", value=summary["measured"])}
    score = EvalScore(name="sb_grader", scorer="sb_grader", scored_samples=len(entries), metrics=metrics,
                      metadata={"unmeasured": summary["unmeasured"], "reason": summary["reason"]})
    return EvalResults(total_samples=len(entries), completed_samples=len(entries), scores=[score])


def _sample(entry: dict, model: str, files: dict | None):
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageAssistant, ModelOutput
    shown = _files_text(entry, files)
    messages = _input(entry)
    output = ModelOutput.from_content(model=model, content=shown)
    output.usage = _usage(entry)
    usage = {model: output.usage} if output.usage else {}
    return EvalSample(id=entry["slug"], epoch=1, input=messages, target=TARGET,
                      messages=[*messages, ChatMessageAssistant(content=shown, model=model)], output=output,
                      scores={"sb_grader": _score(entry)}, metadata=_entry_metadata(entry), model_usage=usage,
                      total_time=entry.get("duration_s"))


def _input(entry: dict) -> list:
    """The messages sb sent, from the installed task if it is the very task graded."""
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser
    task = _installed_task(entry["slug"])
    if task is None or task.content_hash != entry.get("content_hash") or task.meta.kind == "tool_loop":
        why = ("a tool_loop conversation, driven by sb" if task is not None and task.meta.kind == "tool_loop"
               else "not installed here in this version")
        return [ChatMessageUser(content=f"(task {entry['slug']} {entry.get('version', '')}: the prompt is not shown: "
                                        f"{why}; content hash {entry.get('content_hash')})")]
    from sb.api import solver_messages
    system, user = solver_messages(task)
    return [ChatMessageSystem(content=system["content"]), ChatMessageUser(content=user["content"])]


def _installed_task(slug: str):
    """The installed task, from the session's catalog (read once per command, not per entry)."""
    from sb.session import default_session
    try:
        return default_session().tasks().get(slug)
    except SbError:  # a duplicate slug, say: every prompt is then shown as not installed here
        return None


def _files_text(entry: dict, files: dict | None) -> str:
    """The model's files as fenced blocks (a fence longer than any backtick run inside)."""
    if not entry.get("evidence"):
        detail = f": {entry['detail']}" if entry.get("detail") else ""
        return f"(no files were graded: {entry['status']}{detail})"
    if files is None:
        return "(the files are not in this record: published results, and tasks finished before a --resume, keep none)"
    if not files:
        return "(the model left none of the declared files)"
    parts, budget = [], MAX_SHOWN_BYTES
    for name in sorted(files):
        text = files[name].decode("utf-8", errors="replace")
        if len(text) > budget:
            text = text[:budget] + f"\n... ({len(files[name]) - budget} more bytes not shown)"
        budget = max(0, budget - len(text))
        fence = "`" * max(3, _longest_backtick_run(text) + 1)
        parts.append(f"### {name}\n\n{fence}\n{text.rstrip()}\n{fence}")
    return "\n\n".join(parts)


def _longest_backtick_run(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def _score(entry: dict):
    from inspect_ai.scorer import CORRECT, INCORRECT, Score
    failed = entry.get("failed_tests") or []
    if entry["status"] == "failed" and failed:
        explanation = "failing tests:\n" + "\n".join(failed)
    else:
        explanation = entry["status"] + (f": {entry['detail']}" if entry.get("detail") else "")
    return Score(value=CORRECT if entry["passed"] else INCORRECT, answer=entry["status"], explanation=explanation,
                 reason=None if entry["evidence"] else entry["status"],
                 metadata={"status": entry["status"], "evidence": entry["evidence"], "outcome": entry})


def _entry_metadata(entry: dict) -> dict:
    keys = ("slug", "version", "content_hash", "suite", "category", "tier", "difficulty", "status", "evidence",
            "failed_tests", "dropped_files", "tokens", "usd_cost", "price", "model_answered")
    return {k: entry.get(k) for k in keys}


def _usage(entry: dict):
    from inspect_ai.model import ModelUsage
    tokens = entry.get("tokens") or {}
    if not tokens and entry.get("usd_cost") is None:
        return None
    uncached, output = tokens.get("input", 0), tokens.get("output", 0)
    cache_read, cache_write = tokens.get("cache_read", 0), tokens.get("cache_write", 0)
    return ModelUsage(input_tokens=uncached, output_tokens=output,
                      total_tokens=uncached + cache_read + cache_write + output,
                      input_tokens_cache_read=cache_read or None, input_tokens_cache_write=cache_write or None,
                      reasoning_tokens=tokens.get("reasoning"), total_cost=entry.get("usd_cost"))


def _usage_total(model: str, samples: list) -> dict:
    usages = [s.output.usage for s in samples if s.output.usage is not None]
    if not usages:
        return {}
    total = usages[0]
    for usage in usages[1:]:
        total = total + usage
    return {model: total}


class InspectReporter(Reporter):
    """`--report inspect:DIR`: each draw of the run as an Inspect eval log in DIR, with the files
    the model left in each task's working directory."""

    name = "inspect"
    opt_in = True
    wants_files = True

    def __init__(self, log_dir: Path | None = None):
        self.log_dir = log_dir
        self.files: dict = {}  # run_id -> slug -> {name: bytes}

    def configured(self, argument: str | None) -> "InspectReporter":
        if not argument:
            raise SbError("--report inspect needs a folder for the logs: --report inspect:DIR")
        inspect_installed()
        from sb.inputs import writable_dir
        writable_dir(Path(argument), "--report inspect:DIR")
        return InspectReporter(Path(argument))

    def task_finished(self, entry: dict, doc: dict, files: dict) -> None:
        self.files.setdefault(doc["run_id"], {})[entry["slug"]] = files

    def report(self, doc: dict, path: Path) -> Path:
        assert self.log_dir is not None, "configured() first"
        return write_log(doc, self.log_dir, self.files.get(doc["run_id"], {}), source=path)


@hookimpl
def register_reporters(register):
    register(InspectReporter())
