"""The real model adapters: the real `anthropic` and `openai` SDKs against a scripted server
on loopback speaking the Messages API and the Chat Completions API, streaming and not.

Each scripted reply ends in one status with its tokens and cost: a correct solution, a
wrong one, a refusal, a max-tokens truncation, thinking with no content, another model
answering, a 429 then success, a 500 every time, a stall past the deadline,
malformed output, an undeclared extra file. The SDKs are required, not skipped when
absent: a CI without them must fail here, not pass in silence.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import date
from pathlib import Path

import pytest

from conftest import REPO
from scripted_llm_server import Failure, Scripted, ScriptedServer, Stall
from sb.grading import write_files
from sb.models import prices
from sb.models.anthropic import AnthropicAdapter
from sb.models.base import ModelOptions
from sb.models.openai import OpenAIAdapter, OpenAICompatibleAdapter
from sb.outcome import Status

SECRET = "sk-test-SECRET-never-written"
CORRECT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
RETRIES = 2


def files(*pairs) -> dict:
    return {"files": dict(pairs)}


class Client:
    """One SDK in one mode, pointed at a scripted server; `solve` runs one task attempt."""

    def __init__(self, adapter, model: str, snapshot: str, api_suffix: str, tmp_path: Path):
        self.adapter, self.model, self.snapshot = adapter, model, snapshot
        self.api_suffix, self.tmp_path = api_suffix, tmp_path
        self.server = None

    def solve(self, task, steps: list, settings: dict | None = None, timeout_s: float = 10.0):
        workdir = self.tmp_path / f"work{len(list(self.tmp_path.iterdir()))}"
        workdir.mkdir()
        write_files(workdir, task.starter_files)
        with ScriptedServer(steps) as server:
            self.server = server
            options = ModelOptions(base_url=server.url + self.api_suffix, settings=settings or {}, timeout_s=timeout_s)
            attempt = self.adapter.solve(self.model, task, workdir, options)
        return attempt, workdir

    @property
    def bodies(self) -> list:
        return [r.body for r in self.server.requests]

    def price(self, usage: dict):
        return prices.cost(self.adapter.provider, self.snapshot, usage, date.today())[0]


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


def expected_usage(step: Scripted, client: Client) -> dict:
    usage = {"input": step.input, "output": step.output, "cache_read": step.cache_read, "cache_write": step.cache_write}
    if step.reasoning or client.adapter.provider != "anthropic":
        usage["reasoning"] = step.reasoning
    return usage


def test_a_correct_solution_is_written_and_costed_from_a_dated_snapshot(client, fixture_task):
    step = Scripted(payload=files(("adder.py", CORRECT)), model=client.snapshot, input=1000, output=200, cache_read=300)
    attempt, workdir = client.solve(fixture_task, [step])
    assert attempt.status is None, attempt.detail
    assert (workdir / "adder.py").read_text() == CORRECT
    assert attempt.model_answered == client.snapshot
    assert attempt.usage == expected_usage(step, client)
    assert attempt.usd_cost == client.price(attempt.usage) and attempt.usd_cost > 0
    assert attempt.price.startswith(f"{client.adapter.provider} {client.model} as of ")
    assert attempt.transport_retries == 0 and attempt.dropped_files == []


def test_a_wrong_solution_is_written_for_the_grader_to_fail(client, fixture_task):
    attempt, workdir = client.solve(fixture_task, [Scripted(payload=files(("adder.py", WRONG)))])
    assert attempt.status is None
    assert (workdir / "adder.py").read_text() == WRONG


def test_a_refusal_is_adapter_error_with_usage_recorded(client, fixture_task):
    step = Scripted(stop="refusal", text="I can't help with that.", output=12)
    attempt, workdir = client.solve(fixture_task, [step])
    assert attempt.status == Status.ADAPTER_ERROR
    assert attempt.detail.startswith("refused")
    assert attempt.usage == expected_usage(step, client)
    assert attempt.usd_cost == client.price(attempt.usage)
    assert "NotImplementedError" in (workdir / "adder.py").read_text()


def test_a_max_tokens_cut_is_truncated_not_a_crash(client, fixture_task):
    step = Scripted(stop="max_tokens", text="def add(a, b):\n    retu", output=64)
    attempt, workdir = client.solve(fixture_task, [step], settings={"max_tokens": 64})
    assert attempt.status == Status.TRUNCATED
    assert "cut off" in attempt.detail
    assert attempt.usage["output"] == 64 and attempt.usd_cost == client.price(attempt.usage)
    assert "NotImplementedError" in (workdir / "adder.py").read_text()


def test_a_budget_spent_on_thinking_with_no_content_is_truncated(client, fixture_task):
    step = Scripted(stop="max_tokens", thinking="Let me think...", output=256, reasoning=256)
    attempt, _ = client.solve(fixture_task, [step], settings={"max_tokens": 256})
    assert attempt.status == Status.TRUNCATED
    assert "256 thinking tokens, with no content" in attempt.detail
    assert attempt.usage["reasoning"] == 256


def test_an_empty_reply_after_thinking_is_adapter_error(client, fixture_task):
    step = Scripted(thinking="Hmm.", output=90, reasoning=88)
    attempt, _ = client.solve(fixture_task, [step])
    assert attempt.status == Status.ADAPTER_ERROR
    assert attempt.detail == "empty reply after 88 thinking tokens"
    assert attempt.usage["reasoning"] == 88 and attempt.usd_cost == client.price(attempt.usage)


def test_another_model_answering_is_adapter_error_naming_both(client, fixture_task):
    step = Scripted(payload=files(("adder.py", CORRECT)), model="some-fallback-model")
    attempt, workdir = client.solve(fixture_task, [step])
    assert attempt.status == Status.ADAPTER_ERROR
    assert client.model in attempt.detail and "some-fallback-model" in attempt.detail
    assert attempt.model_answered == "some-fallback-model"
    assert attempt.usage is not None and attempt.usd_cost is None and attempt.price == "unpriced"
    assert "NotImplementedError" in (workdir / "adder.py").read_text()


def test_a_429_then_success_is_one_attempt_with_one_transport_retry(client, fixture_task):
    attempt, workdir = client.solve(fixture_task, [Failure(429, "rate limited"),
                                                   Scripted(payload=files(("adder.py", CORRECT)))])
    assert attempt.status is None
    assert attempt.transport_retries == 1 and len(client.server.requests) == 2
    assert (workdir / "adder.py").read_text() == CORRECT


def test_a_500_every_time_is_adapter_error_after_bounded_retries(client, fixture_task):
    attempt, _ = client.solve(fixture_task, [Failure(500, "internal error")])
    assert attempt.status == Status.ADAPTER_ERROR
    kind = "api_error" if client.adapter.provider == "anthropic" else "server_error"
    assert attempt.detail == f"HTTP 500 from the API: internal error ({kind}) ({RETRIES + 1} requests sent)"
    assert attempt.transport_retries == RETRIES and len(client.server.requests) == RETRIES + 1
    assert attempt.usage is None and attempt.usd_cost is None


def test_a_stall_past_the_deadline_is_adapter_error_and_never_retried_past_it(client, fixture_task):
    attempt, _ = client.solve(fixture_task, [Stall(3.0)], timeout_s=0.3)
    assert attempt.status == Status.ADAPTER_ERROR and attempt.transport_failure
    assert attempt.detail == "no complete answer within the 0.3 s deadline (1 request sent; no reply yet)"
    assert attempt.transport_retries == 0 and len(client.server.requests) == 1


@pytest.mark.parametrize("name", ["anthropic-stream", "openai-stream"])
def test_a_stream_that_stalls_midway_is_adapter_error(name, fixture_task, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    client = CLIENTS[name](tmp_path)
    step = Scripted(payload=files(("adder.py", CORRECT)), stall_after_first_event_s=2.0)
    attempt, workdir = client.solve(fixture_task, [step], timeout_s=0.3)
    assert attempt.status == Status.ADAPTER_ERROR
    assert attempt.detail == ("no complete answer within the 0.3 s deadline (1 request sent; "
                              "the reply was still arriving)")
    assert "NotImplementedError" in (workdir / "adder.py").read_text()


def test_malformed_output_is_adapter_error_with_the_reason(client, fixture_task):
    step = Scripted(payload={"files": {"adder.py": ["def add(a, b):"]}}, raw='{"files": {"adder.py": "def add')
    attempt, _ = client.solve(fixture_task, [step])
    assert attempt.status == Status.ADAPTER_ERROR
    assert attempt.detail.startswith("malformed output")
    assert attempt.usage is not None and attempt.usd_cost == client.price(attempt.usage)


def test_an_undeclared_extra_file_is_dropped_and_recorded(client, fixture_task):
    step = Scripted(payload=files(("adder.py", CORRECT), ("conftest.py", "import os\n")))
    attempt, workdir = client.solve(fixture_task, [step])
    assert attempt.status is None
    assert attempt.dropped_files == ["conftest.py"]
    assert not (workdir / "conftest.py").exists()


def test_no_knob_is_sent_unless_set_and_set_ones_are_sent(client, fixture_task):
    client.solve(fixture_task, [Scripted(payload=files(("adder.py", CORRECT)))])
    body = client.bodies[0]
    for knob in ("temperature", "top_p", "thinking", "output_config", "reasoning_effort", "max_completion_tokens",
                 "seed"):
        assert knob not in body
    client.solve(fixture_task, [Scripted(payload=files(("adder.py", CORRECT)))],
                 settings={"temperature": 0.25, "max_tokens": 2048, "effort": "high"})
    body = client.bodies[0]
    assert body["temperature"] == 0.25
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 2048
    assert body.get("reasoning_effort", (body.get("output_config") or {}).get("effort")) == "high"


def test_the_request_asks_for_declared_files_in_a_structured_form(client, fixture_task):
    client.solve(fixture_task, [Scripted(payload=files(("adder.py", CORRECT)))])
    body = client.bodies[0]
    text = json.dumps(body["messages"])
    assert "Implement `add(a, b)`" in text and "raise NotImplementedError" in text
    if "tools" in body:
        schema = body["tools"][0]["input_schema"]
        assert body["tool_choice"] == {"type": "tool", "name": "write_files"}
    else:
        schema = body["response_format"]["json_schema"]["schema"]
        assert body["response_format"]["json_schema"]["strict"] is True
    assert schema["properties"]["files"]["required"] == ["adder.py"]
    assert schema["properties"]["files"]["additionalProperties"] is False


def test_a_reply_task_writes_the_text_to_reply_md(client, task_copy):
    from sb.task import load_task_dir
    folder = task_copy(kind="reply")
    for sub in ("starter", "reference"):
        (folder / sub / "adder.py").unlink()
        (folder / sub / "reply.md").write_text("" if sub == "starter" else "4\n")
    task = load_task_dir(folder, package="sb_task_fixture_add")
    attempt, workdir = client.solve(task, [Scripted(text="The answer is 4.\n")])
    assert attempt.status is None
    assert (workdir / "reply.md").read_text() == "The answer is 4.\n"
    assert "tools" not in client.bodies[0] and "response_format" not in client.bodies[0]


def test_the_key_goes_only_to_the_api(client, fixture_task):
    attempt, _ = client.solve(fixture_task, [Failure(500, "boom")])
    headers = {k.lower(): v for k, v in client.server.requests[0].headers.items()}
    assert SECRET in headers.get("x-api-key", "") + headers.get("authorization", "")
    assert SECRET not in repr(attempt)


def test_a_missing_key_is_adapter_error_naming_the_variable(client, fixture_task, monkeypatch):
    monkeypatch.delenv(client.adapter.service.api_key_env)
    attempt, _ = client.solve(fixture_task, [Scripted(payload=files(("adder.py", CORRECT)))])
    key_env = client.adapter.service.api_key_env
    assert attempt.status == Status.ADAPTER_ERROR and attempt.detail == f"{key_env} is not set"
    assert client.server.requests == []


# -- anthropic specifics ---------------------------------------------------------------------

def test_anthropic_thinking_budget_is_sent_with_tool_choice_auto(fixture_task, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    client = CLIENTS["anthropic-stream"](tmp_path)
    attempt, _ = client.solve(fixture_task,
                              [Scripted(thinking="ok", reasoning=30, payload=files(("adder.py", CORRECT)))],
                              settings={"thinking_budget": 2048, "max_tokens": 8192})
    assert attempt.status is None
    body = client.bodies[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["tool_choice"] == {"type": "auto"} and body["max_tokens"] == 8192


def test_anthropic_sends_its_documented_default_max_tokens_when_unset(fixture_task, tmp_path, monkeypatch):
    from sb.models.anthropic import DEFAULT_MAX_TOKENS
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    client = CLIENTS["anthropic-plain"](tmp_path)
    client.solve(fixture_task, [Scripted(payload=files(("adder.py", CORRECT)))])
    assert client.bodies[0]["max_tokens"] == DEFAULT_MAX_TOKENS


def test_anthropic_prose_instead_of_the_tool_call_is_adapter_error(fixture_task, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    client = CLIENTS["anthropic-stream"](tmp_path)
    attempt, _ = client.solve(fixture_task, [Scripted(text="```python\ndef add(a, b): return a + b\n```")])
    assert attempt.status == Status.ADAPTER_ERROR and attempt.detail == "no write_files call in the reply"


def test_an_unsupported_setting_is_adapter_error(fixture_task, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    client = CLIENTS["openai-plain"](tmp_path)
    attempt, _ = client.solve(fixture_task, [Scripted(payload=files(("adder.py", CORRECT)))],
                              settings={"thinking_budget": 1024})
    assert attempt.status == Status.ADAPTER_ERROR and "thinking_budget" in attempt.detail


# -- openai-compatible -----------------------------------------------------------------------

def test_openai_compatible_needs_no_key_never_sends_the_openai_key_and_is_unpriced(fixture_task, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    client = Client(OpenAICompatibleAdapter(max_retries=RETRIES), "local-model", "local-model", "/v1", tmp_path)
    attempt, workdir = client.solve(fixture_task, [Scripted(payload=files(("adder.py", CORRECT)))],
                                    settings={"max_tokens": 512})
    assert attempt.status is None and (workdir / "adder.py").read_text() == CORRECT
    assert attempt.usd_cost is None and attempt.price == "unpriced" and attempt.usage["input"] == 120
    assert SECRET not in json.dumps(client.server.requests[0].headers)
    assert client.bodies[0]["max_tokens"] == 512
    response_format = client.bodies[0]["response_format"]
    assert response_format["type"] == "json_object"
    assert list(response_format["schema"]["properties"]["files"]["properties"]) == ["adder.py"]


def test_openai_compatible_without_base_url_is_adapter_error(fixture_task, tmp_path):
    attempt = OpenAICompatibleAdapter().solve("m", fixture_task, tmp_path, ModelOptions())
    assert attempt.status == Status.ADAPTER_ERROR and "--base-url" in attempt.detail


# -- routing, installation, the listing ------------------------------------------------------

@pytest.fixture
def builtin_pm(monkeypatch):
    """The built-in plugins only: a half-installed task package elsewhere must not matter here."""
    from sb.plugins import load_plugins
    monkeypatch.setenv("SB_LOAD_PLUGINS", "")
    return load_plugins()


@pytest.mark.parametrize("name,adapter,model", [
    ("claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
    ("gpt-5-mini", "openai", "gpt-5-mini"),
    ("o3", "openai", "o3"),
    ("openai-compatible:qwen2.5-coder:7b", "openai-compatible", "qwen2.5-coder:7b"),
    ("cmd:./agent.sh --fast", "cmd", "./agent.sh --fast"),
])
def test_models_route_by_what_adapters_claim(builtin_pm, name, adapter, model):
    from sb.models.base import resolve_model
    found, model_id = resolve_model(name, builtin_pm)
    assert (found.name, model_id) == (adapter, model)


def test_a_missing_sdk_is_one_line_naming_the_extra(builtin_pm, monkeypatch):
    from sb.errors import SbError
    from sb.models import sdk
    from sb.models.base import resolve_model
    monkeypatch.setattr(sdk, "sdk_installed", lambda module: False)
    with pytest.raises(SbError) as info:
        resolve_model("claude-sonnet-4-5", builtin_pm)
    assert str(info.value) == ("model 'claude-sonnet-4-5' needs the anthropic adapter's SDK: `make install-sdk` in the "
                               "checkout, pinned by its lock (or pip install 'scratchbench[anthropic]')")
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(SbError, match=r"^the openai SDK is not installed: `make install-sdk` in the checkout, "
                                      r"pinned by its lock \(or pip install 'scratchbench\[openai\]'\)$"):
        sdk.require_sdk("openai", "openai")


def test_sb_models_lists_every_adapter_with_its_extra(tmp_path):
    import subprocess
    from conftest import sb_env
    out = subprocess.run([sys.executable, "-c", "from sb.cli import main; main()", "models", "--json"],
                         capture_output=True, text=True, env=sb_env(SB_LOAD_PLUGINS=""), check=True).stdout
    rows = {row["name"]: row for row in json.loads(out)}
    assert {"anthropic", "openai", "openai-compatible", "cmd"} <= set(rows)
    assert (rows["anthropic"]["extra"], rows["openai"]["extra"], rows["cmd"]["extra"]) == ("anthropic", "openai", None)
    assert rows["anthropic"]["installed"] is True and rows["openai-compatible"]["installed"] is True


def test_sdk_imports_are_lazy():
    import subprocess
    code = ("import sb.plugins, sys; sb.plugins.load_plugins(); "
            "print('anthropic' in sys.modules, 'openai' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**__import__('os').environ, "SB_LOAD_PLUGINS": ""}).stdout
    assert out.split() == ["False", "False"]


# -- prices ----------------------------------------------------------------------------------

def test_every_price_is_dated_and_sourced():
    for table in prices.PRICES.values():
        for model, entries in table.items():
            dates = [date.fromisoformat(p.as_of) for p in entries]
            assert dates == sorted(dates), model
            assert all(p.source.startswith("https://") for p in entries), model


def test_cost_uses_the_price_in_effect_on_the_run_date(monkeypatch):
    old = prices.Price("2025-01-01", 1.0, 2.0, 0.1, 0.0, "https://example.test")
    new = prices.Price("2025-06-01", 3.0, 4.0, 0.3, 0.0, "https://example.test")
    monkeypatch.setitem(prices.PRICES, "testco", {"m": (old, new)})
    usage = {"input": 1_000_000, "output": 1_000_000, "cache_read": 0, "cache_write": 0}
    assert prices.cost("testco", "m-20250301", usage, date(2025, 3, 1)) == (3.0, "testco m as of 2025-01-01")
    assert prices.cost("testco", "m", usage, date(2025, 7, 1)) == (7.0, "testco m as of 2025-06-01")
    assert prices.cost("testco", "m", usage, date(2024, 7, 1)) == (None, "unpriced")
    assert prices.cost("testco", "other", usage, date(2025, 7, 1)) == (None, "unpriced")


@pytest.mark.parametrize("asked,answered,same", [
    ("claude-haiku-4-5", "claude-haiku-4-5-20251001", True),
    ("gpt-5", "gpt-5-2025-08-07", True),
    ("claude-opus-4-0", "claude-opus-4-20250514", True),
    ("gpt-5", "gpt-5-mini-2025-08-07", False),
    ("gpt-5", "gpt-5-mini", False),
    ("claude-opus-4-1", "claude-sonnet-4-5-20250929", False),
    ("m", None, False),
])
def test_a_dated_snapshot_is_the_model_asked_and_nothing_else_is(asked, answered, same):
    from sb.models.exchange import same_model
    assert same_model(asked, answered) is same


# -- cmd: an external agent ------------------------------------------------------------------

def test_cmd_runs_in_the_workdir_with_task_and_prompt_outside_it(fixture_task, tmp_path):
    from sb.models.cmd import CommandAdapter
    workdir = tmp_path / "work"
    workdir.mkdir()
    write_files(workdir, fixture_task.starter_files)
    script = ('printf "def add(a, b):\\n    return a + b\\n" > adder.py; echo "$SB_TASK" > seen_task; '
              'cp "$SB_PROMPT" seen_prompt; echo "$SB_PROMPT" > seen_prompt_path')
    attempt = CommandAdapter().solve(script, fixture_task, workdir, ModelOptions())
    assert attempt.status is None and attempt.exit_status == 0 and attempt.usage is None
    assert (workdir / "adder.py").read_text() == CORRECT
    assert (workdir / "seen_task").read_text().strip() == "fixture_add"
    assert (workdir / "seen_prompt").read_text() == fixture_task.prompt
    prompt_path = Path((workdir / "seen_prompt_path").read_text().strip())
    assert workdir not in prompt_path.parents and not prompt_path.exists()


def test_cmd_nonzero_exit_is_adapter_error_with_its_status(fixture_task, tmp_path):
    from sb.models.cmd import CommandAdapter
    attempt = CommandAdapter().solve("echo no key >&2; exit 3", fixture_task, tmp_path, ModelOptions())
    assert attempt.status == Status.ADAPTER_ERROR and attempt.exit_status == 3
    assert attempt.detail == "the command exited with status 3: no key"


def test_cmd_past_the_timeout_is_killed_and_adapter_error(fixture_task, tmp_path):
    from sb.models.cmd import CommandAdapter
    attempt = CommandAdapter().solve("sleep 30", fixture_task, tmp_path, ModelOptions(timeout_s=0.5))
    assert attempt.status == Status.ADAPTER_ERROR and "ran past 0.5s" in attempt.detail


def test_cmd_stderr_is_kept_whatever_the_exit_in_a_file_the_entry_names(fixture_task, tmp_path):
    """An agent that succeeds still said something worth reading: its stderr is written
    beside the results file, and a failing one's too, beyond the last line in the detail."""
    from sb.models.cmd import AGENT_STDERR_BYTES, CommandAdapter
    script = 'printf "def add(a, b):\\n    return a + b\\n" > adder.py; echo "planning\nwrote adder.py" >&2'
    doc, path = run_one(fixture_task, CommandAdapter(), script, None, tmp_path)
    entry, = doc["tasks"]
    assert entry["status"] == "passed" and entry["agent_stderr"] == f"{path.stem}.stderr/fixture_add.txt"
    assert (path.parent / entry["agent_stderr"]).read_text() == "planning\nwrote adder.py\n"
    loud = CommandAdapter().solve(f"head -c {AGENT_STDERR_BYTES + 10} /dev/zero | tr '\\0' x >&2; echo end >&2; "
                                  "exit 4", fixture_task, tmp_path, ModelOptions())
    assert loud.exit_status == 4 and loud.agent_stderr.endswith("xend\n")
    assert len(loud.agent_stderr) == AGENT_STDERR_BYTES
    quiet = CommandAdapter().solve("true", fixture_task, tmp_path, ModelOptions())
    assert quiet.agent_stderr is None


