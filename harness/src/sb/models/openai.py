"""`openai` (gpt-*, o-series) and `openai-compatible:<model>` (any --base-url: vLLM, SGLang,
llama.cpp's server, Ollama), both through the official `openai` SDK's Chat Completions API.

The files come back as the message content under a strict JSON schema (response_format
json_schema), whose file paths are limited to the declared names. `openai-compatible`
sends the same schema in the form llama.cpp's servers (llama-server, llama-cpp-python)
constrain decoding with, `{"type": "json_object", "schema": ...}`, which vLLM, SGLang and
Ollama accept as JSON mode; llama-cpp-python rejects the json_schema form outright. A
server that does not enforce the schema is still parsed strictly: anything else is
adapter_error, never a guess. A tool_loop task is a conversation over the native tool
interface (`ToolConversation`, below).
"""

from __future__ import annotations

import os
import re

from sb.hookspecs import hookimpl
from sb.models import exchange
from sb.models.base import ModelOptions
from sb.models.exchange import Reply, ReplyError
from sb.models.sdk import BASE_SETTINGS, SdkAdapter
from sb.toolloop import ModelTurn, SessionError, ToolCall, parse_arguments

OPENAI_MODELS = re.compile(r"^(gpt-|chatgpt-|o\d)")
PLACEHOLDER_KEY = "sb-no-key"  # a local server without --api-key still wants a bearer token


class OpenAIAdapter(SdkAdapter):
    name = "openai"
    routes = "gpt-*, chatgpt-*, o1/o3/o4... (Chat Completions API)"
    extra = "openai"
    sdk_module = "openai"
    client_class = "OpenAI"
    provider = "openai"
    base_url_env = "OPENAI_BASE_URL"
    official_url = "https://api.openai.com/v1"
    api_key_env = "OPENAI_API_KEY"
    supported_settings = BASE_SETTINGS + ("effort", "seed")
    max_tokens_param = "max_completion_tokens"
    response_format = "json_schema"

    def claims(self, model: str) -> bool:
        return bool(OPENAI_MODELS.match(model))

    def conversation(self, model: str, task, tools: list, settings: dict) -> "ToolConversation":
        return ToolConversation(model, task, tools, settings, self.stream, self.max_tokens_param)

    def ask(self, client, model: str, task, settings: dict) -> Reply:
        params = request_params(model, task, settings, self.max_tokens_param, self.response_format)
        if self.stream:
            return reply_from_stream(client.chat.completions.create(
                **params, stream=True, stream_options={"include_usage": True}))
        return reply_from(client.chat.completions.create(**params))


class OpenAICompatibleAdapter(OpenAIAdapter):
    name = "openai-compatible"
    routes = "openai-compatible:<model> with --base-url (vLLM, SGLang, llama.cpp, Ollama)"
    provider = "openai-compatible"  # nothing priced: a local model has no bill to re-derive
    official_url = None             # always the user's own server
    api_key_env = "OPENAI_COMPATIBLE_API_KEY"
    max_tokens_param = "max_tokens"   # what every compatible server accepts
    response_format = "json_object"

    def claims(self, model: str) -> bool:
        return False  # only by name: openai-compatible:<model>

    def api_key(self, options: ModelOptions) -> str:
        """Optional, and never OPENAI_API_KEY: a real key must not go to an arbitrary server."""
        return os.environ.get(self.api_key_env) or PLACEHOLDER_KEY

    def base_url(self, options: ModelOptions) -> str:
        if not options.base_url:
            raise ReplyError("openai-compatible needs --base-url (for example http://127.0.0.1:8000/v1)")
        return options.base_url


