"""Faults of a model API, through the real `anthropic` and `openai` SDKs (streaming and not)
against the scripted server on loopback: every fault ends in one status with its detail in
plain words, its tokens, its cost, its retries and whether the sweep's circuit breaker
counts it (`transport_failure`). A reply that never finished is never graded; one deadline
(`--timeout`) bounds each request, retries and keep-alive pings included; a retry-after past
the cap ends the attempt at once; a tool call with broken JSON goes on with a tool error
the API accepts.

The server is bounded (every wait and loop ends with the server's lifetime), and the SDK
backoff between retries is shortened here, so the whole file stays well under a minute.
"""

from __future__ import annotations

import functools
import json
import re
import socket
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from scripted_llm_server import Call, Failure, Raw, Scripted, ScriptedServer, Stall, Trickle
from sb.catalog import load_tasks
from sb.models import sdk
from sb.models.anthropic import AnthropicAdapter
from sb.models.base import ModelOptions
from sb.models.openai import OpenAIAdapter
from sb.outcome import Status
from sb.toolloop import drive_tool_loop, load_toolbox
from test_adapters import CLIENTS, CORRECT, SECRET, expected_usage, files
from test_adapters_tools import answer_turn, convert_turn, list_turn, right_loop, stock_turn, summed

MODES = tuple(sorted(CLIENTS))
STREAMED = ("anthropic-stream", "openai-stream")
PLAIN = ("anthropic-plain", "openai-plain")
WORST_CASE_MARGIN_S = 1.5  # docs/models.md: the adapter returns at the deadline; this is scheduling slack
OK = Scripted(payload=files(("adder.py", CORRECT)))
EXPLAINED = {"type": "refusal", "category": "cyber", "explanation": "The request looks like malware development."}


@pytest.fixture(autouse=True)
def keys_and_quick_backoff(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setattr(sdk, "FIRST_BACKOFF_S", 0.01)  # the schedule's shape is the SDKs'; its length is not tested


ADAPTERS: dict = {}


def client_for(mode: str, tmp_path):
    """One of test_adapters' clients, its adapter (and so its connection pool, whose TLS
    context costs a quarter of a second to build) shared by every test of this mode."""
    client = CLIENTS[mode](tmp_path)
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
    "overloaded-mid-stream": Fault([Scripted(payload=files(("adder.py", CORRECT)), stream_error="overloaded_error")],
                                   Status.ADAPTER_ERROR, "the reply stream broke off after 1 event with an error "
                                   "from the API: Overloaded (overloaded_error) (1 request sent)", modes=STREAMED),
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
    return load_tasks()["tools"]  # the catalog takes a fifth of a second to load: once here


def drive(client, steps: list, timeout_s: float = 10.0, settings: dict | None = None):
    workdir = client.tmp_path / f"work{len(list(client.tmp_path.iterdir()))}"
    workdir.mkdir()
    with ScriptedServer(list(steps)) as client.server:
        suffix = "/v1" if client.adapter.provider == "openai" else ""
        options = ModelOptions(base_url=client.server.url + suffix, settings=settings or {}, timeout_s=timeout_s)
        attempt = drive_tool_loop(client.adapter, client.model, tools_task(), workdir, options)
    return attempt, json.loads((workdir / "transcript.json").read_text())


@pytest.fixture(params=MODES)
def loop_client(request, tmp_path):
    return client_for(request.param, tmp_path)


def results_sent(client, body: dict) -> list:
    if anthropic(client):
        return [b["content"] for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    return [m["content"] for m in body["messages"] if m["role"] == "tool"][-4:]


def test_broken_argument_json_goes_on_with_a_tool_error_the_api_accepts(loop_client):
    """Recorded as sent; the assistant turn goes back with an object input (Messages rejects
    anything else with a 400, as the scripted server does), the error as its tool_result."""
    client, broken = loop_client, '{"warehouse_id": "WH-104", "sku": "TEA-'
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
                                       "Overloaded (overloaded_error) (1 request sent)", modes=STREAMED),
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
        assert list(sdk.sse_events(chunks)) == expected, size


@pytest.mark.parametrize("headers,seconds", [({"retry-after-ms": "250"}, 0.25), ({"retry-after": "7"}, 7.0),
                                             ({"retry-after-ms": "soon", "retry-after": "2.5"}, 2.5),
                                             ({"retry-after": "whenever"}, None), ({}, None)])
def test_retry_after_is_read_in_milliseconds_seconds_or_as_a_date(headers, seconds):
    assert sdk.retry_after_s(headers) == seconds
    assert 3590 < sdk.retry_after_s({"retry-after": in_an_hour()}) <= 3600
