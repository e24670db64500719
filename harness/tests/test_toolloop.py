"""The tool_loop kind: the harness drives the conversation and writes the transcript."""

from __future__ import annotations

import json

from sb.catalog import load_tasks
from sb.models.base import ModelAdapter, ModelOptions
from sb.outcome import Status
from sb.run import Sweep, run_draws
from sb.toolloop import ModelTurn, ToolCall, drive_tool_loop


class Scripted:
    def __init__(self, turns):
        self.turns = list(turns)
        self.seen = []

    def step(self, results):
        self.seen.append(results)
        return self.turns.pop(0)


class ScriptAdapter(ModelAdapter):
    name = "script"

    def __init__(self, turns):
        self.session = Scripted(turns)

    def solve(self, model, task, workdir, options):
        raise AssertionError("a tool_loop task must never ask the model for files")

    def tool_session(self, model, task, tools, options):
        assert {t["name"] for t in tools} == {"list_warehouses", "get_stock", "convert"}
        return self.session


def test_bad_calls_get_error_results_and_the_loop_goes_on(tmp_path):
    task = load_tasks()["tools"]
    adapter = ScriptAdapter([
        ModelTurn(calls=[ToolCall("a", "no_such_tool", {}), ToolCall("b", "get_stock", "not json")],
                  usage={"input": 10, "output": 3}),
        ModelTurn(text="ANSWER: 1.00", usage={"input": 12, "output": 2}),
    ])
    attempt = drive_tool_loop(adapter, "m", task, tmp_path, ModelOptions())
    transcript = json.loads((tmp_path / "transcript.json").read_text())
    assert transcript["ended"] == "answer" and transcript["final_answer"] == "ANSWER: 1.00"
    assert transcript["turns"][0]["results"][0].startswith("error: no tool named")
    assert adapter.session.seen[1][1][1] == "error: arguments are not a JSON object"
    assert attempt.usage == {"input": 22, "output": 5}


def test_the_loop_stops_at_its_bound(tmp_path):
    task = load_tasks()["tools"]
    forever = [ModelTurn(calls=[ToolCall(str(i), "list_warehouses", {"region": "north"})]) for i in range(50)]
    drive_tool_loop(ScriptAdapter(forever), "m", task, tmp_path, ModelOptions())
    transcript = json.loads((tmp_path / "transcript.json").read_text())
    assert transcript["ended"] == "max_turns" and len(transcript["turns"]) == transcript["max_turns"]


def test_truncated_turn_is_no_evidence(tmp_path):
    task = load_tasks()["tools"]
    attempt = drive_tool_loop(ScriptAdapter([ModelTurn(truncated=True)]), "m", task, tmp_path, ModelOptions())
    assert attempt.status == Status.TRUNCATED


def test_an_adapter_without_tool_support_is_adapter_error(tmp_path, plain_sandbox):
    class FilesOnly(ModelAdapter):
        name = "files-only"

        def solve(self, model, task, workdir, options):
            (workdir / "transcript.json").write_text('{"ended": "answer"}')  # would be a forged record
            from sb.models.base import Attempt
            return Attempt()

    sweep = Sweep([load_tasks()["tools"]], FilesOnly(), "m", plain_sandbox, results_dir=tmp_path)
    ((doc, _),) = run_draws(sweep)
    assert doc["tasks"][0]["status"] == "adapter_error"
