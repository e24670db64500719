"""`openai` (gpt-*, o-series) and `openai-compatible:<model>` (any --base-url: vLLM, SGLang,
llama.cpp's server, Ollama), both through the official `openai` SDK's Chat Completions API.

The files come back as the message content under a strict JSON schema (response_format
json_schema), whose file paths are limited to the declared names. `openai-compatible`
sends the same schema in the form llama.cpp's servers (llama-server, llama-cpp-python)
constrain decoding with, `{"type": "json_object", "schema": ...}`, which vLLM, SGLang and
Ollama accept as JSON mode; llama-cpp-python rejects the json_schema form outright. A
server that does not enforce the schema is still parsed strictly: anything else is
adapter_error, never a guess. Streamed or not, the reply is read as the API's JSON
(`sb.models.sdk` reads the bytes) and reduced to one shape (`completion_dict`, `accumulate`);
a completion without a finish_reason never finished and is never graded. A tool_loop task
is a conversation over the native tool interface (`ToolConversation`, below).
"""

from __future__ import annotations

import dataclasses
import os
import re

from sb.hookspecs import hookimpl
from sb.models import exchange
from sb.models.base import ModelOptions
from sb.models.exchange import Reply, ReplyError
from sb.models.reply_body import BadReply
from sb.models.retry import Request
from sb.models.sdk import BASE_SETTINGS, SdkAdapter, Service, history_arguments
from sb.models.wording import json_type, plural
from sb.toolloop import ModelTurn, SessionError, ToolCall, parse_arguments

OPENAI_MODELS = re.compile(r"^(gpt-|chatgpt-|o\d)")
PLACEHOLDER_KEY = "sb-no-key"  # a local server without --api-key still wants a bearer token


class OpenAIAdapter(SdkAdapter):
    name = provider = extra = "openai"
    routes = "gpt-*, chatgpt-*, o1/o3/o4... (Chat Completions API)"
    service = Service("openai", "OpenAI", "OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1")
    supported_settings = BASE_SETTINGS + ("effort", "seed")
    max_tokens_param = "max_completion_tokens"
    response_format = "json_schema"
    # the API takes back a tool call's arguments as any string, so broken ones go back as sent
    server_parses_arguments = False

    def claims(self, model: str) -> bool:
        return bool(OPENAI_MODELS.match(model))

    def conversation(self, model: str, task, tools: list, settings: dict) -> "ToolConversation":
        return ToolConversation(model, task, tools, settings, self.stream, self.max_tokens_param,
                                self.server_parses_arguments)

    def ask(self, client, request: Request, model: str, task, settings: dict) -> Reply:
        params = request_params(model, task, settings, self.max_tokens_param, self.response_format)
        return reply_from(post(client, request, params, self.stream))


class OpenAICompatibleAdapter(OpenAIAdapter):
    name = "openai-compatible"
    routes = "openai-compatible:<model> with --base-url (vLLM, SGLang, llama.cpp, Ollama)"
    provider = "openai-compatible"  # nothing priced: a local model has no bill to re-derive
    # always the user's own server, and never OPENAI_API_KEY's key
    service = dataclasses.replace(OpenAIAdapter.service, api_key_env="OPENAI_COMPATIBLE_API_KEY", official_url=None)
    max_tokens_param = "max_tokens"   # what every compatible server accepts
    response_format = "json_object"
    server_parses_arguments = True    # vLLM, llama.cpp: arguments sent back that are not JSON fail the request

    def claims(self, model: str) -> bool:
        return False  # only by name: openai-compatible:<model>

    def api_key(self, options: ModelOptions) -> str:
        """Optional, and never OPENAI_API_KEY: a real key must not go to an arbitrary server."""
        return os.environ.get(self.service.api_key_env) or PLACEHOLDER_KEY

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



