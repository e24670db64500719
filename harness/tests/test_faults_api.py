"""Faults of a model API, through the real `anthropic` and `openai` SDKs (streaming and not)
against the scripted server on loopback: every fault ends in one status with its detail in
plain words, its tokens, its cost, its retries and whether the sweep's circuit breaker
counts it (`transport_failure`). A reply that never finished is never graded; one deadline
(`--timeout`) bounds each request, retries and keep-alive pings included; a retry-after past
the cap (`--retry-after-cap`) ends the attempt at once; an overloaded error mid-stream is
retried as its HTTP 529 is; a refused key (401, 403) opens the sweep's circuit breaker at
once; a tool call with broken JSON goes on with a tool error the API accepts, in every
provider mode (openai-compatible included).

The server is bounded (every wait and loop ends with the server's lifetime), and the SDK
backoff between retries is shortened here, so the whole file stays well under a minute.
"""

from __future__ import annotations

import functools
import json
import re
import socket
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from scripted_llm_server import Call, Failure, Raw, Scripted, ScriptedServer, Stall, Trickle
from sb.session import default_session
from sb.models import deadline, reply_body, retry
from sb.models.anthropic import AnthropicAdapter
from sb.models.base import ModelOptions
from sb.models.openai import OpenAIAdapter, OpenAICompatibleAdapter
from sb.outcome import Status
from sb.toolloop import drive_tool_loop, load_toolbox
from test_adapters import CLIENTS, CORRECT, RETRIES, SECRET, Client, expected_usage, files
from test_adapters_tools import NORTH, answer_turn, convert_turn, list_turn, right_loop, stock_turn, summed

MODES = tuple(sorted(CLIENTS))
COMPATIBLE = {  # openai-compatible: the openai SDK against the user's own server, unpriced
    "compatible-plain": lambda tmp: Client(OpenAICompatibleAdapter(max_retries=RETRIES, stream=False),
                                           "local-model", "local-model", "/v1", tmp),
    "compatible-stream": lambda tmp: Client(OpenAICompatibleAdapter(max_retries=RETRIES, stream=True),
                                            "local-model", "local-model", "/v1", tmp),
}
ALL_MODES = MODES + tuple(sorted(COMPATIBLE))
STREAMED = ("anthropic-stream", "openai-stream")
PLAIN = ("anthropic-plain", "openai-plain")
WORST_CASE_MARGIN_S = 1.5  # docs/models.md: the adapter returns at the deadline; this is scheduling slack
OK = Scripted(payload=files(("adder.py", CORRECT)))
EXPLAINED = {"type": "refusal", "category": "cyber", "explanation": "The request looks like malware development."}


