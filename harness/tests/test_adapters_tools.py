"""Tool loops through the real `anthropic` and `openai` SDKs' native tool interfaces (Messages
`tool_use`/`tool_result`, Chat Completions `tool_calls`/`role: tool`), streaming and not,
against the scripted server; the transcripts are graded by the real `tools` task's hidden
tests in the `none` sandbox.

Each loop ends in one status with its tokens, cost and retries summed over its turns: the
right answer (passed), a schema-invalid argument, broken argument JSON, an unknown tool
(each failed), a truncation mid-loop, a 500 mid-loop, a refusal, another model answering;
and `--repeat 3` shows an intermittent tool-call failure as 2/3.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date

import pytest

from scripted_llm_server import Call, Failure, Scripted, ScriptedServer
from sb.session import default_session
from sb.models import prices
from sb.models.anthropic import AnthropicAdapter
from sb.models.base import ModelOptions
from sb.models.openai import OpenAIAdapter, OpenAICompatibleAdapter
from sb.outcome import Status
from sb.run import Sweep, run_draws
from sb.sandbox.plain import PlainSandbox
from sb.toolloop import drive_tool_loop

SECRET = "sk-test-SECRET-never-written"
RETRIES = 2
NORTH = ["WH-101", "WH-104", "WH-107", "WH-110"]
STOCK = [(120.5, "kg"), (300.0, "lb"), (2500.0, "g"), (0.0, "kg")]  # the toolbox's, in NORTH's order
ANSWER = "ANSWER: 259.08"  # 120.5 + 300 x 0.45359237 + 2.5 + 0 = 259.077711 kg


def list_turn(**usage) -> Scripted:
    return Scripted(calls=[Call("list_warehouses", {"region": "north"})], input=400, output=30, **usage)


def stock_turn(**usage) -> Scripted:
    return Scripted(calls=[Call("get_stock", {"warehouse_id": w, "sku": "TEA-042"}) for w in NORTH],
                    input=520, output=90, **usage)


def convert_turn(quantity=lambda q: q, **usage) -> Scripted:
    return Scripted(calls=[Call("convert", {"quantity": quantity(q), "from_unit": unit, "to_unit": "kg"})
                           for q, unit in STOCK], input=700, output=110, **usage)


def answer_turn(text: str = ANSWER, **usage) -> Scripted:
    return Scripted(text=text, input=900, output=12, **usage)


def right_loop(model: str | None = None) -> list:
    return [list_turn(model=model), stock_turn(model=model, cache_read=200), convert_turn(model=model),
            answer_turn(model=model)]


def summed(steps: list, reasoning: bool) -> dict:
    usage = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    for step in steps:
        for key in usage:
            usage[key] += getattr(step, key)
    return {**usage, "reasoning": 0} if reasoning else usage


class Client:
    """One SDK in one mode against a scripted server: `loop` drives one tool loop through a
    real sweep (graded), `drive` through drive_tool_loop alone."""

    def __init__(self, adapter, model: str, snapshot: str, api_suffix: str, tmp_path):
        self.adapter, self.model, self.snapshot = adapter, model, snapshot
        self.api_suffix, self.tmp_path = api_suffix, tmp_path
        self.server = None

    @property
    def anthropic(self) -> bool:
        return self.adapter.provider == "anthropic"

    def options(self, settings=None) -> ModelOptions:
        return ModelOptions(base_url=self.server.url + self.api_suffix, settings=settings or {}, timeout_s=10.0)

    def loop(self, steps: list, settings: dict | None = None) -> dict:
        with ScriptedServer(list(steps)) as self.server:  # the server consumes its list
            tools = default_session().tasks()["tools"]
            sweep = Sweep([tools], self.adapter, self.model, PlainSandbox(), self.options(settings),
                          self.tmp_path / "results", jobs=1, concurrency=1)
            (doc, _), = run_draws(sweep)
        return doc["tasks"][0]

    def drive(self, steps: list, settings: dict | None = None):
        workdir = self.tmp_path / f"work{len(list(self.tmp_path.iterdir()))}"
        workdir.mkdir()
        with ScriptedServer(list(steps)) as self.server:  # the server consumes its list
            tools = default_session().tasks()["tools"]
            attempt = drive_tool_loop(self.adapter, self.model, tools, workdir, self.options(settings))
        return attempt, json.loads((workdir / "transcript.json").read_text())

    @property
    def bodies(self) -> list:
        return [r.body for r in self.server.requests]

    def price(self, usage: dict):
        return prices.cost(self.adapter.provider, self.snapshot, usage, date.today())[0]

    def results_sent(self, body: dict) -> list:
        """(call id, result text) the request hands back for the previous turn, native form."""
        if self.anthropic:
            blocks = body["messages"][-1]["content"]
            return [(b["tool_use_id"], b["content"]) for b in blocks if b["type"] == "tool_result"]
        tail = []
        for message in reversed(body["messages"]):
            if message["role"] != "tool":
                break
            tail.insert(0, (message["tool_call_id"], message["content"]))
        return tail

    def calls_echoed(self, body: dict) -> list:
        """(call id, name, arguments as sent back) of the assistant turn before the results."""
        if self.anthropic:
            blocks = body["messages"][-2]["content"]
            return [(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"]
        assistant = next(m for m in reversed(body["messages"]) if m["role"] == "assistant")
        return [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in assistant["tool_calls"]]


CLIENTS = {
    "anthropic-stream": lambda tmp: Client(AnthropicAdapter(max_retries=RETRIES, stream=True),
                                           "claude-haiku-4-5", "claude-haiku-4-5-20251001", "", tmp),
    "anthropic-plain": lambda tmp: Client(AnthropicAdapter(max_retries=RETRIES, stream=False),
                                          "claude-haiku-4-5", "claude-haiku-4-5-20251001", "", tmp),
    "openai-plain": lambda tmp: Client(OpenAIAdapter(max_retries=RETRIES, stream=False),
                                       "gpt-5", "gpt-5-2025-08-07", "/v1", tmp),
    "openai-stream": lambda tmp: Client(OpenAIAdapter(max_retries=RETRIES, stream=True),
                                        "gpt-5", "gpt-5-2025-08-07", "/v1", tmp),
}


@pytest.fixture(params=sorted(CLIENTS))
def client(request, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return CLIENTS[request.param](tmp_path)


def test_a_loop_that_calls_tools_and_answers_right_passes_with_every_turn_paid_for(client):
    steps = right_loop(client.snapshot)
    entry = client.loop([steps[0], Failure(429, "rate limited"), *steps[1:]])
    assert entry["status"] == "passed", entry
    assert entry["tokens"] == summed(steps, reasoning=not client.anthropic)
    assert entry["usd_cost"] == client.price(entry["tokens"]) and entry["usd_cost"] > 0
    assert entry["price"].startswith(f"{client.adapter.provider} {client.model} as of ")
    assert entry["model_answered"] == client.snapshot
    assert entry["transport_retries"] == 1 and len(client.bodies) == 5


def test_the_loop_speaks_the_native_tool_interface_and_sends_no_knob(client):
    attempt, transcript = client.drive(right_loop())
    assert attempt.status is None and transcript["final_answer"] == ANSWER
    first, second, third = client.bodies[:3]
    assert first["messages"] == [{"role": "user", "content": default_session().tasks()["tools"].prompt}]
    assert "system" not in first and "tool_choice" not in first and "response_format" not in first
    knobs = ("temperature", "top_p", "thinking", "output_config", "reasoning_effort", "max_completion_tokens", "seed")
    assert not [knob for knob in knobs if knob in first]
    names = [t["name"] for t in first["tools"]] if client.anthropic else [t["function"]["name"] for t in first["tools"]]
    assert names == ["list_warehouses", "get_stock", "convert"]
    if client.anthropic:
        assert first["tools"][1]["input_schema"]["required"] == ["warehouse_id", "sku"]
    else:
        assert first["tools"][1] == {"type": "function", "function": {
            "name": "get_stock", "description": first["tools"][1]["function"]["description"],
            "parameters": first["tools"][1]["function"]["parameters"]}}
        assert "strict" not in first["tools"][1]["function"]
    echoed = client.calls_echoed(second)
    assert [name for _, name, _ in echoed] == ["list_warehouses"]
    assert client.results_sent(second) == [(echoed[0][0], json.dumps(NORTH))]
    assert [r for _, r in client.results_sent(third)] == [json.dumps({"quantity": q, "unit": u}) for q, u in STOCK]
    assert [json.dumps(c["arguments"]) for c in transcript["turns"][1]["calls"]] == [
        json.dumps({"warehouse_id": w, "sku": "TEA-042"}) for w in NORTH]


def test_a_schema_invalid_argument_is_graded_failed_even_with_the_right_answer(client):
    steps = [list_turn(), stock_turn(), convert_turn(quantity=str), answer_turn()]
    entry = client.loop(steps)
    assert entry["status"] == "failed" and entry["evidence"] is True
    assert any("schema" in t for t in entry["failed_tests"]), entry["failed_tests"]
    assert entry["tokens"] == summed(steps, reasoning=not client.anthropic)


def test_broken_argument_json_is_passed_on_raw_never_repaired(client):
    broken = '{"warehouse_id": "WH-104", "sku": "TEA-042"'
    stock = stock_turn()
    stock.calls[1] = Call("get_stock", broken)
    steps = [list_turn(), stock, Scripted(calls=[Call("get_stock", {"warehouse_id": "WH-104", "sku": "TEA-042"})]),
             convert_turn(), answer_turn()]
    attempt, transcript = client.drive(steps)
    assert attempt.status is None
    assert transcript["turns"][1]["calls"][1]["arguments"] == broken
    assert client.results_sent(client.bodies[2])[1][1] == "error: arguments are not a JSON object"
    # the history holds what the model sent where the API allows: Messages requires an object there
    assert client.calls_echoed(client.bodies[2])[1][2] == ({} if client.anthropic else broken)
    entry = client.loop(steps)
    assert entry["status"] == "failed" and "arguments_valid" in " ".join(entry["failed_tests"])


def test_an_unknown_tool_gets_an_error_result_and_is_graded_failed(client):
    steps = [Scripted(calls=[Call("get_inventory", {"region": "north"})]), *right_loop()]
    attempt, transcript = client.drive(steps)
    assert attempt.status is None and len(transcript["turns"]) == 5
    assert client.results_sent(client.bodies[1])[0][1] == "error: no tool named 'get_inventory'"
    entry = client.loop(steps)
    assert entry["status"] == "failed" and "real_tool" in " ".join(entry["failed_tests"])


def test_a_turn_cut_off_mid_loop_is_truncated_with_every_turn_paid_for(client):
    steps = [list_turn(), Scripted(stop="max_tokens", text="I will now look up", output=64)]
    entry = client.loop(steps, settings={"max_tokens": 64})
    assert entry["status"] == "truncated" and entry["evidence"] is False
    assert "turn 2" in entry["detail"] and "cut off" in entry["detail"]
    assert entry["tokens"] == summed(steps, reasoning=not client.anthropic)
    assert entry["usd_cost"] == client.price(entry["tokens"])
    assert all(b.get("max_tokens", b.get("max_completion_tokens")) == 64 for b in client.bodies)


def test_a_500_mid_loop_is_adapter_error_with_the_usage_so_far(client):
    steps = [list_turn(), stock_turn(), Failure(500, "internal error")]
    entry = client.loop(steps)
    assert entry["status"] == "adapter_error" and entry["evidence"] is False
    assert entry["detail"].startswith("turn 3: HTTP 500 from the API")
    assert entry["detail"].endswith(f"({RETRIES + 1} requests sent)")
    assert entry["tokens"] == summed(steps[:2], reasoning=not client.anthropic)
    assert entry["usd_cost"] == client.price(entry["tokens"]) and entry["usd_cost"] > 0
    assert entry["transport_retries"] == RETRIES and len(client.bodies) == 2 + RETRIES + 1


def test_another_model_answering_mid_loop_is_adapter_error_naming_both(client):
    steps = [list_turn(model=client.snapshot), stock_turn(model="some-fallback-model")]
    attempt, transcript = client.drive(steps)
    assert attempt.status == Status.ADAPTER_ERROR
    assert attempt.detail.startswith("turn 2: ") and client.model in attempt.detail
    assert "some-fallback-model" in attempt.detail and attempt.model_answered == "some-fallback-model"
    assert attempt.usage == summed(steps, reasoning=not client.anthropic)
    assert attempt.usd_cost is None and attempt.price == "unpriced"
    assert len(transcript["turns"]) == 1 and transcript["ended"] == "adapter_error"
    assert len(client.bodies) == 2  # no turn after the fallback


def test_a_refusal_mid_loop_is_adapter_error_with_its_usage(client):
    steps = [list_turn(), Scripted(stop="refusal", text="I can't help with that.", output=9)]
    attempt, _ = client.drive(steps)
    assert attempt.status == Status.ADAPTER_ERROR and attempt.detail.startswith("turn 2: refused")
    assert attempt.usage == summed(steps, reasoning=not client.anthropic)
    assert attempt.usd_cost == client.price(attempt.usage)


def test_set_knobs_are_sent_on_every_turn(client):
    settings = {"temperature": 0.25, "max_tokens": 2048, "effort": "high"}
    attempt, _ = client.drive(right_loop(), settings)
    assert attempt.status is None and len(client.bodies) == 4
    for body in client.bodies:
        assert body["temperature"] == 0.25
        assert body.get("max_tokens", body.get("max_completion_tokens")) == 2048
        assert body.get("reasoning_effort", (body.get("output_config") or {}).get("effort")) == "high"


def test_the_scripted_server_rejects_results_that_do_not_answer_the_calls():
    from scripted_llm_server import tool_protocol_error
    asked = {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "x", "input": {}}]}
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"}]}
    wrong = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "1"}]}
    assert tool_protocol_error([{"role": "user", "content": "q"}, asked, answer], True) == ""
    assert "do not answer" in tool_protocol_error([asked, wrong], True)
    asked = {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}, {"id": "b"}]}
    assert tool_protocol_error([asked, {"role": "tool", "tool_call_id": "a"}, {"role": "tool", "tool_call_id": "b"}],
                               False) == ""
    assert "do not answer" in tool_protocol_error([asked, {"role": "tool", "tool_call_id": "a"}], False)


# -- specifics ------------------------------------------------------------------------------

def test_anthropic_thinking_blocks_go_back_with_their_signature(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    client = CLIENTS["anthropic-stream"](tmp_path)
    steps = right_loop()
    steps[0].thinking, steps[0].reasoning = "Start with the region.", 20
    attempt, _ = client.drive(steps, {"thinking_budget": 1024, "max_tokens": 4096})
    assert attempt.status is None and attempt.usage["reasoning"] == 20
    assistant = client.bodies[1]["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {"type": "thinking", "thinking": "Start with the region.",
                                       "signature": "c2lnbmF0dXJl"}
    assert client.bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert "tool_choice" not in client.bodies[0]


def test_openai_compatible_loop_is_unpriced_and_never_sends_the_openai_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    client = Client(OpenAICompatibleAdapter(max_retries=RETRIES), "local-model", "local-model", "/v1", tmp_path)
    attempt, transcript = client.drive(right_loop(), {"max_tokens": 512})
    assert attempt.status is None and transcript["final_answer"] == ANSWER
    assert attempt.usd_cost is None and attempt.price == "unpriced" and attempt.usage["input"] == 2520
    assert all(SECRET not in json.dumps(r.headers) for r in client.server.requests)
    assert all(b["max_tokens"] == 512 and "response_format" not in b for b in client.bodies)


def test_a_missing_key_ends_the_loop_before_any_request(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    client = CLIENTS["anthropic-plain"](tmp_path)
    attempt, transcript = client.drive(right_loop())
    assert attempt.status == Status.ADAPTER_ERROR and attempt.detail == "ANTHROPIC_API_KEY is not set"
    assert client.bodies == [] and transcript["turns"] == [] and attempt.usage is None


def test_an_unsupported_setting_ends_the_loop_before_any_request(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    client = CLIENTS["openai-plain"](tmp_path)
    attempt, _ = client.drive(right_loop(), {"thinking_budget": 1024})
    assert attempt.status == Status.ADAPTER_ERROR and "thinking_budget" in attempt.detail
    assert client.bodies == []


# -- end to end: the CLI, --repeat, the variance report, check_cost ---------------------------

def test_repeat_3_reports_k_of_3_for_an_intermittent_tool_call_failure(tmp_path):
    """Three draws of `sb run --tasks tools`, the second sending a string where the schema says
    number: the variance report says 2/3 and 'split', and every cost re-derives."""
    from conftest import REPO, sb_env
    snapshot = "gpt-5-2025-08-07"
    flaky = [list_turn(model=snapshot), stock_turn(model=snapshot), convert_turn(quantity=str, model=snapshot),
             answer_turn(model=snapshot)]
    sb = [sys.executable, "-c", "from sb.cli import main; main()"]
    env = sb_env(SB_LOAD_PLUGINS="tools", OPENAI_API_KEY=SECRET)
    with ScriptedServer([*right_loop(snapshot), *flaky, *right_loop(snapshot)]) as server:
        done = subprocess.run([*sb, "run", "--model", "gpt-5", "--base-url", server.url + "/v1", "--tasks", "tools",
                               "--repeat", "3", "--isolation", "none", "--results", str(tmp_path), "--json"],
                              capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    draws = json.loads(done.stdout)
    assert [d["tasks"][0]["status"] for d in draws] == ["passed", "failed", "passed"]
    assert len(server.requests) == 12
    report = subprocess.run([*sb, "report", "--variance", "--results", str(tmp_path)],
                            capture_output=True, text=True, env=env, timeout=600)
    assert report.returncode == 0, report.stderr
    row = next(line for line in report.stdout.splitlines() if line.startswith("tools "))
    assert row.split()[2:4] == ["2/3", "split"], report.stdout
    check = subprocess.run([sys.executable, str(REPO / "tools" / "check_cost.py"), str(tmp_path)],
                           capture_output=True, text=True, env=env, timeout=600)
    assert check.returncode == 0, check.stdout + check.stderr
    assert all(SECRET not in path.read_text() for path in tmp_path.iterdir())
