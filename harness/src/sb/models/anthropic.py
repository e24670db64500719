"""`anthropic`: claude-* models through the official `anthropic` SDK (Messages API).

The files come back as the input of a `write_files` tool call, forced with tool_choice
(or offered with tool_choice auto when thinking or effort is set, which the API requires).
The request streams by default: the SDK refuses a long non-streaming request, and a
stream shows the answering model and usage the same way. A tool_loop task is a
conversation over the native tool interface (`ToolConversation`, below).
"""

from __future__ import annotations

from sb.hookspecs import hookimpl
from sb.models import exchange
from sb.models.exchange import Reply
from sb.models.sdk import BASE_SETTINGS, SdkAdapter
from sb.toolloop import ModelTurn, SessionError, ToolCall, parse_arguments

# The Messages API requires max_tokens; unset, the adapter sends this (see docs/models.md).
DEFAULT_MAX_TOKENS = 32_000
TRUNCATING_STOPS = ("max_tokens", "model_context_window_exceeded")


class AnthropicAdapter(SdkAdapter):
    name = "anthropic"
    routes = "claude-* (Messages API)"
    extra = "anthropic"
    sdk_module = "anthropic"
    client_class = "Anthropic"
    provider = "anthropic"
    base_url_env = "ANTHROPIC_BASE_URL"
    official_url = "https://api.anthropic.com"
    api_key_env = "ANTHROPIC_API_KEY"
    supported_settings = BASE_SETTINGS + ("thinking_budget", "effort")
    default_stream = True

    def claims(self, model: str) -> bool:
        return model.startswith("claude-")

    def conversation(self, model: str, task, tools: list, settings: dict) -> "ToolConversation":
        return ToolConversation(model, task, tools, settings, self.stream)

    def ask(self, client, model: str, task, settings: dict) -> Reply:
        params = request_params(model, task, settings)
        if self.stream:
            with client.messages.stream(**params) as stream:
                message = stream.get_final_message()
        else:
            message = client.messages.create(**params)
        return reply_from(message, params["max_tokens"])


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
    params = {}
    if "temperature" in settings:  # no longer a typed SDK argument: sent as set, the API decides
        params["extra_body"] = {"temperature": float(settings["temperature"])}
    if "thinking_budget" in settings:
        params["thinking"] = {"type": "enabled", "budget_tokens": int(settings["thinking_budget"])}
    if "effort" in settings:
        params["output_config"] = {"effort": settings["effort"]}
    return params


def reply_from(message, max_tokens: int) -> Reply:
    blocks = list(message.content or [])
    calls = [b for b in blocks if b.type == "tool_use" and b.name == exchange.TOOL_NAME]
    reply = Reply(model=message.model, usage=usage_from(message.usage), protocol="tool",
                  text="".join(b.text for b in blocks if b.type == "text"))
    if message.stop_reason in TRUNCATING_STOPS:
        reply.ended, reply.reason = "truncated", f"{message.stop_reason} ({max_tokens} output tokens)"
    elif message.stop_reason == "refusal":
        reply.ended, reply.reason = "refused", _refusal_reason(message, reply.text)
    if len(calls) > 1:
        reply.problem = f"malformed output: {len(calls)} {exchange.TOOL_NAME} calls, expected one"
    elif calls:
        reply.payload, reply.tool_called = calls[0].input, True
    return reply


def usage_from(usage) -> dict:
    details = getattr(usage, "output_tokens_details", None)
    return exchange.usage_record(
        input=usage.input_tokens, output=usage.output_tokens,
        cache_read=getattr(usage, "cache_read_input_tokens", None) or 0,
        cache_write=getattr(usage, "cache_creation_input_tokens", None) or 0,
        reasoning=getattr(details, "thinking_tokens", None) if details is not None else None)


def usage_from_dict(usage: dict) -> dict:
    """The same record from the API's JSON usage (what a stream accumulates)."""
    details = usage.get("output_tokens_details") or {}
    return exchange.usage_record(
        input=usage.get("input_tokens") or 0, output=usage.get("output_tokens") or 0,
        cache_read=usage.get("cache_read_input_tokens") or 0, cache_write=usage.get("cache_creation_input_tokens") or 0,
        reasoning=details.get("thinking_tokens"))


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

    def step(self, client, results: list):
        if results:
            self.messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": text} for call_id, text in results]})
        if self.stream:
            message = accumulate(client.messages.create(**self.params, messages=self.messages, stream=True))
        else:
            message = client.messages.create(**self.params, messages=self.messages).to_dict(warnings=False)
        turn = turn_from(message)
        self.messages.append({"role": "assistant", "content": history_blocks(message["content"])})
        return turn


def accumulate(events) -> dict:
    """A streamed message as the non-streaming API would have returned it (JSON), tool input
    left as the raw string the deltas spelled out."""
    message, raw = {}, {}
    for event in events:
        data = event.to_dict()
        kind = data["type"]
        if kind == "message_start":
            message = {**data["message"], "content": []}
        elif kind == "content_block_start":
            message["content"].append(dict(data["content_block"]))
        elif kind == "content_block_delta":
            _apply_delta(message["content"][data["index"]], data["delta"], raw, data["index"])
        elif kind == "message_delta":
            message["stop_reason"] = data["delta"].get("stop_reason")
            message["usage"].update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
    for index, text in raw.items():
        if text:  # no delta at all is the start block's {} (a tool without arguments), as the SDK has it
            message["content"][index]["input"] = text
    return message


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


def turn_from(message: dict):
    """A ModelTurn; a refusal or an empty turn is the loop's SessionError, its usage kept."""
    blocks = message.get("content") or []
    usage, model, stop = usage_from_dict(message.get("usage") or {}), message.get("model"), message.get("stop_reason")
    text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
    calls = [ToolCall(b["id"], b["name"], parse_arguments(b.get("input"))) for b in blocks if b["type"] == "tool_use"]
    if stop == "refusal":
        details = message.get("stop_details") or {}
        reason = details.get("explanation") or details.get("category") or text.strip() or "stop_reason refusal"
        raise SessionError(f"refused: {str(reason)[:300]}", usage, model)
    truncated = stop in TRUNCATING_STOPS
    if not truncated and not calls and not text.strip():
        raise SessionError(exchange.empty_detail(Reply(model=model, usage=usage)), usage, model)
    return ModelTurn(text=text, calls=calls, usage=usage, stop=stop or "", truncated=truncated, model=model)


def history_blocks(blocks: list) -> list:
    """The assistant's content to send back: as received, minus nulls and empty text blocks
    (which the API rejects); a tool input that was valid JSON goes back as its object."""
    kept = []
    for block in blocks:
        block = {k: v for k, v in block.items() if v is not None}
        if block["type"] == "text" and not block.get("text"):
            continue
        if block["type"] == "tool_use":
            block["input"] = parse_arguments(block.get("input"))
        kept.append(block)
    return kept


def _refusal_reason(message, text: str) -> str:
    details = getattr(message, "stop_details", None)
    explanation = getattr(details, "explanation", None) or getattr(details, "category", None)
    return str(explanation or text.strip() or "stop_reason refusal")[:300]


@hookimpl
def register_models(register):
    register(AnthropicAdapter())