@pytest.fixture(autouse=True)
def keys_and_quick_backoff(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setattr(retry, "FIRST_BACKOFF_S", 0.01)  # the schedule's shape is the SDKs'; its length is not tested


ADAPTERS: dict = {}


def client_for(mode: str, tmp_path):
    """One of test_adapters' clients, its adapter (and so its connection pool, whose TLS
    context costs a quarter of a second to build) shared by every test of this mode."""
    client = {**CLIENTS, **COMPATIBLE}[mode](tmp_path)
    client.adapter = ADAPTERS.setdefault(mode, client.adapter)
    return client


def anthropic(client) -> bool:
    return client.adapter.provider == "anthropic"


def per_client(value, client):
    """A case's expectation: as given, or computed from the client (its provider, its model)."""
    return value(client) if callable(value) else value


@dataclass
class Fault:
    steps: list
    status: Status | None          # None: the reply's files are left for the grader
    detail: object = ""            # the exact detail, a compiled pattern, or a function of the client
    tokens: object = None          # the Scripted step whose usage is recorded, or None
    retries: int = 0
    no_answer: bool = True         # transport_failure: the circuit breaker counts it
    modes: tuple = MODES
    settings: dict = field(default_factory=dict)
    timeout_s: float = 10.0
    usage_missing: bool = False
    priced: bool = True            # the model that answered has a price


def in_an_hour() -> str:
    return format_datetime(datetime.now(timezone.utc) + timedelta(hours=1), usegmt=True)


STEP_USAGE = Scripted(payload=files(("adder.py", CORRECT)), model="some-fallback-model", input=300, output=50)
CUT_TEXT = Scripted(stop="max_tokens", text="def add(a, b):\n    retu", output=64)
THINKING = Scripted(thinking="Hmm.", output=90, reasoning=88)
REFUSAL = Scripted(stop="refusal", text="I can't help with that.", output=12, stop_details=EXPLAINED)
NON_STRING = Scripted(payload={"files": {"adder.py": 3}})
UNDECLARED = Scripted(payload=files(("adder.py", CORRECT), ("conftest.py", "import os\n"),
                                    ("../escape.py", "x = 1\n"), ("/tmp/sb-absolute.py", "x = 1\n")))
NO_USAGE = Scripted(payload=files(("adder.py", CORRECT)), no_usage=True)
CUT_BODY = '{"id": "msg_1", "type": "message", "content": ['
OVERLOADED_MID_STREAM = Scripted(payload=files(("adder.py", CORRECT)), stream_error="overloaded_error")

FAULTS = {
    # what already worked, kept working
    "429-then-success": Fault([Failure(429, "slow down", error_type="rate_limit_error"), OK], None, tokens=OK,
                              retries=1, no_answer=False),
    "500-every-time": Fault([Failure(500, "boom", error_type="api_error")], Status.ADAPTER_ERROR,
                            "HTTP 500 from the API: boom (api_error) (3 requests sent)", retries=2),
    "529-every-time": Fault([Failure(529, "Overloaded", error_type="overloaded_error")], Status.ADAPTER_ERROR,
                            "HTTP 529 from the API: Overloaded (overloaded_error) (3 requests sent)", retries=2),
    "400-is-not-retried": Fault([Failure(400, "max_tokens: too large", error_type="invalid_request_error")],
                                Status.ADAPTER_ERROR, "HTTP 400 from the API: max_tokens: too large "
                                "(invalid_request_error) (1 request sent)", no_answer=False),
    "502-with-an-html-body": Fault([Raw("<html>bad gateway</html>", status=502, content_type="text/html")],
                                   Status.ADAPTER_ERROR, "HTTP 502 from the API: a body that is not JSON: "
                                   "'<html>bad gateway</html>' (3 requests sent)", retries=2),
    "model-substitution": Fault([STEP_USAGE], Status.ADAPTER_ERROR,
                                lambda c: f"asked for model {c.model!r}, answered by 'some-fallback-model' "
                                          "(no fallback accepted)", tokens=STEP_USAGE, no_answer=False, priced=False),
    "max-tokens": Fault([CUT_TEXT], Status.TRUNCATED,
                        lambda c: "cut off at max_tokens (64 output tokens)" if anthropic(c)
                        else "cut off at the output limit (finish_reason length)",
                        tokens=CUT_TEXT, no_answer=False, settings={"max_tokens": 64}),
    "thinking-only": Fault([THINKING], Status.ADAPTER_ERROR, "empty reply after 88 thinking tokens", tokens=THINKING,
                           no_answer=False),
    "refusal-keeps-the-explanation": Fault([REFUSAL], Status.ADAPTER_ERROR,
                                           lambda c: f"refused: {EXPLAINED['explanation']}" if anthropic(c)
                                           else "refused: I can't help with that.", tokens=REFUSAL, no_answer=False),
    "malformed-output": Fault([NON_STRING], Status.ADAPTER_ERROR,
                              "malformed output: the content of 'adder.py' is int, not a string",
                              tokens=NON_STRING, no_answer=False),
    "undeclared-and-traversing-names": Fault([UNDECLARED], None, tokens=UNDECLARED, no_answer=False),
    "missing-usage": Fault([NO_USAGE], None, no_answer=False, usage_missing=True),
    "negative-usage": Fault([Scripted(payload=files(("adder.py", CORRECT)), input=-5)], Status.ADAPTER_ERROR,
                            "the API reported -5 input tokens (not a count >= 0)", no_answer=False),
    "huge-usage": Fault([Scripted(payload=files(("adder.py", CORRECT)), output=10**9)], Status.ADAPTER_ERROR,
                        "the API reported 1000000000 output tokens, beyond any model's limit (2000000): not trusted",
                        no_answer=False),
    # a retry-after past the cap, or past the deadline: the attempt ends at once
    "retry-after-past-the-cap": Fault([Failure(429, "slow down", retry_after_ms=None, retry_after="3600",
                                               error_type="rate_limit_error")], Status.ADAPTER_ERROR,
                                      "rate limited: retry-after 3600 s exceeds the 60 s cap (1 request sent)"),
    "retry-after-date-past-the-cap": Fault([Failure(529, "Overloaded", retry_after_ms=None, retry_after=in_an_hour,
                                                    error_type="overloaded_error")], Status.ADAPTER_ERROR,
                                           re.compile(r"overloaded: retry-after 3[56]\d\d s exceeds the 60 s cap "
                                                      r"\(1 request sent\)"), modes=("openai-plain",)),
    "retry-after-past-the-deadline": Fault([Failure(429, "slow down", retry_after_ms=None, retry_after="30",
                                                    error_type="rate_limit_error")], Status.ADAPTER_ERROR,
                                           "no complete answer within the 1 s deadline (1 request sent; the last got "
                                           "HTTP 429 from the API: slow down (rate_limit_error); the next try, 30 s "
                                           "away, would start past it)", timeout_s=1.0),
    # replies that never finished: never graded
    "stream-cut-in-the-tool-arguments": Fault([Scripted(payload=files(("adder.py", CORRECT)), cut_after=3)],
                                              Status.ADAPTER_ERROR, "the reply stream ended before the message was "
                                              "complete (no message_stop after 3 events, the last a "
                                              "content_block_delta) (1 request sent)", modes=("anthropic-stream",)),
    "stream-cut-in-the-content": Fault([Scripted(payload=files(("adder.py", CORRECT)), cut_after=2)],
                                       Status.ADAPTER_ERROR, "the reply stream ended without a finish_reason: the "
                                       "completion never finished (2 chunks) (1 request sent)",
                                       modes=("openai-stream",)),
    "stream-cut-before-message-stop": Fault([Scripted(payload=files(("adder.py", CORRECT)), cut_after=6)],
                                            Status.ADAPTER_ERROR, "the reply stream ended before the message was "
                                            "complete (no message_stop after 6 events, the last a message_delta) "
                                            "(1 request sent)", modes=("anthropic-stream",)),
    "no-stop-reason": Fault([Scripted(payload=files(("adder.py", CORRECT)), no_stop=True)], Status.ADAPTER_ERROR,
                            lambda c: "the reply has no stop_reason: the message never finished (1 request sent)"
                            if anthropic(c) else "the completion has no finish_reason: it never finished "
                                                 "(1 request sent)", modes=PLAIN),
    # an overloaded error mid-stream (after the 200) is retried as its HTTP 529 is, under the same bounds
    "overloaded-mid-stream": Fault([Scripted(payload=files(("adder.py", CORRECT)), stream_error="overloaded_error")],
                                   Status.ADAPTER_ERROR, "the reply stream broke off after 1 event with an error "
                                   "from the API: Overloaded (overloaded_error) (3 requests sent)", retries=2,
                                   modes=STREAMED),
    "overloaded-mid-stream-then-success": Fault([OVERLOADED_MID_STREAM, OK], None, tokens=OK, retries=1,
                                                no_answer=False, modes=STREAMED),
    "overloaded-mid-stream-retry-after-past-the-cap": Fault(
        [replace(OVERLOADED_MID_STREAM, retry_after="3600")], Status.ADAPTER_ERROR,
        "overloaded mid-stream: retry-after 3600 s exceeds the 60 s cap (1 request sent)", modes=STREAMED),
    "overloaded-mid-stream-retry-after-past-the-deadline": Fault(
        [replace(OVERLOADED_MID_STREAM, retry_after="30")], Status.ADAPTER_ERROR,
        "no complete answer within the 1 s deadline (1 request sent; the last got an error event mid-stream: "
        "Overloaded (overloaded_error); the next try, 30 s away, would start past it)", timeout_s=1.0, modes=STREAMED),
    "other-error-mid-stream-is-not-retried": Fault([replace(OVERLOADED_MID_STREAM, stream_error="api_error")],
                                                   Status.ADAPTER_ERROR, "the reply stream broke off after 1 event "
                                                   "with an error from the API: Api (api_error) (1 request sent)",
                                                   modes=STREAMED),
    # --retry-after-cap: the cap is the user's
    "retry-after-past-a-lower-cap": Fault([Failure(429, "slow down", retry_after_ms=None, retry_after="10",
                                                   error_type="rate_limit_error")], Status.ADAPTER_ERROR,
                                          "rate limited: retry-after 10 s exceeds the 5 s cap (1 request sent)",
                                          settings={"retry_after_cap_s": 5.0}),
    "retry-after-under-the-set-cap": Fault([Failure(529, "Overloaded", retry_after_ms=None, retry_after="0.2",
                                                     error_type="overloaded_error"), OK], None, tokens=OK, retries=1,
                                            no_answer=False, settings={"retry_after_cap_s": 0.5}),
    "a-zero-cap-refuses-any-retry-after": Fault([replace(OVERLOADED_MID_STREAM, retry_after="1")],
                                                Status.ADAPTER_ERROR, "overloaded mid-stream: retry-after 1 s exceeds "
                                                "the 0 s cap (1 request sent)", settings={"retry_after_cap_s": 0.0},
                                                modes=STREAMED),
    # bodies that are not the API's answer
    "body-not-json": Fault([Raw("<html>oops</html>", content_type="text/html")], Status.ADAPTER_ERROR,
                           "HTTP 200 with a body that is not JSON (17 bytes of text/html: '<html>oops</html>') "
                           "(1 request sent)", modes=PLAIN),
    "body-cut-json": Fault([Raw(CUT_BODY)], Status.ADAPTER_ERROR, "HTTP 200 with a body that is not JSON (cut off "
                           f"after {len(CUT_BODY)} bytes of application/json: {CUT_BODY!r}) (1 request sent)",
                           modes=PLAIN),
    "body-shorter-than-its-length": Fault([Raw(CUT_BODY, declared_length=400)], Status.ADAPTER_ERROR,
                                          f"the reply broke off after {len(CUT_BODY)} bytes: the server closed the "
                                          "connection before the end (1 request sent)"),
    "body-json-not-an-object": Fault([Raw("[1, 2]")], Status.ADAPTER_ERROR,
                                     "HTTP 200 with a JSON array instead of an object (1 request sent)", modes=PLAIN),
    "body-malformed": Fault([Raw('{"content": "hi", "choices": "hi"}')], Status.ADAPTER_ERROR,
                            lambda c: ("a malformed Messages reply: its content is a JSON string, not an array"
                                       if anthropic(c) else
                                       "a malformed completion: its choices are a JSON string, not an array")
                            + " (1 request sent)", modes=PLAIN),
    "json-instead-of-a-stream": Fault([Raw('{"id": "msg_1"}')], Status.ADAPTER_ERROR, "HTTP 200 with 15 bytes of "
                                      "application/json instead of an event stream: '{\"id\": \"msg_1\"}' "
                                      "(1 request sent)", modes=STREAMED),
    "event-not-json": Fault([Raw("data: oops\n\n", content_type="text/event-stream")], Status.ADAPTER_ERROR,
                            "streamed event 1 is not JSON: 'oops' (1 request sent)", modes=STREAMED),
}
CASES = [pytest.param(name, mode, id=f"{name}-{mode}") for name, fault in FAULTS.items() for mode in fault.modes]


@pytest.mark.parametrize("name,mode", CASES)
def test_each_fault_ends_in_one_status_with_its_detail_tokens_cost_and_retries(name, mode, tmp_path, fixture_task):
    fault, client = FAULTS[name], client_for(mode, tmp_path)
    attempt, workdir = client.solve(fixture_task, list(fault.steps), settings=fault.settings, timeout_s=fault.timeout_s)
    detail = per_client(fault.detail, client)
    assert attempt.status == fault.status, attempt.detail
    if isinstance(detail, re.Pattern):
        assert detail.fullmatch(attempt.detail), attempt.detail
    else:
        assert attempt.detail == detail
    tokens = expected_usage(fault.tokens, client) if fault.tokens is not None else None
    assert attempt.usage == tokens
    assert attempt.usd_cost == (client.price(tokens) if tokens and fault.priced else None)
    assert attempt.usd_cost is None or attempt.usd_cost > 0
    assert attempt.transport_retries == fault.retries and len(client.server.requests) == fault.retries + 1
    assert attempt.transport_failure is (fault.no_answer and fault.status is not None)
    assert attempt.usage_missing is fault.usage_missing
    assert SECRET not in repr(attempt)
    if fault.status is not None:  # nothing of a rejected reply is written: the starter stays
        assert "NotImplementedError" in (workdir / "adder.py").read_text()
    elif name == "undeclared-and-traversing-names":
        assert attempt.dropped_files == ["../escape.py", "/tmp/sb-absolute.py", "conftest.py"]
        assert sorted(p.name for p in workdir.iterdir()) == ["adder.py"]
        assert not (workdir.parent / "escape.py").exists()


@pytest.mark.parametrize("mode", ["anthropic-plain", "openai-stream"])
def test_a_server_that_refuses_connections_is_retried_then_named(mode, tmp_path, fixture_task):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = client_for(mode, tmp_path)
    suffix = "/v1" if client.adapter.provider == "openai" else ""
    attempt = client.adapter.solve(client.model, fixture_task, tmp_path,
                                   ModelOptions(base_url=f"http://127.0.0.1:{port}{suffix}", timeout_s=10.0))
    assert attempt.status == Status.ADAPTER_ERROR and attempt.transport_failure
    assert attempt.detail == "could not connect to the API (Connection refused) (3 requests sent)"
    assert attempt.transport_retries == 2 and attempt.usage is None and attempt.usd_cost is None



def test_the_retry_after_cap_setting_overrides_the_adapters_own(tmp_path, fixture_task):
    """`--retry-after-cap` (the setting) raises the cap as well as lowering it: a 0.1 s cap
    of the adapter's own lets a 0.3 s retry-after through once the setting says 1 s."""
    client = CLIENTS["openai-plain"](tmp_path)
    client.adapter = OpenAIAdapter(max_retries=RETRIES, stream=False, retry_after_cap_s=0.1)
    steps = [Failure(429, "slow down", retry_after_ms=None, retry_after="0.3", error_type="rate_limit_error"), OK]
    attempt, _ = client.solve(fixture_task, list(steps))
    assert attempt.detail == "rate limited: retry-after 0.3 s exceeds the 0.1 s cap (1 request sent)"
    attempt, _ = client.solve(fixture_task, list(steps), settings={"retry_after_cap_s": 1.0})
    assert attempt.status is None and attempt.transport_retries == 1, attempt.detail


# -- a refused key: the circuit breaker opens at once --------------------------------------------

REJECTIONS = {401: Failure(401, "invalid x-api-key", retry_after_ms=None, error_type="authentication_error"),
              403: Failure(403, "Your API key does not have permission to use the specified resource.",
                           retry_after_ms=None, error_type="permission_error")}


def fresh_client(mode: str, tmp_path):
    """A client whose adapter is its own: a refused key is remembered by the adapter."""
    return {**CLIENTS, **COMPATIBLE}[mode](tmp_path)


def key_words(client) -> str:
    return {"anthropic": "the key in ANTHROPIC_API_KEY", "openai": "the key in OPENAI_API_KEY",
            "openai-compatible": "the placeholder key (OPENAI_COMPATIBLE_API_KEY is not set)"}[client.adapter.name]


@pytest.mark.parametrize("status", sorted(REJECTIONS))
@pytest.mark.parametrize("mode", ALL_MODES)
def test_a_refused_key_is_never_retried_and_is_remembered_for_the_sweep(mode, status, tmp_path, fixture_task,
                                                                        monkeypatch):
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    client, failure = fresh_client(mode, tmp_path), REJECTIONS[status]
    attempt, _ = client.solve(fixture_task, [failure])
    detail = f"HTTP {status} from the API: {failure.message} ({failure.error_type}) (1 request sent)"
    assert attempt.status == Status.ADAPTER_ERROR and attempt.detail == detail
    assert attempt.transport_retries == 0 and len(client.server.requests) == 1 and attempt.transport_failure
    options = ModelOptions(base_url=client.server.url + client.api_suffix)
    assert (client.adapter.key_rejected(options)
            == f"the {client.adapter.name} API rejected {key_words(client)}: {detail}")
    assert client.adapter.key_rejected(ModelOptions(base_url="http://127.0.0.1:9/v1")) == ""  # another endpoint
    monkeypatch.setenv(client.adapter.service.api_key_env, "sk-test-another-key")
    assert client.adapter.key_rejected(options) == ""  # another key
    assert SECRET not in client.adapter.key_rejected(ModelOptions(base_url=options.base_url))


def test_a_refused_key_in_a_tool_loop_is_remembered_too(tmp_path):
    client = fresh_client("anthropic-stream", tmp_path)
    attempt, transcript = drive(client, [list_turn(), REJECTIONS[401]])
    assert attempt.detail == ("turn 2: HTTP 401 from the API: invalid x-api-key (authentication_error) "
                              "(1 request sent)") and attempt.transport_failure
    assert client.adapter.key_rejected(ModelOptions(base_url=client.server.url)).startswith(
        "the anthropic API rejected the key in ANTHROPIC_API_KEY: HTTP 401")


def copies(task, n: int) -> list:
    """n tasks that differ only by slug (one reference grading, cached by content)."""
    return [replace(task, meta=replace(task.meta, slug=f"{task.slug}_{i}")) for i in range(n)]


def sweep_for(adapter, model: str, tasks: list, base_url: str, results_dir):
    from sb.run import Sweep
    from sb.sandbox.plain import PlainSandbox
    return Sweep(tasks, adapter, model, PlainSandbox(), ModelOptions(base_url=base_url, timeout_s=10.0), results_dir,
                 jobs=2, concurrency=1)


def results_docs(folder) -> dict:
    return {doc["model"]: doc for doc in (json.loads(p.read_text()) for p in folder.glob("*.json"))}


def test_a_refused_key_stops_the_sweep_at_once_with_one_line_naming_the_status(fixture_task, tmp_path):
    """Before: a 401 was not a transport failure, so a sweep asked for every task with a key the
    API had refused. Now the first refusal stops it: one request, the rest left for --resume."""
    from sb.errors import Unavailable
    from sb.run import run_sweeps
    with ScriptedServer([REJECTIONS[401]]) as server:
        sweep = sweep_for(AnthropicAdapter(max_retries=RETRIES), "claude-haiku-4-5", copies(fixture_task, 4),
                          server.url, tmp_path / "results")
        with pytest.raises(Unavailable) as stopped:
            run_sweeps([sweep])
    assert str(stopped.value) == ("stopped at once: the anthropic API rejected the key in ANTHROPIC_API_KEY: HTTP 401 "
                                  "from the API: invalid x-api-key (authentication_error) (1 request sent); "
                                  "finished tasks are kept, --resume continues")
    assert len(server.requests) == 1
    doc, = results_docs(tmp_path / "results").values()
    assert doc["complete"] is False and [e["status"] for e in doc["tasks"]] == ["adapter_error"]


def test_a_refused_key_stops_every_sweep_of_that_provider_and_no_other(fixture_task, tmp_path):
    """Two models of one adapter, endpoint and key stop together; a third model elsewhere finishes."""
    from sb.errors import Unavailable
    from sb.run import run_sweeps
    tasks, anthropic_adapter = copies(fixture_task, 3), AnthropicAdapter(max_retries=RETRIES)
    with ScriptedServer([REJECTIONS[403]]) as refusing, ScriptedServer([OK]) as working:
        sweeps = [sweep_for(anthropic_adapter, "claude-haiku-4-5", tasks, refusing.url, tmp_path / "results"),
                  sweep_for(anthropic_adapter, "claude-scripted-second", tasks, refusing.url, tmp_path / "results"),
                  sweep_for(OpenAIAdapter(max_retries=RETRIES), "gpt-5", tasks, working.url + "/v1",
                            tmp_path / "results")]
        with pytest.raises(Unavailable) as stopped:
            run_sweeps(sweeps)
    assert str(stopped.value).startswith("stopped at once: the anthropic API rejected the key in ANTHROPIC_API_KEY: "
                                         "HTTP 403 from the API: ")
    assert 1 <= len(refusing.requests) <= 2  # the two models' first calls may have been in flight together
    docs = results_docs(tmp_path / "results")
    for model in ("claude-haiku-4-5", "claude-scripted-second"):
        assert docs[model]["complete"] is False and len(docs[model]["tasks"]) <= 1
    assert docs["gpt-5"]["complete"] is True
    assert [e["status"] for e in docs["gpt-5"]["tasks"]] == ["passed"] * 3

# -- the worst case: one deadline that nothing extends ------------------------------------------

WAITS = {
    "silence": ([Stall(30.0)], "no reply yet"),
    "trickled-pings": ([Trickle()], "the reply was still arriving"),
    "trickled-comments": ([Trickle(comments=True)], "the reply was still arriving"),
}


@pytest.mark.parametrize("name,mode", [("silence", "anthropic-plain"), ("silence", "openai-stream"),
                                       ("trickled-pings", "anthropic-stream"), ("trickled-pings", "openai-plain"),
                                       ("trickled-comments", "openai-stream")])
def test_a_server_that_never_answers_ends_the_task_within_the_deadline(name, mode, tmp_path, fixture_task):
    """Silence before any byte, pings (or JSON whitespace) for ever after the headers: the
    task ends at --timeout, never retried past it (the SDKs' own timeouts are per read, which
    a trickle resets for ever)."""
    steps, state = WAITS[name]
    client = client_for(mode, tmp_path)
    started = time.monotonic()
    attempt, _ = client.solve(fixture_task, steps, timeout_s=2.0)
    elapsed = time.monotonic() - started
    assert attempt.status == Status.ADAPTER_ERROR and attempt.transport_failure
    assert attempt.detail == f"no complete answer within the 2 s deadline (1 request sent; {state})"
    assert attempt.transport_retries == 0 and attempt.usage is None
    assert 2.0 <= elapsed < 2.0 + WORST_CASE_MARGIN_S, elapsed


def test_retries_and_their_waits_fit_inside_the_one_deadline(tmp_path, fixture_task):
    """A 429 every time with a retry-after under the cap, and retries to spare: the retries
    stop where the next wait would pass the deadline, which they never pass."""
    client = CLIENTS["openai-plain"](tmp_path)
    client.adapter = OpenAIAdapter(max_retries=50, stream=False)
    started = time.monotonic()
    attempt, _ = client.solve(fixture_task, [Failure(429, "slow down", retry_after_ms=600,
                                                     error_type="rate_limit_error")], timeout_s=2.0)
    elapsed = time.monotonic() - started
    sent = len(client.server.requests)
    assert attempt.status == Status.ADAPTER_ERROR and 2 <= sent <= 4  # one every 0.6 s, however loaded the machine
    assert attempt.detail == (f"no complete answer within the 2 s deadline ({sent} requests sent; the last got HTTP "
                              "429 from the API: slow down (rate_limit_error); the next try, 0.6 s away, would start "
                              "past it)")
    assert attempt.transport_retries == sent - 1
    assert elapsed < 2.0 + WORST_CASE_MARGIN_S


# -- tool loops ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def tools_task():
    return default_session().tasks()["tools"]  # the catalog takes a fifth of a second to load: once here


def drive(client, steps: list, timeout_s: float = 10.0, settings: dict | None = None):
    workdir = client.tmp_path / f"work{len(list(client.tmp_path.iterdir()))}"
    workdir.mkdir()
    with ScriptedServer(list(steps), parses_arguments=client.adapter.name == "openai-compatible") as client.server:
        options = ModelOptions(base_url=client.server.url + client.api_suffix, settings=settings or {},
                               timeout_s=timeout_s)
        attempt = drive_tool_loop(client.adapter, client.model, tools_task(), workdir, options)
    return attempt, json.loads((workdir / "transcript.json").read_text())


@pytest.fixture(params=MODES)
def loop_client(request, tmp_path):
    return client_for(request.param, tmp_path)


def results_sent(client, body: dict) -> list:
    if anthropic(client):
        return [b["content"] for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    return [m["content"] for m in body["messages"] if m["role"] == "tool"][-4:]


@pytest.mark.parametrize("mode", ALL_MODES)
def test_broken_argument_json_goes_on_with_a_tool_error_the_api_accepts(mode, tmp_path):
    """Recorded as sent; the assistant turn goes back in a form the server accepts, the error as
    its tool result: Messages requires an object input (a 400 otherwise); vLLM and llama.cpp
    parse Chat arguments (a failed request otherwise), so openai-compatible sends "{}" (before,
    the broken text, which the scripted server, parsing as they do, now rejects); OpenAI's
    API takes any string, so it gets back what the model sent."""
    client, broken = client_for(mode, tmp_path), '{"warehouse_id": "WH-104", "sku": "TEA-'
    stock = stock_turn()
    stock.calls[1] = Call("get_stock", broken)
    attempt, transcript = drive(client, [list_turn(), stock, *right_loop()[1:]])
    assert attempt.status is None and transcript["ended"] == "answer", attempt.detail
    assert transcript["turns"][1]["calls"][1]["arguments"] == broken
    assert results_sent(client, client.server.requests[2].body)[1] == "error: arguments are not a JSON object"
    assert len(client.server.requests) == 5 and attempt.transport_retries == 0
    if anthropic(client):
        echoed = client.server.requests[2].body["messages"][-2]["content"]
        assert [b["input"] for b in echoed if b["type"] == "tool_use"][1] == {}
    else:  # the valid calls go back exactly as the model sent them
        echoed = [m for m in client.server.requests[2].body["messages"] if m["role"] == "assistant"][-1]
        sent = [c["function"]["arguments"] for c in echoed["tool_calls"]]
        assert sent[1] == ("{}" if client.adapter.name == "openai-compatible" else broken)
        assert sent[0] == json.dumps({"warehouse_id": NORTH[0], "sku": "TEA-042"})


def test_the_scripted_server_parses_chat_arguments_as_compatible_servers_do():
    from scripted_llm_server import tool_protocol_error

    def history(arguments) -> list:
        return [{"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": {
            "name": "f", "arguments": arguments}}]}, {"role": "tool", "tool_call_id": "a", "content": "1"}]
    assert "not a JSON object" in tool_protocol_error(history('{"a": '), False, parses_arguments=True)
    assert "not a JSON object" in tool_protocol_error(history("[1]"), False, parses_arguments=True)
    for fine in ('{"a": 1}', "", None):  # none or empty is {} to vLLM
        assert tool_protocol_error(history(fine), False, parses_arguments=True) == ""
    assert tool_protocol_error(history('{"a": '), False) == ""  # OpenAI's API takes any string