def post(client, request: Request, params: dict, stream: bool) -> dict:
    """One Chat Completions request through `request`: the completion in `completion_dict`'s shape."""
    extra = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}

    def open_response(timeout: float):
        return client.chat.completions.with_streaming_response.create(**params, **extra, timeout=timeout)
    return request.send(open_response,
                        lambda body: accumulate(body.events()) if stream else completion_dict(body.json()))


def reply_from(reply: dict) -> Reply:
    if not reply["choices"]:
        return Reply(model=reply["model"], usage=usage_from(reply["usage"]), problem="no choices in the reply")
    return _reply(reply["model"], reply["usage"], reply["finish_reason"], reply["content"], reply["refusal"])


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
    """Prompt tokens include cached ones: `input` is the uncached rest, as the price table
    expects. None when the reply carried no usage; counts that are not counts are kept for
    `usage_problem` to name (a negative rest too: more cached tokens than prompt tokens)."""
    if not isinstance(usage, dict) or not usage:
        return None
    prompt = usage.get("prompt_tokens_details")
    if not isinstance(prompt, dict):
        prompt = {}
    completion = usage.get("completion_tokens_details")
    cached, written = prompt.get("cached_tokens") or 0, prompt.get("cache_write_tokens") or 0
    total = usage.get("prompt_tokens") or 0
    counts = all(isinstance(n, int) and not isinstance(n, bool) for n in (total, cached, written))
    reasoning = completion.get("reasoning_tokens") if isinstance(completion, dict) else None
    return exchange.usage_record(input=total - cached - written if counts else total,
                                 output=usage.get("completion_tokens"), cache_read=cached, cache_write=written,
                                 reasoning=reasoning)


# -- reading a reply ----------------------------------------------------------------------------

def completion_dict(body: dict) -> dict:
    """What the protocol reads of a completion, checked: model, usage, the first choice's
    finish reason, content, refusal and tool calls, and how many choices there were."""
    choices = body.get("choices")
    if not isinstance(choices, list):
        raise BadReply(f"a malformed completion: its choices are a JSON {json_type(choices)}, not an array")
    reply = _empty(body.get("model"), body.get("usage"))
    if choices:
        try:
            _take_choice(reply, choices[0])
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise BadReply("a malformed completion: its first choice is not a choice") from None
        if reply["finish_reason"] is None:
            raise BadReply("the completion has no finish_reason: it never finished")
    return _checked(reply, "completion")


def _empty(model, usage) -> dict:
    return {"model": model, "usage": usage, "finish_reason": None, "content": "", "refusal": None,
            "tool_calls": [], "choices": 0}


def _take_choice(reply: dict, choice: dict) -> None:
    message = choice["message"]
    reply["choices"], reply["finish_reason"] = 1, choice.get("finish_reason")
    reply["content"] = _text(message.get("content"))
    reply["refusal"] = _text(message.get("refusal")) or None
    for call in message.get("tool_calls") or []:
        if call.get("function") is not None:
            function = call["function"]
            reply["tool_calls"].append({"id": _text(call.get("id")), "function": {
                "name": _text(function.get("name")), "arguments": function.get("arguments") or ""}})


def _text(value) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(value)
    return value


def _checked(reply: dict, what: str) -> dict:
    for key, kinds in (("model", str), ("usage", dict), ("finish_reason", str)):
        if reply[key] is not None and not isinstance(reply[key], kinds):
            raise BadReply(f"a malformed {what}: its {key} is a JSON {json_type(reply[key])}")
    return reply


def accumulate(chunks) -> dict:
    """A streamed completion in `completion_dict`'s shape: each tool call (by its index) with
    its argument fragments joined as sent. A stream that ends without a finish_reason never
    finished, however cleanly the connection closed."""
    calls: dict[int, dict] = {}
    reply, count = _empty(None, None), 0
    for chunk in chunks:
        count += 1
        try:
            _add_chunk(reply, calls, chunk)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise BadReply(f"a malformed chunk in the reply stream (chunk {count})") from None
    if not count:
        raise BadReply("the reply stream ended before its first chunk")
    if reply["choices"] and reply["finish_reason"] is None:
        raise BadReply(f"the reply stream ended without a finish_reason: the completion never finished "
                       f"({plural(count, 'chunk')})")
    reply["tool_calls"] = [calls[i] for i in sorted(calls)]
    return _checked(reply, "reply stream")


