"""The tool_loop kind: the harness drives the conversation and writes the transcript."""

from __future__ import annotations

import json

from sb.session import default_session
from sb.models.base import ModelAdapter, ModelOptions, ToolSession
from sb.outcome import Status
from sb.run import Sweep, run_draws
from sb.toolloop import ModelTurn, ToolCall, drive_tool_loop


class Scripted(ToolSession):
    def __init__(self, turns):
        self.turns = list(turns)
        self.seen = []

    def step(self, results):
        self.seen.append(results)
        return self.turns.pop(0)


class ScriptAdapter(ModelAdapter):
    name = "script"
    supports_tool_loops = True

    def __init__(self, turns):
        self.session = Scripted(turns)

    def solve(self, model, task, workdir, options):
        raise AssertionError("a tool_loop task must never ask the model for files")

    def tool_session(self, model, task, tools, options):
        assert {t["name"] for t in tools} == {"list_warehouses", "get_stock", "convert"}
        return self.session


def test_bad_calls_get_error_results_and_the_loop_goes_on(tmp_path):
    task = default_session().tasks()["tools"]
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
    task = default_session().tasks()["tools"]
    forever = [ModelTurn(calls=[ToolCall(str(i), "list_warehouses", {"region": "north"})]) for i in range(50)]
    drive_tool_loop(ScriptAdapter(forever), "m", task, tmp_path, ModelOptions())
    transcript = json.loads((tmp_path / "transcript.json").read_text())
    assert transcript["ended"] == "max_turns" and len(transcript["turns"]) == transcript["max_turns"]


def test_truncated_turn_is_no_evidence(tmp_path):
    task = default_session().tasks()["tools"]
    attempt = drive_tool_loop(ScriptAdapter([ModelTurn(truncated=True)]), "m", task, tmp_path, ModelOptions())
    assert attempt.status == Status.TRUNCATED


def test_an_adapter_without_tool_support_is_adapter_error(tmp_path, plain_sandbox):
    class FilesOnly(ModelAdapter):
        name = "files-only"

        def solve(self, model, task, workdir, options):
            (workdir / "transcript.json").write_text('{"ended": "answer"}')  # would be a forged record
            from sb.models.base import Attempt
            return Attempt()

    sweep = Sweep([default_session().tasks()["tools"]], FilesOnly(), "m", plain_sandbox, results_dir=tmp_path)
    ((doc, _),) = run_draws(sweep)
    assert doc["tasks"][0]["status"] == "adapter_error"


class Failing(Scripted):
    """A session whose API fails on the turn after its script runs out."""

    provider = "anthropic"
    transport_retries = 0

    def step(self, results):
        if not self.turns:
            from sb.toolloop import SessionError
            self.transport_retries += 3
            raise SessionError("HTTP 500 from the API: boom (4 request(s), 3 retried)")
        return super().step(results)


def test_an_api_error_mid_loop_is_adapter_error_with_usage_cost_and_retries_so_far(tmp_path):
    from datetime import date
    from sb.models import prices
    task = default_session().tasks()["tools"]
    adapter = ScriptAdapter([])
    adapter.session = Failing([ModelTurn(calls=[ToolCall("c1", "list_warehouses", {"region": "north"})],
                                         usage={"input": 1000, "output": 50}, model="claude-haiku-4-5-20251001")])
    attempt = drive_tool_loop(adapter, "claude-haiku-4-5", task, tmp_path, ModelOptions())
    assert attempt.status == Status.ADAPTER_ERROR and attempt.detail.startswith("turn 2: HTTP 500")
    assert attempt.usage == {"input": 1000, "output": 50} and attempt.transport_retries == 3
    assert attempt.model_answered == "claude-haiku-4-5-20251001"
    assert (attempt.usd_cost, attempt.price) == prices.cost("anthropic", "claude-haiku-4-5-20251001", attempt.usage,
                                                            date.today())
    transcript = json.loads((tmp_path / "transcript.json").read_text())
    assert transcript["ended"] == "adapter_error" and len(transcript["turns"]) == 1


def test_an_api_session_naming_another_model_ends_the_loop(tmp_path):
    task = default_session().tasks()["tools"]
    adapter = ScriptAdapter([])
    adapter.session = Failing([ModelTurn(text="ANSWER: 1.00", usage={"input": 5, "output": 1}, model="other-model")])
    attempt = drive_tool_loop(adapter, "claude-haiku-4-5", task, tmp_path, ModelOptions())
    assert attempt.status == Status.ADAPTER_ERROR and "'other-model'" in attempt.detail
    assert attempt.usage == {"input": 5, "output": 1} and attempt.price == "unpriced"


def test_a_crashing_session_is_adapter_error_not_a_dead_sweep(tmp_path):
    class Crashing(ToolSession):
        def step(self, results):
            raise KeyError("choices")

    task = default_session().tasks()["tools"]
    adapter = ScriptAdapter([])
    adapter.session = Crashing()
    attempt = drive_tool_loop(adapter, "m", task, tmp_path, ModelOptions())
    assert attempt.status == Status.ADAPTER_ERROR and attempt.detail == "turn 1: KeyError: 'choices'"
    assert (tmp_path / "transcript.json").exists()


def test_the_cmd_adapter_cannot_drive_a_tool_loop(tmp_path, plain_sandbox):
    from sb.models.cmd import CommandAdapter
    sweep = Sweep([default_session().tasks()["tools"]], CommandAdapter(), "true", plain_sandbox, results_dir=tmp_path)
    ((doc, _),) = run_draws(sweep)
    entry = doc["tasks"][0]
    assert (entry["status"], entry["detail"]) == ("adapter_error", "adapter 'cmd' cannot drive tool loops")
