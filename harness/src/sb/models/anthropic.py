"""`anthropic`: claude-* models through the official `anthropic` SDK (Messages API).

The files come back as the input of a `write_files` tool call, forced with tool_choice
(or offered with tool_choice auto when thinking or effort is set, which the API requires).
The request streams by default: the SDK refuses a long non-streaming request, and a
stream shows the answering model and usage the same way. Streamed or not, the reply is
read as the API's JSON (`sb.models.sdk` reads the bytes), so a message that never finished
(no message_stop, no stop_reason) is told apart from one that did, and tool input stays the
exact text the model sent. A tool_loop task is a conversation over the native tool
interface (`ToolConversation`, below).
"""

from __future__ import annotations

from sb.hookspecs import hookimpl
from sb.models import exchange
from sb.models.exchange import Reply
from sb.models.reply_body import BadReply
from sb.models.retry import Request
from sb.models.sdk import BASE_SETTINGS, SdkAdapter, Service, history_arguments
from sb.models.wording import json_type, plural
from sb.toolloop import ModelTurn, SessionError, ToolCall, parse_arguments

# The Messages API requires max_tokens; unset, the adapter sends this (see docs/models.md).
DEFAULT_MAX_TOKENS = 32_000
TRUNCATING_STOPS = ("max_tokens", "model_context_window_exceeded")