def request_params(model: str, task, settings: dict, max_tokens_param: str, response_format: str) -> dict:
    """The request: only the knobs the user set."""
    files = task.meta.kind == "files"
    system = exchange.JSON_INSTRUCTIONS if files else exchange.REPLY_INSTRUCTIONS
    params = {"model": model, "messages": [{"role": "system", "content": system},
                                           {"role": "user", "content": exchange.user_message(task)}],
              **knobs(settings, max_tokens_param)}
    if files and response_format == "json_schema":
        params["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "files", "strict": True, "schema": exchange.files_schema(task)}}
    elif files:
        params["response_format"] = {"type": "json_object", "schema": exchange.files_schema(task)}
    return params


def knobs(settings: dict, max_tokens_param: str) -> dict:
    """The optional knobs, only those the user set."""
    params = {}
    if "temperature" in settings:
        params["temperature"] = float(settings["temperature"])
    if "max_tokens" in settings:
        params[max_tokens_param] = int(settings["max_tokens"])
    if "effort" in settings:
        params["reasoning_effort"] = settings["effort"]
    if "seed" in settings:
        params["seed"] = int(settings["seed"])
    return params


def reply_from(completion) -> Reply:
    if not completion.choices:
        return Reply(model=completion.model, usage=usage_from(completion.usage), problem="no choices in the reply")
    choice = completion.choices[0]
    message = choice.message
    return _reply(completion.model, completion.usage, choice.finish_reason,
                  message.content or "", getattr(message, "refusal", None))


def reply_from_stream(chunks) -> Reply:
    """Accumulate a streamed completion: text, refusal, finish reason, model, final usage."""
    model, usage, finish, text, refusal = None, None, None, [], []
    for chunk in chunks:
        model = chunk.model or model
        usage = chunk.usage or usage
        for choice in chunk.choices[:1]:
            finish = choice.finish_reason or finish
            text.append(choice.delta.content or "")
            refusal.append(getattr(choice.delta, "refusal", None) or "")
    return _reply(model, usage, finish, "".join(text), "".join(refusal) or None)


def _reply(model, usage, finish_reason, text: str, refusal) -> Reply:
    reply = Reply(model=model, usage=usage_from(usage), text=text)
    if refusal:
        reply.ended, reply.reason = "refused", refusal.strip()[:300]
    elif finish_reason == "content_filter":
        reply.ended, reply.reason = "refused", "finish_reason content_filter"
    elif finish_reason == "length":
        reply.ended, reply.reason = "truncated", "the output limit (finish_reason length)"
    return reply


def usage_from(usage) -> dict | None:
    """Prompt tokens include cached ones: `input` is the uncached rest, as the price table expects."""
    if usage is None:
        return None
    prompt = getattr(usage, "prompt_tokens_details", None)
    completion = getattr(usage, "completion_tokens_details", None)
    cached = (getattr(prompt, "cached_tokens", None) or 0) if prompt else 0
    written = (getattr(prompt, "cache_write_tokens", None) or 0) if prompt else 0
    reasoning = getattr(completion, "reasoning_tokens", None) if completion else None
    return exchange.usage_record(input=max(0, (usage.prompt_tokens or 0) - cached - written),
                                 output=usage.completion_tokens or 0, cache_read=cached, cache_write=written,
                                 reasoning=reasoning)


# -- tool loops -------------------------------------------------------------------------------

class ToolConversation:
    """A tool loop over Chat Completions: the task's tools as `tools` (functions, offered as
    the task ships them and not `strict`, so a schema-valid argument is the model's doing, not
    a constrained decoder's), each turn's `tool_calls` answered by one `role: tool` message
    per call. No system prompt and no tool_choice: prompt.md is the first message. The
    arguments are the string the model sent, parsed strictly, passed on raw when broken."""

    def __init__(self, model: str, task, tools: list, settings: dict, stream: bool, max_tokens_param: str):
        self.stream = stream
        self.params = {"model": model, "tools": [
            {"type": "function", "function": {"name": t["name"], "description": t["description"],
                                              "parameters": t["input_schema"]}} for t in tools],
            **knobs(settings, max_tokens_param)}
        self.messages = [{"role": "user", "content": task.prompt}]

    def step(self, client, results: list):
        self.messages += [{"role": "tool", "tool_call_id": call_id, "content": text} for call_id, text in results]
        if self.stream:
            reply = accumulate(client.chat.completions.create(
                **self.params, messages=self.messages, stream=True, stream_options={"include_usage": True}))
        else:
            reply = completion_dict(client.chat.completions.create(**self.params, messages=self.messages))
        turn = turn_from(reply)
        message = {"role": "assistant", "content": reply["content"] or None}
        if reply["tool_calls"]:
            message["tool_calls"] = [{"id": c["id"], "type": "function", "function": c["function"]}
                                     for c in reply["tool_calls"]]
        self.messages.append(message)
        return turn


def completion_dict(completion) -> dict:
    """The parts of a completion a tool turn needs, in one shape for streamed and not."""
    choice = completion.choices[0] if completion.choices else None
    message = choice.message if choice else None
    calls = [{"id": c.id, "function": {"name": c.function.name, "arguments": c.function.arguments}}
             for c in (getattr(message, "tool_calls", None) or []) if getattr(c, "function", None)]
    return {"model": completion.model, "usage": completion.usage,
            "finish_reason": choice.finish_reason if choice else None,
            "content": (message.content if message else "") or "", "refusal": getattr(message, "refusal", None),
            "tool_calls": calls}


def accumulate(chunks) -> dict:
    """A streamed completion: text, refusal, finish reason, model, usage, and each tool call
    (by its index) with its argument fragments joined as sent."""
    reply = {"model": None, "usage": None, "finish_reason": None, "content": "", "refusal": None, "tool_calls": []}
    calls: dict = {}
    for chunk in chunks:
        reply["model"] = chunk.model or reply["model"]
        reply["usage"] = chunk.usage or reply["usage"]
        for choice in chunk.choices[:1]:
            reply["finish_reason"] = choice.finish_reason or reply["finish_reason"]
            reply["content"] += choice.delta.content or ""
            refusal = getattr(choice.delta, "refusal", None)
            reply["refusal"] = (reply["refusal"] or "") + refusal if refusal else reply["refusal"]
            for delta in getattr(choice.delta, "tool_calls", None) or []:
                _add_call_delta(calls, delta)
    reply["tool_calls"] = [calls[i] for i in sorted(calls)]
    return reply


def _add_call_delta(calls: dict, delta) -> None:
    call = calls.setdefault(delta.index, {"id": "", "function": {"name": "", "arguments": ""}})
    call["id"] = delta.id or call["id"]
    function = delta.function
    if function is not None:
        call["function"]["name"] += function.name or ""
        call["function"]["arguments"] += function.arguments or ""


def turn_from(reply: dict):
    """A ModelTurn; a refusal or an empty turn is the loop's SessionError, its usage kept."""
    usage, model, finish = usage_from(reply["usage"]), reply["model"], reply["finish_reason"]
    if reply["refusal"] or finish == "content_filter":
        raise SessionError(f"refused: {(reply['refusal'] or 'finish_reason content_filter').strip()[:300]}",
                           usage, model)
    calls = [ToolCall(c["id"], c["function"]["name"], parse_arguments(c["function"]["arguments"]))
             for c in reply["tool_calls"]]
    truncated = finish == "length"
    if not truncated and not calls and not reply["content"].strip():
        raise SessionError(exchange.empty_detail(Reply(model=model, usage=usage)), usage, model)
    return ModelTurn(text=reply["content"], calls=calls, usage=usage, stop=finish or "", truncated=truncated,
                     model=model)


@hookimpl
def register_models(register):
    register(OpenAIAdapter())
    register(OpenAICompatibleAdapter())