def test_an_invented_tool_and_a_schema_invalid_argument_are_recorded_and_answered(loop_client):
    client = loop_client
    steps = [Scripted(calls=[Call("get_inventory", {"region": "north"})]), list_turn(), stock_turn(),
             convert_turn(quantity=str), answer_turn()]
    attempt, transcript = drive(client, steps)
    assert attempt.status is None and transcript["ended"] == "answer"
    assert transcript["turns"][0]["results"] == ["error: no tool named 'get_inventory'"]
    assert transcript["turns"][3]["calls"][0]["arguments"]["quantity"] == "120.5"
    assert attempt.usage == summed(steps, reasoning=not anthropic(client))
    assert attempt.usd_cost == client.price(attempt.usage)


def test_an_endless_loop_stops_at_the_turn_bound_with_every_turn_paid_for(loop_client):
    client, bound = loop_client, load_toolbox(tools_task()).MAX_TURNS
    attempt, transcript = drive(client, [list_turn()])
    assert attempt.status is None and transcript["ended"] == "max_turns" and transcript["final_answer"] is None
    assert len(transcript["turns"]) == bound and len(client.server.requests) == bound
    assert attempt.usage == summed([list_turn()] * bound, reasoning=not anthropic(client))
    assert attempt.usd_cost == client.price(attempt.usage) and len(attempt.turn_costs) == bound


