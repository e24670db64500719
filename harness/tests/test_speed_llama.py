"""`sb speed` against a real inference server: llama.cpp's server on a tiny random llama it writes itself.

No download: tests/llama_server.py writes the model with `gguf` and starts
`python -m llama_cpp.server` on a free loopback port. llama-cpp-python's server handles
one request at a time, so two streams at once queue: the figures must still all be there.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import sb_env
from llama_server import MODEL_NAME, llama_base_url, tiny_llama_path  # noqa: F401  (fixtures)


@pytest.mark.integration
def test_sb_speed_against_llama_cpp_server(llama_base_url, tmp_path):  # noqa: F811 - the fixture imported above
    result = subprocess.run(
        [sys.executable, "-c", "from sb.cli import main; main()", "speed", "--base-url", llama_base_url,
         "--model", MODEL_NAME, "--concurrency", "1,2", "--requests-per-level", "2", "--floor", "50",
         "--hardware", "CI: 2 shared CPU cores, no accelerator", "--results", str(tmp_path), "--json"],
        capture_output=True, text=True, env=sb_env(), timeout=600)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["warmup"]["output_tokens"] == 256
    assert len(doc["requests"]) == 4
    for record in doc["requests"]:
        assert record["flag"] is None, record["error"]
        assert record["output_tokens"] == 256 and record["content_chunks"] == 256
        assert 0 < record["ttft_s"] < record["e2e_s"] and record["itl_s"] > 0 and record["tokens_per_s"] > 0
    assert doc["model"] and doc["token_count_source"] in ("usage", "chunks")
    for level in doc["levels"]:
        assert level["valid"] == 2 and level["flagged"] == {}
        for figure in ("ttft_s", "itl_s", "e2e_s"):
            assert all(level[figure][q] > 0 for q in ("median", "p90", "p99")), (figure, level[figure])
        assert level["per_stream_tokens_per_s"] > 0 and level["aggregate_tokens_per_s"] > 0
        # How long the streams overlap is the server's scheduling (one request at a time on one
        # thread here), not the client's measurement, which test_speed.py asserts to 1% against
        # the scripted server: here the figure must only exist and be possible.
        assert 0 < level["achieved_concurrency"] <= level["concurrency"] * 1.01
    assert doc["single_stream"]["tokens_per_s"] > 0 and doc["capacity"]["capacity_streams"] is not None
    assert doc["capacity"]["peak_aggregate_over_floor"] > 0
    assert (tmp_path / doc["chart"]).read_bytes()[:4] == b"\x89PNG"


def _sb_speed(base_url, tmp_path, *args):
    result = subprocess.run(
        [sys.executable, "-c", "from sb.cli import main; main()", "speed", "--base-url", base_url,
         "--model", MODEL_NAME, "--hardware", "CI: 2 shared CPU cores, no accelerator", "--results", str(tmp_path),
         "--json", *args],
        capture_output=True, text=True, env=sb_env(), timeout=600)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.integration
def test_sb_speed_slo_run_against_llama_cpp_server(llama_base_url, tmp_path):  # noqa: F811 - the fixture imported above
    # Bounds far above what a tiny model on one thread needs: the run must judge, not fail.
    doc = _sb_speed(llama_base_url, tmp_path, "--concurrency", "1,2", "--requests-per-level", "2",
                    "--slo", "ttft:p90<=60s,itl:p99<=2s,e2e:p90<=120s,tps:p90>=1")
    assert [o["metric"] for o in doc["slo"]["objectives"]] == ["ttft", "itl", "e2e", "tps"]
    for level in doc["levels"]:
        judged = level["slo"]
        assert judged["held"] and judged["met_fraction"] == 1.0 and judged["met_requests"] == 2
        assert judged["goodput_rps"] > 0 and judged["goodput_tokens_per_s"] == pytest.approx(
            level["aggregate_tokens_per_s"], rel=1e-9)           # every request met: goodput is the aggregate
        assert all(o["value"] is not None and o["held"] for o in judged["objectives"])
    cap = doc["capacity"]
    assert cap["capacity_streams"] == 2 and cap["stopped_by"] == "every level held" and cap["share"] == 0.9
    assert (tmp_path / doc["chart"]).read_bytes()[:4] == b"\x89PNG"


@pytest.mark.integration
def test_sb_speed_open_loop_with_a_sized_prompt_against_llama_cpp_server(llama_base_url, tmp_path):  # noqa: F811 - the fixture imported above
    # llama-cpp-python counts about one token per character here (the tiny model's vocabulary);
    # calibration finds the filler length from its own prompt_tokens (non-streamed probes, since
    # its streamed responses carry no usage report).
    doc = _sb_speed(llama_base_url, tmp_path, "--rate", "0.5,1", "--arrivals", "poisson", "--seed", "3",
                    "--requests-per-level", "3", "--prompt-tokens", "300", "--slo", "ttft:p90<=60s")
    assert doc["load"] == "open" and [lv["rate_rps"] for lv in doc["levels"]] == [0.5, 1]
    cal = doc["prompt"]["calibration"]["300"]
    assert cal["tokens_per_word"] > 0 and abs(cal["reported"] - 300) <= 30, cal
    for record in doc["requests"]:
        assert record["flag"] is None, (record["flag"], record["error"], record["prompt_tokens"])
        assert record["output_tokens"] == 256 and record["prompt_tokens_target"] == 300
        assert record["prompt_token_source"] in ("usage", "calibration")
        assert record["send_lag_s"] >= 0 and record["scheduled_s"] > 0
    for level in doc["levels"]:
        assert level["valid"] == 3 and level["send_lag_s"]["median"] is not None
        assert level["client_limited"] in (True, False) and level["slo"]["met_fraction"] is not None
    assert doc["capacity"]["unit"] == "requests/s" and doc["capacity"]["capacity_rate_rps"] is not None
