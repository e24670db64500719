"""The public grading API integrations use (sb.find_tasks, solver_messages, parse_reply,
grade_files, grade_reply, precheck): the same message, parsing and verdicts as `sb run`."""

from __future__ import annotations

import json

import pytest

import sb
from sb.models import exchange

FAST_TASK = "regex"  # about a second to grade


@pytest.fixture(scope="module")
def regex():
    return sb.find_tasks([FAST_TASK])[0]


def test_the_message_is_what_the_openai_adapters_send(regex):
    system, user = sb.solver_messages(regex)
    assert system == {"role": "system", "content": exchange.JSON_INSTRUCTIONS}
    assert user == {"role": "user", "content": exchange.user_message(regex)}
    assert '{"files": {"<file name>": "<complete new content>"}}' in system["content"]  # braces intact
    assert sb.reply_schema(regex)["properties"]["files"]["required"] == list(regex.declared_files)


def test_reply_tasks_and_tool_loops(regex):
    reply_task, tool_loop = sb.find_tasks(["format", "tools"])
    assert sb.solver_messages(reply_task)[0]["content"] == exchange.REPLY_INSTRUCTIONS
    assert sb.reply_schema(reply_task) is None
    assert sb.parse_reply(reply_task, "an answer").files == {"reply.md": b"an answer"}
    with pytest.raises(sb.SbError, match="tool_loop"):
        sb.solver_messages(tool_loop)


def test_parse_reply_is_as_strict_as_sb_run(regex):
    good = sb.parse_reply(regex, json.dumps({"files": {"pattern.py": "PATTERN = ''\n", "conftest.py": "x"}}))
    assert good.files == {"pattern.py": b"PATTERN = ''\n"} and good.dropped == ["conftest.py"] and not good.problem
    assert "not JSON" in sb.parse_reply(regex, "```json\n{}\n```").problem  # never scraped out of prose
    assert "malformed output" in sb.parse_reply(regex, json.dumps({"pattern.py": "x"})).problem
    assert sb.parse_reply(regex, "").problem == "empty reply"


def test_a_malformed_reply_is_an_adapter_error_without_grading(regex):
    """(Right answers and mutants are graded through this API in test_inspect.py.)"""
    assert sb.precheck(regex) is None
    malformed = sb.grade_reply(regex, "I fixed it.")
    assert malformed.status == sb.Status.ADAPTER_ERROR and not malformed.evidence and malformed.duration_s == 0


def test_an_unusable_sandbox_is_one_error_not_an_outcome(regex):
    with pytest.raises(sb.SbError, match="unknown isolation"):
        sb.choose_sandbox("nowhere")
    with pytest.raises(sb.SbError, match="unknown isolation"):
        sb.grade_files(regex, {}, "nowhere")


def test_every_public_name_resolves_and_importing_sb_loads_none_of_them():
    import subprocess
    import sys

    import sb
    assert sorted(sb.__all__) == sorted(sb._MODULE_OF)
    assert all(getattr(sb, name) is not None for name in sb.__all__)
    probe = "import sys, sb; print(sorted(m for m in sys.modules if m.startswith('sb.')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"  # a task package's `from sb import hookimpl` loads only sb.hookspecs