@dataclass
class LoopFault:
    steps: object                  # a list, or a function of the client giving one
    detail: object
    tokens_of: int = 1             # how many of the steps' turns are paid for
    retries: int = 0
    no_answer: bool = True
    modes: tuple = MODES
    status: Status | None = Status.ADAPTER_ERROR
    usage_missing: bool = False


LOOP_FAULTS = {
    "cut-mid-loop": LoopFault(lambda c: [list_turn(), Scripted(calls=stock_turn().calls[:1],
                                                               cut_after=3 if anthropic(c) else 5)],
                              lambda c: "turn 2: the reply stream ended before the message was complete (no "
                              "message_stop after 3 events, the last a content_block_delta) (1 request sent)"
                              if anthropic(c) else "turn 2: the reply stream ended without a finish_reason: the "
                              "completion never finished (5 chunks) (1 request sent)", modes=STREAMED),
    "overloaded-mid-stream": LoopFault([list_turn(), Scripted(text="Looking.", stream_error="overloaded_error")],
                                       "turn 2: the reply stream broke off after 1 event with an error from the API: "
                                       "Overloaded (overloaded_error) (3 requests sent)", retries=2, modes=STREAMED),
    "overloaded-mid-stream-then-on": LoopFault([list_turn(), Scripted(text="Looking.", stream_error="overloaded_error",
                                                                      no_usage=True), *right_loop()[1:]], "",
                                               tokens_of=4, retries=1, no_answer=False, status=None, modes=STREAMED),
    "refusal-keeps-the-explanation": LoopFault([list_turn(), Scripted(stop="refusal", text="I can't help.", output=9,
                                                                      stop_details=EXPLAINED)],
                                               lambda c: f"turn 2: refused: {EXPLAINED['explanation']}" if anthropic(c)
                                               else "turn 2: refused: I can't help.", tokens_of=2, no_answer=False),
    "retry-after-past-the-cap": LoopFault([list_turn(), Failure(429, "slow down", retry_after_ms=None,
                                                                retry_after="3600", error_type="rate_limit_error")],
                                          "turn 2: rate limited: retry-after 3600 s exceeds the 60 s cap "
                                          "(1 request sent)"),
    "body-not-json": LoopFault([list_turn(), Raw("<html>oops</html>", content_type="text/html")],
                               "turn 2: HTTP 200 with a body that is not JSON (17 bytes of text/html: "
                               "'<html>oops</html>') (1 request sent)", modes=PLAIN),
    "negative-usage": LoopFault([list_turn(), Scripted(calls=stock_turn().calls, input=-5)],
                                "turn 2: the API reported -5 input tokens (not a count >= 0)", no_answer=False,
                                usage_missing=True),
    "two-500s-then-on": LoopFault([list_turn(), Failure(500, "boom"), Failure(500, "boom"), *right_loop()[1:]], "",
                                  tokens_of=4, retries=2, no_answer=False, status=None),
    "missing-usage": LoopFault([list_turn(), Scripted(calls=stock_turn().calls, no_usage=True), *right_loop()[2:]],
                               "", tokens_of=4, no_answer=False, status=None, usage_missing=True),
}
LOOP_CASES = [pytest.param(name, mode, id=f"{name}-{mode}") for name, fault in LOOP_FAULTS.items()
              for mode in fault.modes]


