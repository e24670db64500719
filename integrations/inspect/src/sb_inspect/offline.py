"""`sb-offline/<behaviour>`: a model provider that needs no network, no key and no tokenizer
file, for tests and for trying the task: Inspect's mockllm counts tokens with tiktoken,
which downloads its encoding at first use and fails offline.

It recognises the task from the user message (exactly what `sb` sends) and answers:
`reference` with the task's reference, `starter` with the untouched starter,
`mutant:<name>` with that hand-written mutant, `malformed` with prose instead of JSON,
`truncated` with the first half of the reference's reply, stopped at the output limit.
Usage is a fixed function of the text lengths (about four characters a token).
"""

from __future__ import annotations

import functools
import json

import sb
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

BEHAVIOURS = ("reference", "starter", "mutant:<name>", "malformed", "truncated")
PROSE = "Here is my solution: I changed the function to handle the edge cases."


class OfflineModel(ModelAPI):
    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args) -> None:
        super().__init__(model_name, base_url, api_key, [], config if config is not None else GenerateConfig())
        self.behaviour, _, self.mutant = model_name.partition(":")
        known = {b.split(":")[0] for b in BEHAVIOURS}
        if self.behaviour not in known or (self.behaviour == "mutant") != bool(self.mutant):
            raise ValueError(f"sb-offline/{model_name}: choose one of {', '.join(BEHAVIOURS)}")

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        user = next(m.text for m in input if m.role == "user")
        text, stop = self.answer(task_for_message(user)), "stop"
        if self.behaviour == "truncated":
            text, stop = text[:len(text) // 2], "max_tokens"
        output = ModelOutput.from_content(model=self.model_name, content=text, stop_reason=stop)
        prompt = sum(len(m.text) for m in input) // 4
        output.usage = ModelUsage(input_tokens=prompt, output_tokens=len(text) // 4,
                                  total_tokens=prompt + len(text) // 4)
        return output

    def answer(self, task: sb.Task) -> str:
        if self.behaviour == "malformed":
            return PROSE
        if self.behaviour == "mutant":
            files = task.mutant_solution(task.mutant(self.mutant))
        else:
            files = task.starter_files if self.behaviour == "starter" else task.reference_files
        declared = {name: files[name].decode("utf-8") for name in task.declared_files if name in files}
        if task.meta.kind == "reply":
            return declared.get("reply.md", "")
        return json.dumps({"files": declared})


@functools.lru_cache(maxsize=None)
def task_for_message(user_message: str) -> sb.Task:
    for task in sb.find_tasks():
        if task.meta.kind != "tool_loop" and sb.solver_messages(task)[1]["content"] == user_message:
            return task
    raise ValueError("sb-offline: the user message is not any installed scratchbench task's")


@modelapi(name="sb-offline")
def sb_offline():
    return OfflineModel
