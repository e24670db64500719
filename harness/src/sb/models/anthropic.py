"""`anthropic`: claude-* models through the official `anthropic` SDK (Messages API).

The files come back as the input of a `write_files` tool call, forced with tool_choice
(or offered with tool_choice auto when thinking or effort is set, which the API requires).
The request streams by default: the SDK refuses a long non-streaming request, and a
stream shows the answering model and usage the same way.
"""

from __future__ import annotations

from sb.hookspecs import hookimpl
from sb.models import exchange
from sb.models.exchange import Reply
from sb.models.sdk import BASE_SETTINGS, SdkAdapter

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
    api_key_env = "ANTHROPIC_API_KEY"
    supported_settings = BASE_SETTINGS + ("thinking_budget", "effort")
    default_stream = True

    def claims(self, model: str) -> bool:
        return model.startswith("claude-")

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
              "messages": [{"role": "user", "content": exchange.user_message(task)}]}
    if "temperature" in settings:  # no longer a typed SDK argument: sent as set, the API decides
        params["extra_body"] = {"temperature": float(settings["temperature"])}
    if "thinking_budget" in settings:
        params["thinking"] = {"type": "enabled", "budget_tokens": int(settings["thinking_budget"])}
    if "effort" in settings:
        params["output_config"] = {"effort": settings["effort"]}
    if files:
        thinking = "thinking" in params or "output_config" in params
        params["tools"] = [{"name": exchange.TOOL_NAME, "description": "Write the solution's files.",
                            "input_schema": exchange.files_schema(task)}]
        params["tool_choice"] = {"type": "auto"} if thinking else {"type": "tool", "name": exchange.TOOL_NAME}
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


def _refusal_reason(message, text: str) -> str:
    details = getattr(message, "stop_details", None)
    explanation = getattr(details, "explanation", None) or getattr(details, "category", None)
    return str(explanation or text.strip() or "stop_reason refusal")[:300]


@hookimpl
def register_models(register):
    register(AnthropicAdapter())
