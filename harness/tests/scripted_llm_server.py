"""A scripted model server on loopback speaking the Anthropic Messages API and the OpenAI
Chat Completions API, streaming (SSE) and not, for the real SDKs to talk to in tests.

A script is a list of steps, one consumed per request; the last step repeats, so
`[Failure(500)]` is a 500 every time and `[Failure(429), Scripted(...)]` is a 429 then
success. Every request is recorded (path, headers, JSON body) for assertions.

A tool-loop turn is a step with `calls` (`Call(name, arguments)`): `tool_use` blocks in the
Messages API, `tool_calls` in Chat Completions, streamed as the APIs stream them (the
arguments' JSON in fragments). `arguments` given as a str is sent exactly as written, so a
test can make a model send broken JSON. Like the real APIs, the server answers 400 when a
request's tool results do not answer exactly the calls of the assistant turn before them,
when a tool_use input sent back is not an object (Messages), and, with
`parses_arguments`, when a tool call's arguments sent back are not a JSON object (Chat, as
vLLM's and llama.cpp's servers do: they parse them to render the chat template; OpenAI's
API takes any string).

Faults: `Failure` (a status, its retry-after, its error type), `Stall` (silence, then a
504), `Raw` (exact bytes: not JSON, malformed, a body shorter than its content-length),
`Trickle` (a 200 stream of keep-alive pings and nothing else), and on `Scripted` a stream
cut after N events, an error event mid-stream (with a retry-after on its 200 if asked), no
usage, no stop reason. Every wait and loop
is bounded: by its own length and by the server's lifetime (`lifetime_s`), after which, or
at exit, every handler returns, so a test that forgets a fault cannot hang.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Call:
    """One tool call of a scripted turn; a str `arguments` is sent as is (broken JSON)."""

    name: str
    arguments: object
    id: str | None = None       # default: unique per request, as the APIs' ids are


@dataclass
class Scripted:
    """One model reply, rendered in whichever API the request used."""

    payload: object = None         # the files value: a tool call's input (Messages) / the JSON content (Chat)
    text: str = ""                 # plain text content (a reply task, or prose instead of a tool call)
    raw: str | None = None         # Chat: the content exactly as given (malformed output)
    thinking: str = ""
    stop: str = "end"              # end | max_tokens | refusal
    model: str | None = None       # None: echo the model asked
    input: int = 120
    output: int = 40
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0
    tool_calls: int = 1            # Messages: how many write_files calls carry the payload
    calls: list = field(default_factory=list)  # tool-loop turns: Call(name, arguments), in order
    stall_after_first_event_s: float = 0.0   # streaming: headers and one event, then silence
    cut_after: int | None = None   # streaming: only the first N events, then a clean end (no stop)
    stream_error: str | None = None  # streaming: an error event of this type after the first event
    retry_after: str | None = None   # streaming: a retry-after header (seconds) on the 200 that carries it
    no_usage: bool = False         # no usage anywhere in the reply
    no_stop: bool = False          # non-streaming: stop_reason / finish_reason null
    stop_details: dict | None = None  # Messages: the refusal's stop_details


@dataclass
class Failure:
    status: int
    message: str = "scripted failure"
    retry_after_ms: int | None = 5
    retry_after: str | Callable[[], str] | None = None  # the retry-after header (seconds or an HTTP date);
    # a callable is called when the response is sent, so a date stays "an hour from now" however late the test runs
    error_type: str | None = None      # default: api_error (Messages), server_error (Chat)


@dataclass
class Stall:
    """Silence for `seconds` (bounded by the server's lifetime), then a 504."""

    seconds: float


@dataclass
class Raw:
    """Exactly these bytes as the body; `declared_length` past their length cuts the body short."""

    body: bytes | str
    status: int = 200
    content_type: str = "application/json"
    declared_length: int | None = None


@dataclass
class Trickle:
    """A 200 reply that never completes: keep-alive pings every `every_s` for `for_s` (or the
    server's lifetime), and nothing else. A stream gets ping events (Messages) or SSE comment
    lines (Chat, or `comments`); a non-streaming request gets JSON whitespace, a space at a time."""

    every_s: float = 0.05
    for_s: float = 30.0
    comments: bool = False


@dataclass
class Recorded:
    path: str
    headers: dict
    body: dict


@dataclass
class ScriptedServer:
    steps: list
    requests: list = field(default_factory=list)
    lifetime_s: float = 60.0   # past this every handler returns (a stalled test cannot hang)
    parses_arguments: bool = False  # Chat: reject tool call arguments sent back that are not a JSON object

    def __enter__(self) -> "ScriptedServer":
        server = self

        class Handler(_Handler):
            owner = server

        self.closing = threading.Event()
        self.lifetime = threading.Timer(self.lifetime_s, self.closing.set)
        self.lifetime.daemon = True
        self.lifetime.start()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.closing.set()
        self.lifetime.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def next_step(self, recorded: Recorded):
        self.requests.append(recorded)
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, Scripted) and step.calls:
            n = len(self.requests)
            step = replace(step, calls=[replace(c, id=c.id or f"call_{n}_{i}") for i, c in enumerate(step.calls)])
        return step


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedServer

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        step = self.owner.next_step(Recorded(self.path, dict(self.headers), body))
        messages = self.path.endswith("/messages")
        problem = tool_protocol_error(body.get("messages") or [], messages, self.owner.parses_arguments)
        if problem:
            return self._failure(Failure(400, problem, retry_after_ms=None), messages)
        if isinstance(step, Stall):
            self.owner.closing.wait(step.seconds)
            return self._quietly(self._json, 504, {"error": "stalled"})
        if isinstance(step, Failure):
            return self._failure(step, messages)
        if isinstance(step, Raw):
            return self._quietly(self._raw, step)
        if isinstance(step, Trickle):
            return self._quietly(self._trickle, step, messages, bool(body.get("stream")))
        model = step.model or body.get("model")
        stream = body.get("stream")
        if messages:
            if stream:
                return self._quietly(self._sse, stream_faults(step, anthropic_events(step, model), True), False,
                                     False, step.stall_after_first_event_s, step.retry_after)
            return self._json(200, anthropic_message(step, model))
        if stream:
            include_usage = (body.get("stream_options") or {}).get("include_usage", False) and not step.no_usage
            chunks = stream_faults(step, chat_chunks(step, model, include_usage), False)
            return self._quietly(self._sse, chunks, True, step.cut_after is None and step.stream_error is None,
                                 step.stall_after_first_event_s, step.retry_after)
        return self._json(200, chat_completion(step, model))

    def _failure(self, step: Failure, messages: bool) -> None:
        kind = step.error_type or ("api_error" if messages else "server_error")
        error = ({"type": "error", "error": {"type": kind, "message": step.message}} if messages
                 else {"error": {"message": step.message, "type": kind, "code": None}})
        headers = {"retry-after-ms": str(step.retry_after_ms)} if step.retry_after_ms is not None else {}
        if step.retry_after is not None:
            headers["retry-after"] = step.retry_after() if callable(step.retry_after) else step.retry_after
        self._json(step.status, error, headers)

    def _raw(self, step: Raw) -> None:
        raw = step.body.encode() if isinstance(step.body, str) else step.body
        self.send_response(step.status)
        self.send_header("content-type", step.content_type)
        self.send_header("content-length", str(step.declared_length or len(raw)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(raw)
        self.close_connection = True

    def _trickle(self, step: Trickle, messages: bool, stream: bool) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if stream else "application/json")
        self.send_header("connection", "close")
        self.end_headers()
        ping = b": ping\n\n" if step.comments or not messages else b'event: ping\ndata: {"type": "ping"}\n\n'
        ping = ping if stream else b" "
        ends = time.monotonic() + step.for_s
        while time.monotonic() < ends and not self.owner.closing.wait(step.every_s):
            self.wfile.write(ping)
            self.wfile.flush()
        self.close_connection = True

    def _json(self, status: int, data: dict, headers: dict | None = None) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        for name, value in {"content-type": "application/json", "content-length": str(len(raw)),
                            "request-id": "req_scripted", **(headers or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)

    def _sse(self, events: list, chat: bool, done: bool, stall_s: float = 0.0, retry_after: str | None = None) -> None:
        """Messages events are named; Chat chunks are not, and end with [DONE] when `done`."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        if retry_after is not None:
            self.send_header("retry-after", retry_after)
        self.send_header("connection", "close")
        self.end_headers()
        for index, event in enumerate(events):
            name = f"event: {event['type']}\n" if not chat else ""
            self.wfile.write(f"{name}data: {json.dumps(event)}\n\n".encode())
            if index == 0 and stall_s:
                self.wfile.flush()
                self.owner.closing.wait(stall_s)
        if done:
            self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True

    @staticmethod
    def _quietly(send, *args):
        try:
            send(*args)
        except OSError:  # the client gave up first: that is the point of a stall
            pass


def stream_faults(step: Scripted, events: list, messages: bool) -> list:
    """The events a faulty stream sends: cut after N, or an error event after the first."""
    if step.stream_error:
        error = {"type": step.stream_error, "message": step.stream_error.replace("_error", "").capitalize()}
        return events[:1] + [{"type": "error", "error": error} if messages else {"error": error}]
    return events if step.cut_after is None else events[:step.cut_after]


def tool_protocol_error(history: list, messages_api: bool, parses_arguments: bool = False) -> str:
    """What a real API rejects in a tool loop's history: results that do not answer, in one
    go and by id, every call of the assistant turn just before them, and (Messages) a
    tool_use whose input is not an object, (Chat, `parses_arguments`) tool call arguments
    that are not a JSON object, none or empty being {} as vLLM has it ('' when none)."""
    for index, message in enumerate(history):
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)] if messages_api else []
        for block in blocks:
            if block.get("type") == "tool_use" and not isinstance(block.get("input"), dict):
                return f"messages.{index}: tool_use.input: Input should be a valid dictionary"
        for call in ([] if messages_api or not parses_arguments else message.get("tool_calls") or []):
            arguments = (call.get("function") or {}).get("arguments")
            if arguments and not _json_object(arguments):
                return f"messages.{index}: tool_calls.function.arguments: not a JSON object"
    for index, message in enumerate(history[:-1]):
        if message.get("role") != "assistant":
            continue
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)] if messages_api else []
        calls = ([b.get("id") for b in blocks if b.get("type") == "tool_use"] if messages_api
                 else [c["id"] for c in message.get("tool_calls") or []])
        answered = _answered(history[index + 1:], messages_api)
        if calls and sorted(answered) != sorted(calls):
            return f"tool results {answered} do not answer the calls {calls}"
    return ""


def _json_object(text) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (TypeError, ValueError):
        return False


def _answered(after: list, messages_api: bool) -> list:
    """The call ids answered right after an assistant turn: one user message of tool_result
    blocks (Messages), or the run of role tool messages (Chat Completions)."""
    if messages_api:
        content = after[0].get("content") if after[0].get("role") == "user" else None
        return [b.get("tool_use_id") for b in content or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
    answered = []
    for message in after:
        if message.get("role") != "tool":
            break
        answered.append(message.get("tool_call_id"))
    return answered


# -- Messages API ---------------------------------------------------------------------------

def _blocks(step: Scripted) -> list:
    blocks = []
    if step.thinking:
        blocks.append({"type": "thinking", "thinking": step.thinking, "signature": "c2lnbmF0dXJl"})
    if step.text:
        blocks.append({"type": "text", "text": step.text, "citations": None})
    if step.payload is not None:
        blocks += [{"type": "tool_use", "id": f"toolu_{i}", "name": "write_files", "input": step.payload}
                   for i in range(step.tool_calls)]
    blocks += [{"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments} for call in step.calls]
    return blocks


def _stop_reason(step: Scripted, blocks: list) -> str:
    if step.stop != "end":
        return step.stop
    return "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"


def _anthropic_usage(step: Scripted) -> dict:
    usage = {"input_tokens": step.input, "output_tokens": step.output, "cache_read_input_tokens": step.cache_read,
             "cache_creation_input_tokens": step.cache_write}
    if step.reasoning:
        usage["output_tokens_details"] = {"thinking_tokens": step.reasoning}
    return usage


def anthropic_message(step: Scripted, model: str) -> dict:
    blocks = _blocks(step)
    message = {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": blocks,
               "stop_reason": None if step.no_stop else _stop_reason(step, blocks), "stop_sequence": None,
               "usage": _anthropic_usage(step)}
    if step.stop_details:
        message["stop_details"] = step.stop_details
    if step.no_usage:
        del message["usage"]
    return message


def anthropic_events(step: Scripted, model: str) -> list:
    blocks = _blocks(step)
    start_usage = {**_anthropic_usage(step), "output_tokens": 1}
    start_usage.pop("output_tokens_details", None)
    events = [{"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": start_usage}}]
    for index, block in enumerate(blocks):
        events += _block_events(index, block)
    delta_usage = {"output_tokens": step.output}
    if step.reasoning:
        delta_usage["output_tokens_details"] = {"thinking_tokens": step.reasoning}
    delta = {"stop_reason": _stop_reason(step, blocks), "stop_sequence": None}
    if step.stop_details:
        delta["stop_details"] = step.stop_details
    events.append({"type": "message_delta", "delta": delta, "usage": delta_usage})
    events.append({"type": "message_stop"})
    if step.no_usage:
        del events[0]["message"]["usage"], events[-2]["usage"]
    return events


def _block_events(index: int, block: dict) -> list:
    kind = block["type"]
    if kind == "thinking":
        empty, deltas = {"type": "thinking", "thinking": "", "signature": ""}, [
            {"type": "thinking_delta", "thinking": block["thinking"]},
            {"type": "signature_delta", "signature": block["signature"]}]
    elif kind == "text":
        text = block["text"]
        empty, deltas = {"type": "text", "text": ""}, [
            {"type": "text_delta", "text": text[:len(text) // 2]},
            {"type": "text_delta", "text": text[len(text) // 2:]}]
    else:
        raw = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
        empty = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": raw[:len(raw) // 2]},
                  {"type": "input_json_delta", "partial_json": raw[len(raw) // 2:]}]
    return ([{"type": "content_block_start", "index": index, "content_block": empty}]
            + [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
            + [{"type": "content_block_stop", "index": index}])


# -- Chat Completions API -------------------------------------------------------------------

def _chat_content(step: Scripted):
    if step.stop == "refusal":
        return None
    if step.raw is not None:
        return step.raw
    if step.payload is not None:
        return json.dumps(step.payload)
    return step.text


def _finish_reason(step: Scripted) -> str:
    if step.stop == "end" and step.calls:
        return "tool_calls"
    return {"max_tokens": "length", "refusal": "stop"}.get(step.stop, "stop")


def _chat_tool_calls(step: Scripted) -> list:
    def raw(arguments) -> str:
        return arguments if isinstance(arguments, str) else json.dumps(arguments)
    return [{"id": call.id, "type": "function", "function": {"name": call.name, "arguments": raw(call.arguments)}}
            for call in step.calls]


def _chat_usage(step: Scripted) -> dict:
    prompt = step.input + step.cache_read
    return {"prompt_tokens": prompt, "completion_tokens": step.output, "total_tokens": prompt + step.output,
            "prompt_tokens_details": {"cached_tokens": step.cache_read},
            "completion_tokens_details": {"reasoning_tokens": step.reasoning}}


def chat_completion(step: Scripted, model: str) -> dict:
    refusal = (step.text or "I can't help with that.") if step.stop == "refusal" else None
    message = {"role": "assistant", "content": _chat_content(step) or None, "refusal": refusal}
    if step.calls:
        message["tool_calls"] = _chat_tool_calls(step)
    completion = {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 1, "model": model,
                  "choices": [{"index": 0, "finish_reason": None if step.no_stop else _finish_reason(step),
                               "logprobs": None, "message": message}], "usage": _chat_usage(step)}
    if step.no_usage:
        del completion["usage"]
    return completion


def chat_chunks(step: Scripted, model: str, include_usage: bool) -> list:
    def chunk(delta: dict, finish=None, **extra) -> dict:
        choices = [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}] if delta is not None else []
        return {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1, "model": model,
                "choices": choices, **extra}
    content = _chat_content(step) or ""
    chunks = [chunk({"role": "assistant", "content": ""})]
    if step.stop == "refusal":
        chunks.append(chunk({"refusal": step.text or "I can't help with that."}))
    else:
        chunks += [chunk({"content": content[:len(content) // 2]}), chunk({"content": content[len(content) // 2:]})]
    for index, call in enumerate(_chat_tool_calls(step)):
        raw = call["function"]["arguments"]
        head = {"index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}
        chunks += [chunk({"tool_calls": [head]})] + [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
            for part in (raw[:len(raw) // 2], raw[len(raw) // 2:])]
    chunks.append(chunk({}, _finish_reason(step)))
    if include_usage:
        chunks.append(chunk(None, usage=_chat_usage(step)))
    return chunks