@pytest.mark.parametrize("name,mode", LOOP_CASES)
def test_each_fault_mid_loop_ends_the_loop_with_the_turns_before_it_paid_for(name, mode, tmp_path):
    fault, client = LOOP_FAULTS[name], client_for(mode, tmp_path)
    steps = per_client(fault.steps, client)
    attempt, transcript = drive(client, steps)
    assert attempt.status == fault.status and attempt.detail == per_client(fault.detail, client)
    paid = [s for s in steps if isinstance(s, Scripted) and not s.no_usage][:fault.tokens_of]
    assert attempt.usage == summed(paid, reasoning=not anthropic(client))
    assert attempt.usd_cost == client.price(attempt.usage)
    assert attempt.transport_retries == fault.retries
    assert attempt.transport_failure is (fault.no_answer and fault.status is not None)
    assert attempt.usage_missing is fault.usage_missing
    assert transcript["ended"] == ("adapter_error" if fault.status else "answer")


def test_a_silent_turn_ends_the_loop_within_its_own_deadline(tmp_path):
    """Each turn is one request with its own deadline: the worst case of a loop is MAX_TURNS
    deadlines; a turn that never answers ends the loop at its deadline."""
    client = client_for("anthropic-stream", tmp_path)
    started = time.monotonic()
    attempt, transcript = drive(client, [list_turn(), Stall(30.0)], timeout_s=2.0)
    assert time.monotonic() - started < 2.0 + WORST_CASE_MARGIN_S + 1.0  # the first turn and its tool call too
    assert attempt.detail == "turn 2: no complete answer within the 2 s deadline (1 request sent; no reply yet)"
    assert attempt.transport_failure and transcript["ended"] == "adapter_error"
    assert attempt.usage == summed([list_turn()], reasoning=False)


