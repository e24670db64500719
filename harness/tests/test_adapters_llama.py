"""End to end against a real OpenAI-compatible inference server: llama.cpp's server
(llama-cpp-python) serving a tiny random-weight llama that tests/llama_server.py writes.

The model's answer is nonsense. The run must grade it (failed or solution_error), with
token counts from the server, and never crash.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import sb_env
from llama_server import MODEL_NAME, llama_base_url, tiny_llama_path  # noqa: F401  (fixtures)

pytest.importorskip("openai")


@pytest.mark.integration
def test_a_sweep_against_llama_cpp_grades_nonsense_with_server_token_counts(llama_base_url, fixture_task, tmp_path):
    from sb.models.base import ModelOptions, resolve_model
    from sb.run import Sweep, run_draws
    from sb.sandbox.plain import PlainSandbox
    adapter, model = resolve_model(f"openai-compatible:{MODEL_NAME}")
    options = ModelOptions(base_url=llama_base_url, settings={"temperature": 0.0, "max_tokens": 768}, timeout_s=300)
    sweep = Sweep([fixture_task], adapter, model, PlainSandbox(), options, tmp_path / "results", jobs=1)
    (doc, path), = run_draws(sweep)
    entry, = doc["tasks"]
    assert entry["status"] in ("failed", "solution_error"), entry
    assert entry["model_answered"] == MODEL_NAME
    tokens = entry["tokens"]
    assert tokens["input"] > 100 and tokens["output"] > 0
    assert entry["usd_cost"] is None and doc["usd_cost"] is None
    assert doc["settings"] == {"temperature": 0.0, "max_tokens": 768} and doc["base_url"] == llama_base_url
    assert json.loads(path.read_text())["tasks"][0]["tokens"] == tokens
