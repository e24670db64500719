"""`sb speed` against a scripted server whose timing is known exactly, plus the pure figures.

The scripted server (sb.speed.scripted) runs in its own process and stamps, with the same
system-wide monotonic clock, when it finished reading each request and when it handed each
chunk to the kernel. Every measured figure is compared with those stamps. Stated errors
(what these tests assert; docs/speed.md gives the measured figures):
- time to first token: median error per level under 1 ms, every request under 15 ms
  (a shared 2-core machine can deschedule either process for several ms);
- inter-token latency and per-request tokens/s: median error per level within 0.5%,
  every request within 3%; aggregate tokens/s within 0.5%;
- achieved concurrency: within 1%.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sb.speed import figures, procedure, records
from sb.speed.client import RawResponse, _ResponseParser
from sb.speed.loadgen import Plan, measure
from sb.speed.scripted import scripted_server

from conftest import sb_env

TTFT_MS, ITL_MS, FIRST_TTFT_MS = 30.0, 4.0, 300.0
TTFT_MEDIAN_ERROR_S, TTFT_MAX_ERROR_S, RELATIVE_ERROR, RELATIVE_MAX_ERROR = 1e-3, 15e-3, 0.005, 0.03
LEVELS = (1, 4, 16, 32)
SHORT_REQUEST = 2           # the server's request number 2: the second measured request


# ---------------------------------------------------------------- pure figures


def test_percentile_interpolates_like_numpy():
    assert figures.percentile([1, 2, 3, 4], 50) == 2.5
    assert figures.percentile([0, 10], 90) == pytest.approx(9.0)
    assert figures.percentile([], 50) is None


def _level(concurrency, per_stream, aggregate=None):
    return {"concurrency": concurrency, "per_stream_tokens_per_s": per_stream,
            "aggregate_tokens_per_s": aggregate if aggregate is not None else concurrency * per_stream}


def test_capacity_is_the_last_level_before_the_floor_breaks_never_peak_over_floor():
    levels = [_level(1, 100), _level(2, 90), _level(4, 60), _level(8, 40), _level(16, 56), _level(32, 20)]
    cap = figures.capacity(levels, floor=55)
    assert cap["capacity_streams"] == 4          # 16 meets the floor again, but 8 already broke it
    assert cap["peak_at_concurrency"] == 16 and cap["peak_aggregate_tokens_per_s"] == 16 * 56
    assert cap["peak_aggregate_over_floor"] == pytest.approx(16 * 56 / 55)
    assert cap["peak_aggregate_over_floor"] > cap["capacity_streams"]
    assert "always higher" in cap["explanation"] or "falls as concurrency rises" in cap["explanation"]


def test_capacity_zero_when_one_stream_misses_the_floor_and_none_without_floor():
    levels = [_level(1, 10), _level(2, 9)]
    assert figures.capacity(levels, floor=50)["capacity_streams"] == 0
    no_floor = figures.capacity(levels, floor=None)
    assert no_floor["capacity_streams"] is None and no_floor["peak_aggregate_over_floor"] is None
    assert no_floor["peak_aggregate_tokens_per_s"] == 18


def test_requests_per_level_never_below_the_streams():
    assert procedure.requests_for_level(32, 4) == 32
    assert procedure.requests_for_level(1, None) == 8 and procedure.requests_for_level(16, None) == 32


# ---------------------------------------------------------------- parsing


def _sse(obj) -> bytes:
    data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return b"data: " + data + b"\r\n\r\n"


def _chunked(*events: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    return head + b"".join(f"{len(e):x}\r\n".encode() + e + b"\r\n" for e in events) + b"0\r\n\r\n"


def _delta(delta, usage=None):
    obj = {"id": "r1", "model": "served-name", "choices": [{"index": 0, "delta": delta}]}
    if usage is not None:
        obj = {"id": "r1", "model": "served-name", "choices": [], "usage": {"completion_tokens": usage}}
    return obj


def _feed_bytewise(payload: bytes, start_ns: int = 1_000) -> RawResponse:
    """Feed one byte per read, each read 1 µs later: framing must survive every split."""
    import asyncio
    loop = asyncio.new_event_loop()
    try:
        raw, done = RawResponse(t_written_ns=start_ns), loop.create_future()
        parser = _ResponseParser(raw, done)
        for i in range(len(payload)):
            parser.feed(start_ns + (i + 1) * 1_000, payload[i:i + 1])
        assert done.done(), "the response end was not recognised"
        return raw
    finally:
        loop.close()


def test_role_only_chunk_is_not_a_token_and_usage_wins_over_chunks():
    payload = _chunked(_sse(_delta({"role": "assistant", "content": ""})), _sse(_delta({"content": "ab"})),
                       _sse(_delta({"content": "c"})), _sse(_delta({}, usage=3)), _sse(b"[DONE]"))
    raw = _feed_bytewise(payload)
    record = records.build_record(raw, max_tokens=3, origin_ns=0, request_index=1, level=1)
    assert record["content_chunks"] == 2 and record["output_tokens"] == 3 and record["token_source"] == "usage"
    assert record["flag"] is None and record["model"] == "served-name"
    first_content_end = payload.index(b'"ab"') + len(b'"ab"}]}\r\n\r\n')
    assert record["ttft_s"] == pytest.approx(first_content_end * 1e-6, abs=2e-6)


def test_short_response_is_flagged_and_chunks_counted_without_usage():
    payload = _chunked(_sse(_delta({"role": "assistant"})), _sse(_delta({"content": "a"})),
                       _sse(_delta({"content": "b"})), _sse(b"[DONE]"))
    record = records.build_record(_feed_bytewise(payload), max_tokens=3, origin_ns=0, request_index=1, level=1)
    assert record["token_source"] == "chunks" and record["output_tokens"] == 2 and record["flag"] == "short"


def test_http_error_is_a_flagged_record_not_an_exception():
    body = b'{"error": "no such model"}'
    payload = b"HTTP/1.1 404 Not Found\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    record = records.build_record(_feed_bytewise(payload), 3, 0, 1, 1)
    assert record["flag"] == "error" and "404" in record["error"]


# ---------------------------------------------------------------- against the scripted server


@pytest.fixture(scope="module")
def scripted_run():
    with scripted_server(ttft_ms=TTFT_MS, itl_ms=ITL_MS, first_ttft_ms=FIRST_TTFT_MS, short=(SHORT_REQUEST,)) as server:
        measurement = measure(Plan(server.base_url, "asked-name", levels=LEVELS, requests_per_level=4))
        truth = server.truth()
    return measurement, truth


def _true_ttft(t):
    return (t["sent_ns"][0] - t["read_ns"]) / 1e9


def _valid(measurement, level):
    return [r for r in measurement.records if r["concurrency"] == level and r["flag"] is None]


@pytest.mark.parametrize("level", LEVELS)
def test_time_to_first_token_matches_the_server_within_the_stated_error(scripted_run, level):
    measurement, truth = scripted_run
    errors = [abs(r["ttft_s"] - _true_ttft(truth[r["id"]])) for r in _valid(measurement, level)]
    assert figures.percentile(errors, 50) < TTFT_MEDIAN_ERROR_S, errors
    assert max(errors) < TTFT_MAX_ERROR_S, errors


@pytest.mark.parametrize("level", LEVELS)
def test_inter_token_latency_and_throughput_within_half_a_percent(scripted_run, level):
    measurement, truth = scripted_run
    itl_errors, rate_errors = [], []
    for r in _valid(measurement, level):
        t = truth[r["id"]]
        true_itl = (t["sent_ns"][-1] - t["sent_ns"][0]) / 1e9 / (t["tokens"] - 1)
        true_rate = t["tokens"] / ((t["end_ns"] - t["read_ns"]) / 1e9)
        itl_errors.append(abs(r["itl_s"] / true_itl - 1))
        rate_errors.append(abs(r["tokens_per_s"] / true_rate - 1))
        assert r["itl_s"] == pytest.approx(ITL_MS / 1e3, rel=0.1)       # the script itself, loosely
    assert figures.percentile(itl_errors, 50) < RELATIVE_ERROR and max(itl_errors) < RELATIVE_MAX_ERROR, itl_errors
    assert figures.percentile(rate_errors, 50) < RELATIVE_ERROR and max(rate_errors) < RELATIVE_MAX_ERROR, rate_errors


@pytest.mark.parametrize("level", LEVELS)
def test_aggregate_and_achieved_concurrency_match_the_server(scripted_run, level):
    measurement, truth = scripted_run
    level_records = [r for r in measurement.records if r["concurrency"] == level]
    summary = figures.level_summary(level, level_records)
    served = [truth[r["id"]] for r in level_records]
    window = (max(t["end_ns"] for t in served) - min(t["read_ns"] for t in served)) / 1e9
    valid_tokens = sum(truth[r["id"]]["tokens"] for r in level_records if r["flag"] is None)
    busy = sum(t["end_ns"] - t["read_ns"] for t in served) / 1e9
    assert summary["aggregate_tokens_per_s"] == pytest.approx(valid_tokens / window, rel=RELATIVE_ERROR)
    assert summary["achieved_concurrency"] == pytest.approx(busy / window, rel=0.01)
    assert summary["achieved_concurrency"] == pytest.approx(level, rel=0.1)


def test_role_only_chunk_is_sent_but_not_counted(scripted_run):
    measurement, truth = scripted_run
    for r in _valid(measurement, 1):
        assert r["content_chunks"] == 256 and r["output_tokens"] == 256 and r["token_source"] == "usage"
        assert r["ttft_s"] > (truth[r["id"]]["role_ns"] - truth[r["id"]]["read_ns"]) / 1e9 + TTFT_MS / 2e3


def test_short_response_flagged_and_excluded_with_the_count_shown(scripted_run):
    measurement, _ = scripted_run
    flagged = [r for r in measurement.records if r["flag"] is not None]
    assert [(r["id"], r["flag"], r["output_tokens"]) for r in flagged] == [(f"chatcmpl-{SHORT_REQUEST}", "short", 255)]
    summary = figures.level_summary(1, [r for r in measurement.records if r["concurrency"] == 1])
    assert summary["requests"] == 4 and summary["valid"] == 3 and summary["flagged"] == {"short": 1}


def test_first_request_is_discarded_as_warm_up(scripted_run):
    measurement, _ = scripted_run
    assert measurement.warmup["id"] == "chatcmpl-0"
    assert measurement.warmup["ttft_s"] == pytest.approx(FIRST_TTFT_MS / 1e3, abs=0.01)
    assert "chatcmpl-0" not in {r["id"] for r in measurement.records}
    assert max(r["ttft_s"] for r in measurement.records if r["flag"] is None) < FIRST_TTFT_MS / 2e3


def test_token_count_from_chunks_when_the_server_gives_no_usage():
    with scripted_server(ttft_ms=5, itl_ms=1, usage=False) as server:
        measurement = measure(Plan(server.base_url, "m", levels=(2,), max_tokens=64, requests_per_level=2))
    assert [(r["token_source"], r["output_tokens"], r["flag"]) for r in measurement.records] == [("chunks", 64, None)] * 2


# ---------------------------------------------------------------- the command


def _sb(*args, **kwargs):
    return subprocess.run([sys.executable, "-c", "from sb.cli import main; main()", *args], capture_output=True,
                          text=True, env=sb_env(), timeout=300, **kwargs)


def test_sb_speed_writes_results_chart_and_capacity_against_a_slowing_server(tmp_path):
    # per stream: 256 / (0.01 s + 255 x (1 ms + 1 ms per other stream)): about 980, 490, 245, 122 tokens/s
    with scripted_server(ttft_ms=10, itl_ms=1, itl_per_stream_ms=1, model="served-name") as server:
        result = _sb("speed", "--base-url", server.base_url, "--model", "asked", "--concurrency", "1,2,4,8",
                     "--requests-per-level", "2", "--floor", "180", "--hardware", "2-core test box",
                     "--results", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    [path] = tmp_path.glob("speed-asked-*.json")
    assert json.loads(path.read_text()) == doc
    assert path.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert doc["kind"] == "speed" and doc["model"] == "served-name" and doc["model_requested"] == "asked"
    assert doc["hardware"] == "2-core test box" and doc["endpoint"] == server.base_url
    assert doc["procedure"]["output_tokens"] == 256 and doc["procedure"]["temperature"] == 0
    assert doc["token_count_source"] == "usage" and doc["flagged_requests"] == 0
    per_stream = [lv["per_stream_tokens_per_s"] for lv in doc["levels"]]
    assert per_stream == sorted(per_stream, reverse=True)
    assert doc["capacity"]["capacity_streams"] == 4
    assert doc["capacity"]["peak_aggregate_over_floor"] > 4
    assert len(doc["requests"]) == 2 + 2 + 4 + 8 and doc["warmup"]["concurrency"] == 0
    assert doc["single_stream"]["tokens_per_s"] == pytest.approx(doc["levels"][0]["per_stream_tokens_per_s"])


def test_sb_speed_table_says_capacity_and_why_peak_over_floor_is_higher(tmp_path):
    with scripted_server(ttft_ms=10, itl_ms=1, itl_per_stream_ms=1) as server:
        result = _sb("speed", "--base-url", server.base_url, "--model", "m", "--concurrency", "1,2,4,8",
                     "--requests-per-level", "1", "--max-tokens", "64", "--floor", "180",
                     "--results", str(tmp_path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "capacity: " in out and "peak aggregate / floor = " in out and "falls as concurrency rises" in out
    assert "tokens per request" in out and "results: " in out and "chart: " in out


def test_sb_speed_bad_input_is_one_line_and_exit_2(tmp_path):
    result = _sb("speed", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--concurrency", "1,x")
    assert result.returncode == 2 and result.stderr.startswith("sb: error: --concurrency")
    assert len(result.stderr.strip().splitlines()) == 1


def test_sb_speed_exits_1_and_names_the_error_when_nothing_was_measured(tmp_path):
    with scripted_server(ttft_ms=1, itl_ms=0.2, short=range(0, 20)) as server:
        result = _sb("speed", "--base-url", server.base_url, "--model", "m", "--concurrency", "1",
                     "--requests-per-level", "2", "--max-tokens", "16", "--results", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert "2 request(s) flagged and excluded" in result.stdout
    assert len(list(tmp_path.glob("speed-m-*.json"))) == 1


def test_accuracy_benchmark_prints_every_error_and_the_client_cpu():
    from conftest import REPO
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "speed_accuracy.py"), "--levels", "1,4",
                             "--requests-per-level", "4", "--ttft-ms", "5", "--itl-ms", "1"],
                            capture_output=True, text=True, env=sb_env(), timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split()[0] == "streams" and [line.split()[0] for line in lines[2:4]] == ["1", "4"]
    assert [line.split(" (")[0].split(":")[0] for line in lines[4:]] == [
        "TTFT error", "ITL / throughput error", "client CPU"]


def test_sb_report_lists_speed_beside_correctness_and_last_ignores_speed_files(tmp_path):
    with scripted_server(ttft_ms=5, itl_ms=0.5, model="served-name") as server:
        ran = _sb("speed", "--base-url", server.base_url, "--model", "asked", "--concurrency", "1",
                  "--requests-per-level", "1", "--max-tokens", "16", "--hardware", "test box",
                  "--results", str(tmp_path))
    assert ran.returncode == 0, ran.stderr
    (tmp_path / "empty").mkdir()
    listed = _sb("report", "--results", str(tmp_path), "--leaderboard", str(tmp_path / "empty"))
    assert listed.returncode == 0, listed.stderr
    assert "asked" in listed.stdout and "served-name" in listed.stdout and "test box" in listed.stdout
    last = _sb("report", "--last", "--results", str(tmp_path))
    assert last.returncode == 2 and "no results" in last.stderr  # a speed file is not a correctness run