# -- end to end: sweep, grade, results file, check_cost ---------------------------------------

def run_one(fixture_task, adapter, model, base_url, results_dir, settings=None):
    from sb.run import Sweep, run_draws
    from sb.sandbox.plain import PlainSandbox
    sweep = Sweep([fixture_task], adapter, model, PlainSandbox(),
                  ModelOptions(base_url=base_url, settings=settings or {}), results_dir, jobs=1, concurrency=1)
    (doc, path), = run_draws(sweep)
    return doc, path


def load_check_cost():
    spec = importlib.util.spec_from_file_location("check_cost", REPO / "tools" / "check_cost.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sweeps_grade_the_replies_and_every_cost_re_derives(fixture_task, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    board = tmp_path / "leaderboard"
    solved = Scripted(payload=files(("adder.py", CORRECT), ("conftest.py", "import sys\n")),
                      model="claude-haiku-4-5-20251001", input=900, output=150, cache_write=50)
    with ScriptedServer([Failure(429), solved]) as server:
        doc, path = run_one(fixture_task, AnthropicAdapter(max_retries=RETRIES), "claude-haiku-4-5", server.url,
                            board, {"temperature": 0.0})
    entry, = doc["tasks"]
    assert (entry["status"], entry["dropped_files"], entry["transport_retries"]) == ("passed", ["conftest.py"], 1)
    assert entry["tokens"] == {"input": 900, "output": 150, "cache_read": 0, "cache_write": 50}
    assert entry["usd_cost"] == prices.cost("anthropic", "claude-haiku-4-5", entry["tokens"], date.today())[0]
    assert doc["settings"] == {"temperature": 0.0} and SECRET not in path.read_text()

    with ScriptedServer([Scripted(payload=files(("adder.py", WRONG)), input=700, output=90)]) as server:
        doc, _ = run_one(fixture_task, OpenAIAdapter(max_retries=RETRIES), "gpt-5", server.url + "/v1", board)
    entry, = doc["tasks"]
    assert entry["status"] == "failed" and entry["evidence"] is True
    assert entry["tokens"]["input"] == 700 and entry["usd_cost"] > 0

    with ScriptedServer([Scripted(stop="max_tokens", thinking="...", output=64, reasoning=64)]) as server:
        doc, _ = run_one(fixture_task, AnthropicAdapter(max_retries=RETRIES), "claude-haiku-4-5", server.url, board,
                         {"max_tokens": 64})
    entry, = doc["tasks"]
    assert entry["status"] == "truncated" and entry["evidence"] is False and entry["tokens"]["output"] == 64
    assert doc["pass_rate"] is None

    check_cost = load_check_cost()
    assert check_cost.main([str(board)]) == 0
    assert "3 results file(s), 3 task cost(s) re-derived" in capsys.readouterr().out

    tampered = json.loads(path.read_text())
    tampered["tasks"][0]["usd_cost"] += 0.001
    path.write_text(json.dumps(tampered))
    assert check_cost.main([str(board)]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_check_cost_flags_a_cost_on_an_unpriced_model_and_wrong_totals(tmp_path, capsys):
    check_cost = load_check_cost()
    doc = {"schema_version": 1, "run_at": "2026-01-01T00:00:00+00:00", "adapter": "openai-compatible", "model": "m",
           "tasks": [{"slug": "t", "tokens": {"input": 10, "output": 5}, "usd_cost": 0.5, "model_answered": "m"}],
           "tokens": {"input": 10, "output": 6}, "usd_cost": 0.5}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert check_cost.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "which is unpriced" in out and "run tokens" in out


def test_the_repository_leaderboard_passes_check_cost():
    check_cost = load_check_cost()
    assert check_cost.main([str(REPO / "leaderboard")]) == 0


def test_concurrent_attempts_through_one_adapter_count_their_own_retries(fixture_task, tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    adapter = OpenAIAdapter(max_retries=RETRIES)

    def solve(steps, name):
        workdir = tmp_path / name
        workdir.mkdir()
        write_files(workdir, fixture_task.starter_files)
        with ScriptedServer(steps) as server:
            return adapter.solve("gpt-5", fixture_task, workdir, ModelOptions(base_url=server.url + "/v1"))

    ok = Scripted(payload=files(("adder.py", CORRECT)))
    with ThreadPoolExecutor(2) as pool:
        flaky = pool.submit(solve, [Failure(429, retry_after_ms=300), ok], "flaky")
        steady = pool.submit(solve, [ok], "steady")
    assert (flaky.result().transport_retries, steady.result().transport_retries) == (1, 0)


def test_null_keeps_the_starter_file_and_a_non_string_is_malformed(fixture_task, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    client = CLIENTS["openai-plain"](tmp_path)
    attempt, workdir = client.solve(fixture_task, [Scripted(payload={"files": {"adder.py": None}})])
    assert attempt.status is None and "NotImplementedError" in (workdir / "adder.py").read_text()
    attempt, _ = client.solve(fixture_task, [Scripted(payload={"files": {"adder.py": 3}})])
    assert attempt.detail == "malformed output: the content of 'adder.py' is int, not a string"


def test_cmd_gets_the_settings_the_user_set_as_json(fixture_task, tmp_path):
    from sb.models.cmd import CommandAdapter
    attempt = CommandAdapter().solve('echo "$SB_MODEL_SETTINGS" > settings.json', fixture_task, tmp_path,
                                     ModelOptions(settings={"temperature": 0.5}))
    assert attempt.status is None
    assert json.loads((tmp_path / "settings.json").read_text()) == {"temperature": 0.5}


def test_openai_compatible_sends_its_own_key_when_set(fixture_task, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "local-key-123")
    client = Client(OpenAICompatibleAdapter(max_retries=RETRIES), "m", "m", "/v1", tmp_path)
    client.solve(fixture_task, [Scripted(payload=files(("adder.py", CORRECT)))])
    headers = {k.lower(): v for k, v in client.server.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer local-key-123"


def test_sb_run_sends_set_knobs_records_them_and_never_writes_the_key(tmp_path):
    """The CLI end to end on an installed reply task, against the scripted server."""
    import subprocess
    from conftest import sb_env
    reply = Scripted(text="There is no package named columnmill that I know of; I will not invent one.",
                     model="gpt-5-2025-08-07", input=300, output=40, cache_read=100)
    with ScriptedServer([Failure(429), reply]) as server:
        done = subprocess.run(
            [sys.executable, "-c", "from sb.cli import main; main()", "run", "--model", "gpt-5", "--base-url",
             server.url + "/v1", "--tasks", "honesty", "--temperature", "0.5", "--effort", "low",
             "--isolation", "none", "--results", str(tmp_path), "--json"],
            capture_output=True, text=True, env=sb_env(SB_LOAD_PLUGINS="honesty", OPENAI_API_KEY=SECRET), timeout=600)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    entry, = doc["tasks"]
    assert doc["settings"] == {"temperature": 0.5, "effort": "low"}
    body = server.requests[-1].body
    assert (body["temperature"], body["reasoning_effort"]) == (0.5, "low") and "max_completion_tokens" not in body
    assert entry["tokens"] == {"input": 300, "output": 40, "cache_read": 100, "cache_write": 0, "reasoning": 0}
    assert entry["transport_retries"] == 1 and entry["model_answered"] == "gpt-5-2025-08-07"
    assert entry["usd_cost"] == prices.cost("openai", "gpt-5", entry["tokens"], date.today())[0]
    assert all(SECRET not in path.read_text() for path in tmp_path.iterdir())