def _add_chunk(reply: dict, calls: dict, chunk: dict) -> None:
    reply["model"] = chunk.get("model") or reply["model"]
    reply["usage"] = chunk.get("usage") or reply["usage"]
    for choice in (chunk.get("choices") or [])[:1]:
        delta = choice.get("delta") or {}
        reply["choices"] = 1
        reply["finish_reason"] = choice.get("finish_reason") or reply["finish_reason"]
        reply["content"] += _text(delta.get("content"))
        refusal = _text(delta.get("refusal"))
        reply["refusal"] = (reply["refusal"] or "") + refusal if refusal else reply["refusal"]
        for call_delta in delta.get("tool_calls") or []:
            _add_call_delta(calls, call_delta)


def _add_call_delta(calls: dict, delta: dict) -> None:
    index = delta.get("index", 0)
    if not isinstance(index, int):
        raise TypeError(index)
    call = calls.setdefault(index, {"id": "", "function": {"name": "", "arguments": ""}})
    call["id"] = _text(delta.get("id")) or call["id"]
    function = delta.get("function")
    if function is not None:
        call["function"]["name"] += _text(function.get("name"))
        call["function"]["arguments"] += _text(function.get("arguments"))


# -- tool loops -------------------------------------------------------------------------------

class ToolConversation:
    """A tool loop over Chat Completions: the task's tools as `tools` (functions, offered as
    the task ships them and not `strict`, so a schema-valid argument is the model's doing, not
    a constrained decoder's), each turn's `tool_calls` answered by one `role: tool` message
    per call. No system prompt and no tool_choice: prompt.md is the first message. The
    arguments are the string the model sent, parsed strictly. They go back in the history as
    the model sent them where the server takes them back so (OpenAI's API takes any string);
    where it parses them (`server_parses_arguments`: vLLM, llama.cpp), broken ones go back as
    `"{}"`, as the Anthropic adapter sends `{}` to the Messages API (`history_arguments`),
    and their tool message says the arguments were not a JSON object."""

    def __init__(self, model: str, task, tools: list, settings: dict, stream: bool, max_tokens_param: str,
                 server_parses_arguments: bool = False):
        self.stream, self.server_parses_arguments = stream, server_parses_arguments
        self.params = {"model": model, "tools": [
            {"type": "function", "function": {"name": t["name"], "description": t["description"],
                                              "parameters": t["input_schema"]}} for t in tools],
            **knobs(settings, max_tokens_param)}
        self.messages = [{"role": "user", "content": task.prompt}]

    def step(self, client, request: Request, results: list):
        self.messages += [{"role": "tool", "tool_call_id": call_id, "content": text} for call_id, text in results]
        reply = post(client, request, {**self.params, "messages": self.messages}, self.stream)
        turn = turn_from(reply)
        message = {"role": "assistant", "content": reply["content"] or None}
        if reply["tool_calls"]:
            message["tool_calls"] = [{"id": c["id"], "type": "function", "function": self._sent_back(c["function"])}
                                     for c in reply["tool_calls"]]
        self.messages.append(message)
        return turn

    def _sent_back(self, function: dict) -> dict:
        """A call's function as it goes back in the history: as sent, or with "{}" for broken
        arguments where the server parses them."""
        if not self.server_parses_arguments or history_arguments(function["arguments"]) is not None:
            return function
        return {"name": function["name"], "arguments": "{}"}


def turn_from(reply: dict):
    """A ModelTurn; a refusal or an empty turn is the loop's SessionError, its usage kept."""
    usage, model, finish = usage_from(reply["usage"]), reply["model"], reply["finish_reason"]
    if not reply["choices"]:
        raise SessionError("no choices in the reply", usage, model)
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
