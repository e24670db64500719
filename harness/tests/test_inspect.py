"""scratchbench inside Inspect (integrations/inspect, the `sb_inspect` package), offline.

`sb_inspect/scratchbench` found through Inspect's entry point as `inspect eval` finds it, with
the offline provider shipped for this (Inspect's mockllm counts tokens with tiktoken, which
downloads a file); then the same task through Inspect's openai provider against the
scripted local server. The fastest task (regex, about a second to grade) keeps this short.
"""

from __future__ import annotations

import json
import math

import pytest

import sb
from scripted_llm_server import Scripted, ScriptedServer

TASK = "regex"
MUTANT = "no_escapes"
MODELS = ("sb-offline/reference", f"sb-offline/mutant:{MUTANT}", "sb-offline/malformed", "sb-offline/truncated")


@pytest.fixture(scope="module")
def regex():
    return sb.find_tasks([TASK])[0]


@pytest.fixture(scope="module")
def offline_logs(tmp_path_factory):
    """The offline behaviours, one eval each, run side by side by one `eval` call that
    names the task as `inspect eval` does (Inspect finds it through the entry point)."""
    from inspect_ai import eval as inspect_eval
    logs = inspect_eval("sb_inspect/scratchbench", task_args={"tasks": TASK}, model=list(MODELS),
                        log_dir=str(tmp_path_factory.mktemp("inspect-logs")), display="none")
    return {log.eval.model: log for log in logs}


def only_score(log):
    assert log.status == "success", log.error
    (sample,) = log.samples
    return sample, sample.scores["sb_grader"]


def metrics(log) -> dict:
    (score,) = log.results.scores
    return {name: metric.value for name, metric in score.metrics.items()}


def test_the_task_is_registered_under_the_package_and_the_input_is_sbs(offline_logs, regex):
    from importlib.metadata import entry_points
    (point,) = entry_points(group="inspect_ai", name="sb_inspect")  # what `inspect eval sb_inspect/...` loads
    assert point.value == "sb_inspect._registry"
    log = offline_logs["sb-offline/reference"]
    assert log.eval.task == "sb_inspect/scratchbench" and log.eval.task_args_passed == {"tasks": TASK}
    sample, _ = only_score(log)
    assert sample.id == TASK
    sent = [{"role": m.role, "content": m.text} for m in sample.input]
    assert sent == sb.solver_messages(regex)  # the system message too, its braces intact
    assert sample.model_usage["sb-offline/reference"].input_tokens > 0  # usage set, no tokenizer download


def test_a_right_answer_is_correct(offline_logs):
    log = offline_logs["sb-offline/reference"]
    _, score = only_score(log)
    assert score.value == "C" and score.metadata["status"] == "passed" and score.metadata["evidence"]
    assert score.metadata["outcome"]["isolation"] == "bwrap"
    assert metrics(log) == {"pass_rate": 1.0, "measured": 1}


def test_a_hand_mutant_is_incorrect_with_its_failing_ids(offline_logs, regex):
    log = offline_logs[f"sb-offline/mutant:{MUTANT}"]
    _, score = only_score(log)
    mutant = regex.mutant_solution(regex.mutant(MUTANT))
    direct = sb.grade_files(regex, {name: mutant[name].decode() for name in regex.declared_files})  # str is fine
    assert score.value == "I" and score.metadata["status"] == "failed"
    assert score.explanation.splitlines()[1:] == direct.failed_tests != []
    assert score.metadata["outcome"]["failed_tests"] == direct.failed_tests
    assert metrics(log) == {"pass_rate": 0.0, "measured": 1}
    assert direct.isolation == "bwrap" and direct.evidence


def test_malformed_output_is_an_adapter_error_left_out_of_the_rate(offline_logs):
    log = offline_logs["sb-offline/malformed"]
    _, score = only_score(log)
    assert score.value == "I" and score.metadata["status"] == "adapter_error" and not score.metadata["evidence"]
    assert "not JSON" in score.explanation
    rate = metrics(log)
    assert math.isnan(rate["pass_rate"]) and rate["measured"] == 0  # not measured; accuracy would say 0


def test_a_reply_cut_off_at_the_output_limit_is_truncated_not_a_failure(offline_logs):
    log = offline_logs["sb-offline/truncated"]
    _, score = only_score(log)
    assert score.metadata["status"] == "truncated" and not score.metadata["evidence"]
    assert math.isnan(metrics(log)["pass_rate"])


def test_a_tool_loop_task_is_refused_with_the_reason():
    from sb_inspect import scratchbench
    with pytest.raises(ValueError, match="tool_loop task's conversation is driven by `sb run`"):
        scratchbench(tasks="tools")
    coding = scratchbench(suite="coding")  # chosen by a filter: left out, and said so
    assert "tools" not in {s.id for s in coding.dataset} and coding.metadata["left_out"] == {"tools": "tool_loop"}


def test_the_openai_provider_against_a_scripted_server(regex, tmp_path, monkeypatch):
    """Two epochs, one right and one prose reply: the epochs are pooled as sb pools draws,
    over evidence only (Inspect's mean would give 0.5), and the request is sb's."""
    from inspect_ai import eval as inspect_eval
    from sb_inspect import scratchbench
    right = {name: regex.reference_files[name].decode() for name in regex.declared_files}
    with ScriptedServer([Scripted(payload={"files": right}), Scripted(raw="Here is the fix: ...")]) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        (log,) = inspect_eval(scratchbench(tasks=TASK), model="openai/gpt-4o-mini", epochs=2,
                              log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert sorted(s.scores["sb_grader"].metadata["status"] for s in log.samples) == ["adapter_error", "passed"]
    assert metrics(log) == {"pass_rate": 1.0, "measured": 1}
    for request in server.requests:
        assert request.path == "/v1/chat/completions"
        assert request.body["messages"] == sb.solver_messages(regex)
        schema = request.body["response_format"]["json_schema"]
        assert schema["strict"] is True and schema["schema"] == sb.reply_schema(regex)
    assert json.dumps(log.samples[0].model_usage["openai/gpt-4o-mini"].input_tokens) == "120"


def test_gradings_run_at_most_one_per_core_at_once():
    # The scorer grades on threads through one named Inspect concurrency slot sized to the
    # cores: cores + 2 gradings started together never overlap more than the cores.
    import os
    import threading
    import time

    import anyio
    from sb_inspect.scoring import in_grading_slot

    cores = os.cpu_count() or 1
    lock, running, seen = threading.Lock(), [0], [0]

    def grading():
        with lock:
            running[0] += 1
            seen[0] = max(seen[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1

    async def all_at_once():
        async with anyio.create_task_group() as group:
            for _ in range(cores + 2):
                group.start_soon(in_grading_slot, grading)

    anyio.run(all_at_once)
    assert seen[0] == cores