# -- end to end: a reply that never finished is out of the pass rate ----------------------------

def test_a_cut_stream_is_adapter_error_in_the_results_and_out_of_the_pass_rate(fixture_task, tmp_path):
    """Before: the SDK's stream helper completed the cut tool arguments into a partial file
    (or the starter), graded `failed`, and counted in the pass rate."""
    from test_adapters import load_check_cost, run_one
    board = tmp_path / "board"
    cut = Scripted(payload=files(("adder.py", CORRECT)), cut_after=4, model="claude-haiku-4-5-20251001")
    with ScriptedServer([cut]) as server:
        doc, _ = run_one(fixture_task, AnthropicAdapter(max_retries=2), "claude-haiku-4-5", server.url, board)
    entry, = doc["tasks"]
    assert (entry["status"], entry["evidence"], entry["tokens"], entry["usd_cost"]) == ("adapter_error", False, None,
                                                                                        None)
    assert entry["detail"].startswith("the reply stream ended before the message was complete")
    assert doc["pass_rate"] is None
    assert load_check_cost().main([str(board)]) == 0


# -- the reading of a reply, in small --------------------------------------------------------

def test_server_sent_events_are_read_by_the_rules_whatever_the_chunking():
    """Lines split across chunks (a CRLF too), comments, multi-line data, an unfinished last event."""
    raw = b'event: message_start\r\ndata: {"a":\r\n\r\n: keep-alive\n\ndata: 1\ndata: 2\n\nevent: ping\n\ndata: cut'
    expected = [("message_start", '{"a":'), (None, "1\n2")]
    for size in (1, 2, 3, 7, len(raw)):
        chunks = [raw[i:i + size] for i in range(0, len(raw), size)]
        assert list(reply_body.sse_events(chunks)) == expected, size


@pytest.mark.parametrize("headers,seconds", [({"retry-after-ms": "250"}, 0.25), ({"retry-after": "7"}, 7.0),
                                             ({"retry-after-ms": "soon", "retry-after": "2.5"}, 2.5),
                                             ({"retry-after": "whenever"}, None), ({}, None)])
def test_retry_after_is_read_in_milliseconds_seconds_or_as_a_date(headers, seconds):
    assert deadline.retry_after_s(headers) == seconds
    assert 3590 < deadline.retry_after_s({"retry-after": in_an_hour()}) <= 3600