class AnthropicAdapter(SdkAdapter):
    name = provider = extra = "anthropic"
    routes = "claude-* (Messages API)"
    service = Service("anthropic", "Anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "https://api.anthropic.com")
    supported_settings = BASE_SETTINGS + ("thinking_budget", "effort")
    default_stream = True

    def claims(self, model: str) -> bool:
        return model.startswith("claude-")

    def conversation(self, model: str, task, tools: list, settings: dict) -> "ToolConversation":
        return ToolConversation(model, task, tools, settings, self.stream)

    def ask(self, client, request: Request, model: str, task, settings: dict) -> Reply:
        params = request_params(model, task, settings)
        return reply_from(post(client, request, params, self.stream), params["max_tokens"])


def post(client, request: Request, params: dict, stream: bool) -> dict:
    """One Messages request through `request`: the message as the API's JSON, checked whole."""
    def open_response(timeout: float):
        return client.messages.with_streaming_response.create(
            **params, **({"stream": True} if stream else {}), timeout=timeout)
    return request.send(open_response, lambda body: accumulate(body.events()) if stream else finished(body.json()))


def request_params(model: str, task, settings: dict) -> dict:
    """The request: only the knobs the user set, plus the max_tokens the API requires."""
    files = task.meta.kind == "files"
    params = {"model": model, "max_tokens": int(settings.get("max_tokens", DEFAULT_MAX_TOKENS)),
              "system": exchange.FILES_INSTRUCTIONS if files else exchange.REPLY_INSTRUCTIONS,
              "messages": [{"role": "user", "content": exchange.user_message(task)}], **knobs(settings)}
    if files:
        thinking = "thinking" in params or "output_config" in params
        params["tools"] = [{"name": exchange.TOOL_NAME, "description": "Write the solution's files.",
                            "input_schema": exchange.files_schema(task)}]
        params["tool_choice"] = {"type": "auto"} if thinking else {"type": "tool", "name": exchange.TOOL_NAME}
    return params


def knobs(settings: dict) -> dict:
    """The optional knobs, only those the user set."""
    params: dict[str, dict] = {}
    if "temperature" in settings:  # no longer a typed SDK argument: sent as set, the API decides
        params["extra_body"] = {"temperature": float(settings["temperature"])}
    if "thinking_budget" in settings:
        params["thinking"] = {"type": "enabled", "budget_tokens": int(settings["thinking_budget"])}
    if "effort" in settings:
        params["output_config"] = {"effort": settings["effort"]}
    return params


def reply_from(message: dict, max_tokens: int) -> Reply:
    blocks = message["content"]
    calls = [b for b in blocks if b["type"] == "tool_use" and b["name"] == exchange.TOOL_NAME]
    reply = Reply(model=message.get("model"), usage=usage_from(message.get("usage")), protocol="tool",
                  text="".join(b.get("text") or "" for b in blocks if b["type"] == "text"))
    stop = message["stop_reason"]
    if stop in TRUNCATING_STOPS:
        reply.ended, reply.reason = "truncated", f"{stop} ({max_tokens} output tokens)"
    elif stop == "refusal":
        reply.ended, reply.reason = "refused", refusal_reason(message, reply.text)
    if len(calls) > 1:
        reply.problem = f"malformed output: {len(calls)} {exchange.TOOL_NAME} calls, expected one"
    elif calls:
        reply.payload, reply.tool_called = parse_arguments(calls[0].get("input")), True
        if not isinstance(reply.payload, dict):
            reply.problem = f"malformed output: the {exchange.TOOL_NAME} input is not a JSON object"
    return reply


def usage_from(usage) -> dict | None:
    """Token counts from the API's JSON usage; None when the reply carried none."""
    if not isinstance(usage, dict) or not usage:
        return None
    details = usage.get("output_tokens_details")
    return exchange.usage_record(
        input=usage.get("input_tokens"), output=usage.get("output_tokens"),
        cache_read=usage.get("cache_read_input_tokens"), cache_write=usage.get("cache_creation_input_tokens"),
        reasoning=details.get("thinking_tokens") if isinstance(details, dict) else None)


# -- reading a reply ----------------------------------------------------------------------------

def finished(message: dict) -> dict:
    """The message, when it has the shape the protocol reads and it finished (a stop_reason)."""
    problem = message_problem(message)
    if problem:
        raise BadReply(f"a malformed Messages reply: {problem}")
    if message.get("stop_reason") is None:
        raise BadReply("the reply has no stop_reason: the message never finished")
    return message


def message_problem(message: dict) -> str:
    content = message.get("content")
    if not isinstance(content, list):
        return f"its content is a JSON {json_type(content)}, not an array"
    for index, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return f"content block {index} has no type"
        if block["type"] == "text" and not isinstance(block.get("text", ""), str):
            return f"content block {index} is text whose text is not a string"
        named = isinstance(block.get("id"), str) and isinstance(block.get("name"), str)
        if block["type"] == "tool_use" and not named:
            return f"content block {index} is a tool_use without an id and a name"
    for key, kinds in (("model", str), ("stop_reason", str), ("usage", dict)):
        if message.get(key) is not None and not isinstance(message[key], kinds):
            return f"its {key} is a JSON {json_type(message[key])}"
    return ""


def accumulate(events) -> dict:
    """A streamed message as the non-streaming API would have returned it (JSON), tool input
    left as the raw string the deltas spelled out. A stream that ends without message_stop
    never finished, however cleanly the connection closed: a cut reply, cut tool arguments."""
    raw: dict[int, str] = {}  # content block index -> its tool input as the deltas spelled it
    message, count, last, stopped = None, 0, "", False
    for event in events:
        kind, count = event.get("type"), count + 1
        try:
            if kind == "message_start" and message is None:
                message = {**event["message"], "content": []}
            elif message is None:
                raise BadReply(f"the reply stream began with a {kind!r} event, not message_start")
            elif kind == "message_start":
                raise BadReply(f"the reply stream has a second message_start (event {count})")
            else:
                stopped = _apply_event(message, event, raw)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise BadReply(f"a malformed {kind!r} event in the reply stream (event {count})") from None
        last = kind
        if stopped:
            break
    if message is None:
        raise BadReply("the reply stream ended before the message began (no message_start)")
    if not stopped:
        raise BadReply(f"the reply stream ended before the message was complete (no message_stop after "
                       f"{plural(count, 'event')}, the last a {last})")
    for index, text in raw.items():
        if text:  # no delta at all is the start block's {} (a tool without arguments), as the SDK has it
            message["content"][index]["input"] = text
    return finished(message)


def _apply_event(message: dict, event: dict, raw: dict) -> bool:
    """Apply one event to the message being built; True at message_stop."""
    kind = event["type"]
    if kind == "content_block_start":
        message["content"].append(dict(event["content_block"]))
    elif kind == "content_block_delta":
        index = event["index"]
        if not isinstance(index, int) or not 0 <= index < len(message["content"]):
            raise IndexError(index)
        _apply_delta(message["content"][index], event["delta"], raw, index)
    elif kind == "message_delta":
        delta = event["delta"]
        message.update({k: delta[k] for k in ("stop_reason", "stop_sequence", "stop_details") if k in delta})
        usage = {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
        if usage:
            message["usage"] = {**(message.get("usage") or {}), **usage}
    return kind == "message_stop"


def _apply_delta(block: dict, delta: dict, raw: dict, index: int) -> None:
    kind = delta["type"]
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta["text"]
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta["thinking"]
    elif kind == "signature_delta":
        block["signature"] = delta["signature"]
    elif kind == "input_json_delta":
        raw[index] = raw.get(index, "") + delta["partial_json"]


def refusal_reason(message: dict, text: str) -> str:
    """The API's explanation (stop_details), else its category, else the reply's text."""
    details = message.get("stop_details")
    if not isinstance(details, dict):
        details = {}
    reason = details.get("explanation") or details.get("category") or text.strip() or "stop_reason refusal"
    return str(reason)[:300]


# -- tool loops -------------------------------------------------------------------------------

class ToolConversation:
    """A tool loop over the Messages API: the task's tools as `tools`, each turn's `tool_use`
    blocks answered by one user message of `tool_result` blocks. The assistant's content goes
    back as it came (thinking blocks and their signatures included, which the API requires
    when thinking is on). No system prompt and no tool_choice: prompt.md is the first message.

    Streamed, the raw events are accumulated here rather than by the SDK's helper, which
    parses tool input with a partial-JSON parser (it would complete a broken argument
    string): the arguments are kept exactly as the model sent them, parsed strictly."""

    def __init__(self, model: str, task, tools: list, settings: dict, stream: bool):
        self.stream = stream
        self.params = {"model": model, "max_tokens": int(settings.get("max_tokens", DEFAULT_MAX_TOKENS)),
                       "tools": [{"name": t["name"], "description": t["description"],
                                  "input_schema": t["input_schema"]} for t in tools], **knobs(settings)}
        self.messages = [{"role": "user", "content": task.prompt}]

    def step(self, client, request: Request, results: list):
        if results:
            self.messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": text} for call_id, text in results]})
        message = post(client, request, {**self.params, "messages": self.messages}, self.stream)
        turn = turn_from(message)
        self.messages.append({"role": "assistant", "content": history_blocks(message["content"])})
        return turn


def turn_from(message: dict):
    """A ModelTurn; a refusal or an empty turn is the loop's SessionError, its usage kept."""
    blocks = message["content"]
    usage, model, stop = usage_from(message.get("usage")), message.get("model"), message["stop_reason"]
    text = "".join(b.get("text") or "" for b in blocks if b["type"] == "text")
    calls = [ToolCall(b["id"], b["name"], parse_arguments(b.get("input"))) for b in blocks if b["type"] == "tool_use"]
    if stop == "refusal":
        raise SessionError(f"refused: {refusal_reason(message, text)}", usage, model)
    truncated = stop in TRUNCATING_STOPS
    if not truncated and not calls and not text.strip():
        raise SessionError(exchange.empty_detail(Reply(model=model, usage=usage)), usage, model)
    return ModelTurn(text=text, calls=calls, usage=usage, stop=stop or "", truncated=truncated, model=model)


def history_blocks(blocks: list) -> list:
    """The assistant's content to send back: as received, minus nulls and empty text blocks
    (which the API rejects). A tool input goes back as an object (`history_arguments`): the
    one the model sent, or `{}` when it sent broken JSON, whose tool_result then says so."""
    kept = []
    for block in blocks:
        block = {k: v for k, v in block.items() if v is not None}
        if block["type"] == "text" and not block.get("text"):
            continue
        if block["type"] == "tool_use":
            arguments = history_arguments(block.get("input"))
            block["input"] = {} if arguments is None else arguments
        kept.append(block)
    return kept


@hookimpl
def register_models(register):
    register(AnthropicAdapter())
