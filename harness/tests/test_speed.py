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
import socket
import struct
import subprocess
import sys

import pytest

from sb.speed import arrivals, capacity, figures, procedure, records, slo
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
    return {"load": "closed", "concurrency": concurrency, "per_stream_tokens_per_s": per_stream,
            "aggregate_tokens_per_s": aggregate if aggregate is not None else concurrency * per_stream}


def test_capacity_is_the_last_level_before_the_floor_breaks_never_peak_over_floor():
    levels = [_level(1, 100), _level(2, 90), _level(4, 60), _level(8, 40), _level(16, 56), _level(32, 20)]
    cap = capacity.capacity(levels, floor=55)
    assert cap["capacity_streams"] == 4          # 16 meets the floor again, but 8 already broke it
    assert cap["peak_at_concurrency"] == 16 and cap["peak_aggregate_tokens_per_s"] == 16 * 56
    assert cap["peak_aggregate_over_floor"] == pytest.approx(16 * 56 / 55)
    assert cap["peak_aggregate_over_floor"] > cap["capacity_streams"]
    assert "always higher" in cap["explanation"] or "falls as concurrency rises" in cap["explanation"]


def test_capacity_zero_when_one_stream_misses_the_floor_and_none_without_floor():
    levels = [_level(1, 10), _level(2, 9)]
    assert capacity.capacity(levels, floor=50)["capacity_streams"] == 0
    no_floor = capacity.capacity(levels, floor=None)
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


def test_a_first_token_read_late_with_the_next_is_flagged_client_late_not_timed():
    payload = _chunked(_sse(_delta({"content": "a"})), _sse(_delta({"content": "b"})), _sse(b"[DONE]"))
    apart = _feed_bytewise(payload)                      # each byte its own read: each token its own stamp
    apart.read_lag_ns = records.READ_LAG_BOUND_NS + 1
    assert records.build_record(apart, 2, 0, 1, 1)["flag"] is None     # late, but one packet a read: exact
    from sb.speed.client import RawResponse, _ResponseParser
    import asyncio
    loop = asyncio.new_event_loop()
    try:
        together = RawResponse(t_written_ns=1_000)
        _ResponseParser(together, loop.create_future()).feed(50_000_000, payload)   # one read held both tokens
    finally:
        loop.close()
    together.read_lag_ns = records.READ_LAG_BOUND_NS
    assert records.build_record(together, 2, 0, 1, 1)["flag"] is None   # at the bound: still timed
    together.read_lag_ns = records.READ_LAG_BOUND_NS + 1
    record = records.build_record(together, 2, 0, 1, 1)
    assert record["flag"] == "client-late" and record["first_read_shared"]


def test_http_error_is_a_flagged_record_not_an_exception():
    body = b'{"error": "no such model"}'
    payload = b"HTTP/1.1 404 Not Found\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    record = records.build_record(_feed_bytewise(payload), 3, 0, 1, 1)
    assert record["flag"] == "error" and "404" in record["error"]


def _timestamp(wall_ns: int) -> list:
    from sb.speed.stamps import SO_TIMESTAMPNS
    return [(socket.SOL_SOCKET, SO_TIMESTAMPNS, struct.pack("qq", *divmod(wall_ns, 1_000_000_000)))]


def test_a_kernel_stamp_is_placed_by_its_age_so_a_slewed_wall_clock_moves_it_by_microseconds():
    """The kernel stamps on the wall clock, which a time daemon may slew by several percent.
    A packet read 2 ms after it arrived is placed 2 ms before the read on the monotonic clock,
    whatever the offset between the clocks was earlier: here the wall clock ran 5% fast for a
    second (50 ms ahead of where a one-time offset would put it)."""
    from sb.speed.stamps import kernel_stamp
    read_ns, wall_at_start = 7_000_000_000, 1_700_000_000_000_000_000
    wall_now = wall_at_start + 1_050_000_000            # one monotonic second later, 5% fast
    arrived_wall = wall_now - round(2_000_000 * 1.05)   # 2 ms of monotonic time before the read
    stamp = kernel_stamp(_timestamp(arrived_wall), read_ns, wall_now)
    assert abs((read_ns - stamp) - 2_000_000) <= 0.05 * 2_000_000   # the slew of 2 ms only: 100 us
    assert kernel_stamp([], read_ns, wall_now) == read_ns            # no stamp: the read itself
    assert kernel_stamp(_timestamp(wall_now + 5_000), read_ns, wall_now) == read_ns   # never after the read


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


def _measured(measurement, level):
    """The level's valid records; where a busy machine kept the client from reading in time,
    the requests it could not time are flagged client-late, honestly, and the level's figures
    are checked on the rest. One stream (a blocking read) is always timed."""
    records = [r for r in measurement.records if r["concurrency"] == level]
    late = [r for r in records if r["flag"] == "client-late"]
    assert all(r["read_lag_ms"] > 10 and r["first_read_shared"] for r in late)
    assert level != 1 or not late, late
    valid = _valid(measurement, level)
    if not valid:
        assert late and len(late) == len(records), records
    return valid


@pytest.mark.parametrize("level", LEVELS)
def test_time_to_first_token_matches_the_server_within_the_stated_error(scripted_run, level):
    measurement, truth = scripted_run
    errors = [abs(r["ttft_s"] - _true_ttft(truth[r["id"]])) for r in _measured(measurement, level)]
    if not errors:
        return
    assert figures.percentile(errors, 50) < TTFT_MEDIAN_ERROR_S, errors
    assert max(errors) < TTFT_MAX_ERROR_S, errors


@pytest.mark.parametrize("level", LEVELS)
def test_inter_token_latency_and_throughput_within_half_a_percent(scripted_run, level):
    measurement, truth = scripted_run
    itl_errors, rate_errors = [], []
    for r in _measured(measurement, level):
        t = truth[r["id"]]
        true_itl = (t["sent_ns"][-1] - t["sent_ns"][0]) / 1e9 / (t["tokens"] - 1)
        true_rate = t["tokens"] / ((t["end_ns"] - t["read_ns"]) / 1e9)
        itl_errors.append(abs(r["itl_s"] / true_itl - 1))
        rate_errors.append(abs(r["tokens_per_s"] / true_rate - 1))
        # the script itself, loosely: a loaded box slows it
        assert r["itl_s"] == pytest.approx(ITL_MS / 1e3, rel=0.25)
    if not itl_errors:
        return
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
    # the script, loosely: a loaded box staggers it
    assert summary["achieved_concurrency"] == pytest.approx(level, rel=0.25)


def test_role_only_chunk_is_sent_but_not_counted(scripted_run):
    measurement, truth = scripted_run
    for r in _valid(measurement, 1):
        assert r["content_chunks"] == 256 and r["output_tokens"] == 256 and r["token_source"] == "usage"
        role_s = (truth[r["id"]]["role_ns"] - truth[r["id"]]["read_ns"]) / 1e9
        assert abs(r["ttft_s"] - _true_ttft(truth[r["id"]])) < abs(r["ttft_s"] - role_s)   # the content, not the role


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
    assert figures.percentile([r["ttft_s"] for r in measurement.records if r["flag"] is None], 50) < FIRST_TTFT_MS / 2e3


def test_token_count_from_chunks_when_the_server_gives_no_usage():
    with scripted_server(ttft_ms=5, itl_ms=1, usage=False) as server:
        measurement = measure(Plan(server.base_url, "m", levels=(2,), max_tokens=64, requests_per_level=2))
    found = [(r["token_source"], r["output_tokens"], r["flag"]) for r in measurement.records]
    assert found == [("chunks", 64, None)] * 2


# ---------------------------------------------------------------- the command


def _sb(*args, **kwargs):
    """`sb ARGS` in a subprocess with a wide terminal, so the table's headings are not folded."""
    return subprocess.run([sys.executable, "-c", "from sb.cli import main; main()", *args], capture_output=True,
                          text=True, env=sb_env(COLUMNS="400"), timeout=300, **kwargs)


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


def test_accuracy_benchmark_prints_every_error_send_lag_and_the_client_cpu_over_runs():
    from conftest import REPO
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "speed_accuracy.py"), "--levels", "1,4",
                             "--requests-per-level", "4", "--ttft-ms", "5", "--itl-ms", "1", "--rates", "16",
                             "--open-requests", "8", "--runs", "2"],
                            capture_output=True, text=True, env=sb_env(), timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "2 run(s): median [min-max]" in lines[0]
    assert lines[1].split()[0] == "streams" and [line.split()[0] for line in lines[2:4]] == ["1", "4"]
    assert lines[4].startswith("rate req/s") and "send lag ms p50" in lines[4] and lines[5].split()[0] == "16"
    assert "[" in lines[2] and "-" in lines[2].split("[")[1]          # every cell: median [min-max]
    assert [line.split(" (")[0].split(":")[0] for line in lines[6:]] == [
        "TTFT error", "ITL / throughput error", "client CPU", "open-loop send lag"]
    # issue 21's targets hold in every run, not at the median: each verdict says so
    assert all("in every run" in lines[i] for i in (6, 8, 9)), lines[6:]


def test_one_stream_benchmark_prints_the_client_beside_the_bare_read_floor():
    from conftest import REPO
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "speed_one_stream.py"), "--rounds", "1",
                             "--requests", "1", "--itl-ms", "0.5"],
                            capture_output=True, text=True, env=sb_env(), timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "1 interleaved rounds of 1 x 256 tokens" in lines[0]
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["bare", "bare+rcvtimeo", "client", "parser"]
    assert lines[1].endswith("x1.00") and float(lines[4].split()[1]) > 0


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


# ================================================================ issue 21: SLO, open loop, prompt size, search
#
# Stated errors of the new figures (asserted below against the scripted server's stamps):
# - share of requests meeting the SLO: exact, when no request's true figure is within
#   the TTFT error (15 ms) of a bound; goodput (requests/s, tokens/s): within 1% (its only
#   error is the level window's, a few ms at worst on a loaded machine, over a window of ~1 s);
# - send lag: the client's lag against the schedule agrees with the server's view (its
#   kernel arrival stamp minus the scheduled instant) within 1 ms at the median, 15 ms for
#   every request; the lag itself is asserted only against a generous bound (50 ms) that a
#   closed loop could not meet, the precise figure is in benchmarks/speed_accuracy.py;
# - prompt size: the server's count equals the asked size exactly (a linear tokenizer);
#   TTFT per prompt size matches the scripted prefill within the TTFT error;
# - search: the exact capacity of a server whose per-stream speed is a known function of load.


def _record(ttft=0.1, e2e=1.0, tokens=8, flag=None, gap_ms=10.0):
    offsets = [ttft * 1e3 + i * gap_ms for i in range(tokens)]
    return {"flag": flag, "ttft_s": ttft, "e2e_s": e2e, "tokens_per_s": tokens / e2e, "output_tokens": tokens,
            "chunk_offsets_ms": offsets, "itl_s": gap_ms / 1e3, "content_chunks": tokens, "written_s": 0.0,
            "end_s": e2e, "token_source": "usage"}


def test_slo_parses_units_percentiles_and_directions():
    objectives = slo.parse("ttft:p90<=0.5s, itl:p99<=60ms,e2e:p50<=1500us,tps:p99.9>=20")
    assert [(o.metric, o.pct, o.bound) for o in objectives] == [
        ("ttft", 90, 0.5), ("itl", 99, 0.06), ("e2e", 50, 0.0015), ("tps", 99.9, 20)]
    assert objectives[1].text == "itl:p99<=60ms" and objectives[3].text == "tps:p99.9>=20tok/s"
    assert slo.parse("ttft:p90<=2")[0].bound == 2.0            # a bare latency is in seconds
    for bad in ("ttft:p90>=1s", "tps:p90<=20", "speed:p90<=1", "ttft:p100<=1s", "ttft<=1s", "",
                "ttft:p90<=1s,ttft:p90<=2s"):
        with pytest.raises(ValueError):
            slo.parse(bad)


def test_slo_judges_share_goodput_and_what_broke_worst_first():
    objectives = slo.parse("ttft:p50<=0.2s,e2e:p90<=1.5s")
    records = [_record(ttft=0.1, e2e=1.0)] * 6 + [_record(ttft=0.3, e2e=1.0)] * 3 + [_record(flag="short")]
    judged = slo.judge_level(objectives, 0.9, records, window_s=2.0)
    assert judged["met_requests"] == 6 and judged["met_fraction"] == 0.6
    assert judged["goodput_rps"] == 3.0 and judged["goodput_tokens_per_s"] == 6 * 8 / 2.0
    assert [j["held"] for j in judged["objectives"]] == [True, True]      # p50 TTFT 0.1 s, p90 e2e 1 s
    assert not judged["share_held"] and not judged["held"]                 # but only 60% met both at once
    assert [b["what"] for b in slo.broken(judged)] == ["share >= 90%"]
    worse = slo.judge_level(slo.parse("ttft:p50<=0.05s,e2e:p90<=0.5s"), None, records[:6], 2.0)
    # 2x over, then 2x... by ratio
    assert [b["what"] for b in slo.broken(worse)] == ["ttft:p50<=50ms", "e2e:p90<=500ms"]
    assert slo.describe_break(slo.broken(worse)[0]) == "ttft:p50<=50ms: 100.0 ms"


def test_slo_speed_objective_uses_the_slow_tail_and_a_request_itl_its_own_gaps():
    tps = slo.parse("tps:p90>=5")[0]
    valid = [_record(e2e=e) for e in (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 4.0)]   # 8, ..., 8, 2 tokens/s
    assert slo.level_value(tps, valid) == pytest.approx(figures.percentile([8] * 9 + [2], 10))
    itl = slo.parse("itl:p50<=15ms")[0]
    assert slo.request_value(itl, _record(gap_ms=10.0)) == pytest.approx(0.010)
    assert not slo.meets_all([itl], _record(gap_ms=20.0)) and not slo.meets_all([itl], _record(flag="error"))


def test_slo_capacity_names_what_broke_first_at_the_next_level():
    objectives = slo.parse("ttft:p90<=0.5s,itl:p99<=60ms")
    def level(c, ttft, gap_ms):
        recs = [_record(ttft=ttft, gap_ms=gap_ms)] * 4
        return figures.level_summary(c, recs, objectives, 0.9)
    levels = [level(1, 0.1, 10), level(2, 0.2, 20), level(4, 0.6, 90), level(8, 0.1, 10)]
    cap = capacity.capacity(levels, None, objectives, 0.9)
    assert cap["capacity_streams"] == 2 and cap["next_level"] == 4 and cap["stopped_by"] == "objective"
    assert [b["what"] for b in cap["broken_at_next"]] == ["itl:p99<=60ms", "ttft:p90<=500ms", "share >= 90%"]
    assert cap["broke_first"].startswith("itl:p99<=60ms: 90.0 ms")


def test_open_loop_level_is_client_limited_when_its_send_lag_exceeds_the_bound():
    recs = [dict(_record(), written_s=i * 0.1, end_s=i * 0.1 + 1, send_lag_s=lag)
            for i, lag in enumerate([0.0001] * 9 + [0.02])]
    ttft = slo.parse("ttft:p90<=1s")
    on_time = figures.level_summary({"load": "open", "rate_rps": 10}, recs[:9], ttft, lag_bound_s=0.01)
    late = figures.level_summary({"load": "open", "rate_rps": 20}, recs, ttft, lag_bound_s=0.01)
    assert not on_time["client_limited"] and late["client_limited"]
    assert late["send_lag_s"]["max"] == 0.02 and on_time["sent_rate_rps"] == pytest.approx(10)
    cap = capacity.capacity([on_time, late], None, ttft, None)
    assert cap["capacity_rate_rps"] == 10 and cap["stopped_by"] == "client-limited" and cap["next_level"] == 20


def test_arrival_schedules_are_seeded_and_have_the_asked_rate():
    assert arrivals.schedule("constant", 4, 5) == [0, 0.25, 0.5, 0.75, 1.0]
    one, again = arrivals.schedule("poisson", 8, 4000, seed=3), arrivals.schedule("poisson", 8, 4000, seed=3)
    assert one == again and one != arrivals.schedule("poisson", 8, 4000, seed=4)
    assert one[0] == 0 and all(b > a for a, b in zip(one, one[1:]))
    assert (len(one) - 1) / one[-1] == pytest.approx(8, rel=0.05)       # 4000 exponential gaps: 1.6% sd
    gaps = sorted(b - a for a, b in zip(one, one[1:]))
    assert figures.percentile(gaps, 50) == pytest.approx(0.125 * 0.6931, rel=0.08)   # exponential: median ln2/rate
    with pytest.raises(ValueError):
        arrivals.schedule("bursty", 1, 2)


@pytest.mark.parametrize("true_capacity", [0, 1, 2, 3, 5, 6, 7, 8, 11, 16, 17, 31, 100])
def test_search_finds_the_exact_capacity_of_a_monotone_server(true_capacity):
    from sb.speed.search import Search
    search = Search(start=1, integer=True, budget=10_000, requests_for=lambda c: 2 * c)
    while (value := search.next_value()) is not None:
        search.record(value, value <= true_capacity, 2 * value)
    result = search.result()
    assert result["exact"] and (result["highest_held"] or 0) == true_capacity
    assert result["requests_used"] == sum(p["requests"] for p in result["probes"]) <= 10_000
    values = [p["value"] for p in result["probes"]]
    assert len(values) == len(set(values)) and len(values) <= 2 * (true_capacity + 2).bit_length() + 1


def test_search_stops_at_its_request_bound_and_bisects_rates_to_the_resolution():
    from sb.speed.search import Search
    bounded = Search(start=1, integer=True, budget=40, requests_for=lambda c: 2 * c)
    while (value := bounded.next_value()) is not None:
        bounded.record(value, True, 2 * value)
    assert bounded.stopped_by == "request bound" and bounded.used <= 40 and not bounded.result()["exact"]
    rate = Search(start=0.5, integer=False, budget=10_000, requests_for=lambda r: 8, resolution=0.05)
    while (value := rate.next_value()) is not None:
        rate.record(value, value <= 3.3, 8)
    assert rate.stopped_by == "resolution" and rate.lo <= 3.3 < rate.hi <= rate.lo * 1.05
    limited = Search(start=1, integer=True, budget=100, requests_for=lambda c: c)
    limited.record(limited.next_value(), True, 1, client_limited=True)
    assert limited.next_value() is None and limited.stopped_by == "client-limited"


def test_sized_prompt_is_deterministic_unique_per_request_and_the_prompt_check_flags():
    a, b = procedure.sized_prompt(40, 7), procedure.sized_prompt(40, 8)
    assert a == procedure.sized_prompt(40, 7) and a != b and len(a.split()) == len(b.split())
    assert a.startswith("000007 ")          # the request's number first: no shared prefix to cache
    record = {"flag": None, "prompt_tokens": 120}
    records.flag_prompt(record, 100, 0.1, calibrated=None)
    assert record["flag"] == "prompt" and record["prompt_token_source"] == "usage"
    record = {"flag": None, "prompt_tokens": None}
    records.flag_prompt(record, 100, 0.1, calibrated=105)
    assert record["flag"] is None and record["prompt_tokens"] == 105 and record["prompt_token_source"] == "calibration"
    record = {"flag": None, "prompt_tokens": None}
    records.flag_prompt(record, 100, 0.1, calibrated=None)
    assert record["flag"] is None and record["prompt_token_source"] is None


# ---------------------------------------------------------------- new figures against the scripted server

SLOW = frozenset({3, 6, 10, 11})         # server request numbers whose first token is late
GOODPUT_ERROR = 0.01


@pytest.fixture(scope="module")
def slo_run():
    objectives = slo.parse("ttft:p50<=80ms,itl:p99<=50ms")
    with scripted_server(ttft_ms=20, itl_ms=4, slow=SLOW, slow_ttft_ms=150, short=(8,)) as server:
        plan = Plan(server.base_url, "m", levels=(1, 4), max_tokens=64, requests_per_level=8,
                    objectives=tuple(objectives), share=0.9)
        measurement = measure(plan)
        truth = server.truth()
    return plan, measurement, truth


def _true_good(t, objectives) -> bool:
    """The truth's verdict on one request, from the server's own stamps."""
    ttft = (t["sent_ns"][0] - t["read_ns"]) / 1e9
    gaps = [(b - a) / 1e9 for a, b in zip(t["sent_ns"], t["sent_ns"][1:])]
    by = {"ttft": ttft, "itl": figures.percentile(gaps, 99)}
    return all(by[o.metric] <= o.bound for o in objectives)


@pytest.mark.parametrize("level", (1, 4))
def test_slo_share_and_goodput_match_the_server(slo_run, level):
    plan, measurement, truth = slo_run
    recs = [r for r in measurement.records if r["concurrency"] == level]
    summary = figures.level_summary(level, recs, list(plan.objectives), plan.share)
    served = [truth[r["id"]] for r in recs]
    good = [t for r, t in zip(recs, served) if r["flag"] is None and _true_good(t, plan.objectives)]
    window = (max(t["end_ns"] for t in served) - min(t["read_ns"] for t in served)) / 1e9
    judged = summary["slo"]
    assert judged["met_requests"] == len(good) and judged["met_fraction"] == len(good) / len(recs)
    assert judged["goodput_rps"] == pytest.approx(len(good) / window, rel=GOODPUT_ERROR)
    assert judged["goodput_tokens_per_s"] == pytest.approx(sum(t["tokens"] for t in good) / window, rel=GOODPUT_ERROR)
    true_ttfts = [(t["sent_ns"][0] - t["read_ns"]) / 1e9 for r, t in zip(recs, served) if r["flag"] is None]
    assert judged["objectives"][0]["value"] == pytest.approx(figures.percentile(true_ttfts, 50),
                                                             abs=TTFT_MEDIAN_ERROR_S)


def test_slo_run_counts_slow_and_short_requests_as_not_met(slo_run):
    _, measurement, _ = slo_run
    numbers = {r["id"]: int(r["id"].split("-")[1]) for r in measurement.records}
    missed = {numbers[r["id"]] for r in measurement.records if not slo.meets_all(slo.parse("ttft:p50<=80ms"), r)}
    assert missed == SLOW | {8}          # late first token, or one token short (flagged)


def test_prompt_size_is_calibrated_checked_and_prefill_shows_in_ttft():
    prefill_ms, sizes = 0.1, (64, 512)
    with scripted_server(ttft_ms=10, itl_ms=2, prefill_ms_per_token=prefill_ms, miscount=(4,)) as server:
        plan = Plan(server.base_url, "m", levels=(1,), max_tokens=16, requests_per_level=4, prompt_tokens=sizes)
        measurement = measure(plan)
        truth = server.truth()
    for size in sizes:
        cal = measurement.calibration[str(size)]
        assert cal["reported"] == size and cal["tokens_per_word"] == 1.0
        recs = [r for r in measurement.records if r.get("prompt_tokens_target") == size]
        assert len(recs) == 4 and all(truth[r["id"]]["prompt_tokens"] == size for r in recs)
        valid = [r for r in recs if r["flag"] is None]
        errors = [abs(r["ttft_s"] - _true_ttft(truth[r["id"]])) for r in valid]
        assert figures.percentile(errors, 50) < TTFT_MEDIAN_ERROR_S and max(errors) < TTFT_MAX_ERROR_S
        scripted = (10 + prefill_ms * size) / 1e3
        assert figures.percentile([r["ttft_s"] for r in valid], 50) == pytest.approx(scripted, abs=TTFT_MAX_ERROR_S)
    [miscounted] = [r for r in measurement.records if r["flag"] == "prompt"]
    assert miscounted["id"] == "chatcmpl-4" and miscounted["prompt_tokens"] == 2 * miscounted["prompt_tokens_target"]
    prompts = {json.dumps(r["prompt_tokens_target"]) for r in measurement.records}
    assert prompts == {"64", "512"}


def test_open_loop_sends_on_schedule_and_its_lag_matches_the_server():
    rate, n = 64.0, 48
    with scripted_server(ttft_ms=100, itl_ms=5, usage=True) as server:
        plan = Plan(server.base_url, "m", rates=(rate,), max_tokens=16, requests_per_level=n, seed=5)
        measurement = measure(plan)
        truth = server.truth()
    recs = measurement.records
    assert len(recs) == n and all(r["flag"] is None for r in recs)
    lags = [r["send_lag_s"] for r in recs]
    assert min(lags) >= 0 and max(lags) < 0.05, lags      # a closed loop would wait ~0.2 s for each answer
    origin = measurement.origin_ns
    seen = [(truth[r["id"]]["read_ns"] - origin) / 1e9 - r["scheduled_s"] for r in recs]
    disagreement = [abs(s - lag) for s, lag in zip(seen, lags)]
    assert figures.percentile(disagreement, 50) < 1e-3 and max(disagreement) < TTFT_MAX_ERROR_S
    offsets = arrivals.schedule("poisson", rate, n, seed=5)
    scheduled = sorted(r["scheduled_s"] - recs[0]["scheduled_s"] for r in recs)
    assert scheduled == pytest.approx(offsets, abs=1e-6)
    summary = figures.level_summary({"load": "open", "rate_rps": rate}, recs, lag_bound_s=0.01)
    assert summary["achieved_concurrency"] > 5          # ~0.175 s each at 64/s: about 11 in flight, not 1
    assert summary["send_lag_s"]["max"] == max(lags)


def test_sb_speed_search_finds_the_exact_capacity_of_a_server_slowing_with_load(tmp_path):
    from sb.speed.scripted import per_stream_tokens_per_s
    ttft_ms, itl_ms, per_stream_ms, tokens = 10, 1, 1, 64
    speed = [per_stream_tokens_per_s(n, tokens, ttft_ms / 1e3, itl_ms / 1e3, per_stream_ms / 1e3) for n in range(1, 20)]
    true_capacity = 5
    floor = (speed[true_capacity - 1] * speed[true_capacity]) ** 0.5   # 9% from either neighbour
    with scripted_server(ttft_ms=ttft_ms, itl_ms=itl_ms, itl_per_stream_ms=per_stream_ms) as server:
        result = _sb("speed", "--base-url", server.base_url, "--model", "m", "--max-tokens", str(tokens),
                     "--slo", f"tps:p50>={floor:.3f},ttft:p99<=1s", "--slo-share", "0.5", "--search",
                     "--max-requests", "200", "--results", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    [search] = doc["search"]
    measured = {lv["concurrency"]: round(lv["per_stream_tokens_per_s"], 1) for lv in doc["levels"]}
    assert search["exact"] and search["stopped_by"] == "exact", (measured, floor)
    assert doc["capacity"]["capacity_streams"] == true_capacity, (measured, floor)
    assert doc["capacity"]["next_level"] == true_capacity + 1 and doc["capacity"]["broke_first"].startswith("tps:p50>=")
    assert [p["value"] for p in search["probes"]] == [1, 2, 4, 8, 6, 5]
    assert search["requests_used"] == sum(2 * c if c > 4 else 8 for c in (1, 2, 4, 8, 6, 5)) <= 200
    assert sorted(lv["probe"] for lv in doc["levels"]) == [1, 2, 3, 4, 5, 6]     # every probe is a level, marked
    assert (tmp_path / doc["chart"]).read_bytes()[:4] == b"\x89PNG"


def test_sb_speed_rate_search_finds_the_exact_capacity_of_a_server_queueing_with_the_rate(tmp_path):
    # The server's time to first token is 10 ms + 20 ms per request/s it sees arriving (its own
    # view, over its last 4 arrivals): a p50 bound of 220 ms holds up to exactly 10.5 requests/s.
    # Walk from 4/s: 4, 8 held, 16 broke; bisect 12 broke, 10 held, 11 broke; 11 <= 10 x 1.1: done.
    # Every probe is at least 0.5 requests/s (10 ms of TTFT) from the capacity. The lag bound is
    # raised to 50 ms: on this shared 2-core machine a sender's p99 lag of 10-20 ms happens, and
    # it would end the search as client-limited before the server's own limit is reached.
    from sb.speed.scripted import ttft_at_rate
    ttft_ms, per_rps_ms, true_capacity = 10, 20, 10.5
    bound_s = ttft_at_rate(true_capacity, ttft_ms / 1e3, per_rps_ms / 1e3)
    with scripted_server(ttft_ms=ttft_ms, itl_ms=2, ttft_ms_per_rps=per_rps_ms) as server:
        result = _sb("speed", "--base-url", server.base_url, "--model", "m", "--max-tokens", "8",
                     "--rate", "4", "--arrivals", "constant", "--requests-per-level", "16",
                     "--slo", f"ttft:p50<={bound_s * 1e3:g}ms", "--slo-share", "0.5", "--search",
                     "--search-resolution", "0.1", "--lag-bound-ms", "50", "--max-requests", "200",
                     "--results", str(tmp_path), "--json")
        truth = server.truth()
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    [search] = doc["search"]
    measured = {lv["rate_rps"]: lv["slo"]["objectives"][0]["value"] for lv in doc["levels"]}
    assert search["on"] == "rate" and search["stopped_by"] == "resolution" and search["exact"], measured
    assert [p["value"] for p in search["probes"]] == [4, 8, 16, 12, 10, 11], measured
    assert search["highest_held"] <= true_capacity < search["lowest_broken"], measured
    assert doc["capacity"]["capacity_rate_rps"] == 10 and doc["capacity"]["next_level"] == 11, doc["capacity"]
    assert doc["capacity"]["broke_first"].startswith("ttft:p50<=220ms")
    assert search["requests_used"] == 6 * 16 and sorted(lv["probe"] for lv in doc["levels"]) == [1, 2, 3, 4, 5, 6]
    for record in doc["requests"]:           # each request's TTFT is the scripted one for the rate the server saw
        served = truth[record["id"]]
        assert record["ttft_s"] == pytest.approx(_true_ttft(served), abs=TTFT_MAX_ERROR_S)
    by_level = {}
    for record in doc["requests"]:
        by_level.setdefault(record["rate_rps"], []).append(truth[record["id"]]["arrival_rate_rps"])
    for lv in doc["levels"]:                  # past its first 4 requests, the server saw the scheduled rate
        seen = by_level[lv["rate_rps"]][4:]
        assert figures.percentile(seen, 50) == pytest.approx(lv["rate_rps"], rel=0.02), (lv["rate_rps"], seen)
    assert (tmp_path / doc["chart"]).read_bytes()[:4] == b"\x89PNG"


def test_sb_speed_slo_table_says_what_broke_first(tmp_path):
    # per-token interval 2 ms + 2 ms per other stream: ITL about 2, 4, 8 ms at 1, 2, 4 streams
    with scripted_server(ttft_ms=5, itl_ms=2, itl_per_stream_ms=2) as server:
        result = _sb("speed", "--base-url", server.base_url, "--model", "m", "--concurrency", "1,2,4",
                     "--requests-per-level", "4", "--max-tokens", "32", "--slo", "itl:p50<=5ms,ttft:p90<=0.5s",
                     "--results", str(tmp_path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "capacity: 2 stream(s) holding itl:p50<=5ms, ttft:p90<=500ms for >= 90% of requests" in out
    assert "at 4 streams: itl:p50<=5ms: " in out and "broke first" in out
    assert "goodput tok/s" in out and "broke: itl:p50<=5ms" in out
    [path] = tmp_path.glob("speed-m-*.json")
    doc = json.loads(path.read_text())
    assert doc["speed_schema_version"] == 2 and doc["slo"]["share"] == 0.9
    assert [lv["slo"]["held"] for lv in doc["levels"]] == [True, True, False]


def test_sb_speed_open_loop_end_to_end_and_report_lists_it(tmp_path):
    with scripted_server(ttft_ms=20, itl_ms=2) as server:
        result = _sb("speed", "--base-url", server.base_url, "--model", "open-m", "--rate", "4,16",
                     "--arrivals", "constant", "--requests-per-level", "8", "--max-tokens", "16",
                     "--slo", "ttft:p90<=0.5s", "--results", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "rate req/s" in result.stdout and "send lag ms p50/p99" in result.stdout
    assert "open loop: constant arrivals" in result.stdout
    [path] = tmp_path.glob("speed-open-m-*.json")
    doc = json.loads(path.read_text())
    assert doc["load"] == "open" and doc["arrivals"]["kind"] == "constant"
    assert [lv["rate_rps"] for lv in doc["levels"]] == [4, 16]
    assert all(r["send_lag_s"] is not None and r["scheduled_s"] is not None for r in doc["requests"])
    from sb.speed.results import summaries
    [row] = summaries(tmp_path)
    assert row["load"] == "open" and row["capacity_text"].endswith("requests/s")
    (tmp_path / "empty").mkdir()
    listed = _sb("report", "--results", str(tmp_path), "--leaderboard", str(tmp_path / "empty"))
    assert listed.returncode == 0 and "open-m" in listed.stdout, listed.stderr


@pytest.mark.parametrize("args, message", [
    (("--rate", "1,2", "--concurrency", "1"), "--concurrency and --rate"),
    (("--search",), "--search needs an objective"),
    (("--slo", "ttft:p90>=1s"), "--slo objective"),
    (("--rate", "0"), "--rate takes distinct positive numbers"),
    (("--prompt-tokens", "x"), "--prompt-tokens takes"),
])
def test_sb_speed_new_options_refuse_bad_input_in_one_line(args, message):
    result = _sb("speed", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", *args)
    assert result.returncode == 2 and result.stderr.startswith(f"sb: error: {message}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_open_loop_without_a_sender_process_keeps_the_schedule_in_the_event_loop(monkeypatch):
    # TLS connections cannot be lent to another process, and some systems have no SOCK_SEQPACKET:
    # the event loop then keeps the schedule itself; every figure is still recorded the same way.
    from sb.speed import openloop
    monkeypatch.setattr(openloop, "_control_pair", lambda: None)
    with scripted_server(ttft_ms=20, itl_ms=2) as server:
        measurement = measure(Plan(server.base_url, "m", rates=(32.0,), max_tokens=8, requests_per_level=16))
        truth = server.truth()
    recs = measurement.records
    assert len(recs) == 16 and all(r["flag"] is None for r in recs)
    assert max(r["send_lag_s"] for r in recs) < 0.05 and measurement.client_cpu[0]["sender_cpu_s"] == 0.0
    seen = [(truth[r["id"]]["read_ns"] - measurement.origin_ns) / 1e9 - r["scheduled_s"] for r in recs]
    assert figures.percentile([abs(s - r["send_lag_s"]) for s, r in zip(seen, recs)], 50) < 1e-3


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory):
    """A certificate for 127.0.0.1 and its key, made with `cryptography` (in the dev lock: the
    SDKs' own TLS stack depends on it), so the test never depends on an openssl command."""
    import datetime
    import ipaddress
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key_pair = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(key_pair.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key_pair, hashes.SHA256()))
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(key_pair.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert, key


def test_tls_endpoint_is_measured_like_plain_http_closed_and_open_loop(self_signed, monkeypatch):
    # A real HTTPS server (the scripted one, decrypting in memory so its stamps stay the kernel's),
    # trusted through SSL_CERT_FILE as a user would trust a self-signed endpoint: the client's TLS
    # path (decrypted in memory after each kernel-stamped read) and the open loop kept in the event
    # loop (a TLS session cannot be lent to the sender process), held to the same stated errors as
    # plain HTTP. Through asyncio's SSL transport (loop-stamped reads) the median TTFT error here was 17 ms.
    cert, key = self_signed
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with scripted_server(ttft_ms=20, itl_ms=5, tls_cert=cert, tls_key=key) as server:
        assert server.base_url.startswith("https://")
        closed = measure(Plan(server.base_url, "m", levels=(1, 4), max_tokens=64, requests_per_level=8))
        opened = measure(Plan(server.base_url, "m", rates=(16.0,), max_tokens=64, requests_per_level=16))
        truth = server.truth()
    for measurement in (closed, opened):
        # as over plain HTTP: what a busy machine kept the client from timing is flagged
        # client-late and left out, one stream is always timed, and the rest meet the errors
        late = [r for r in measurement.records if r["flag"] == "client-late"]
        assert all(r["read_lag_ms"] > 10 and r["first_read_shared"] for r in late)
        assert measurement is opened or all(r["concurrency"] != 1 for r in late), late
        recs = [r for r in measurement.records if r["flag"] is None]
        assert recs and len(recs) + len(late) == len(measurement.records), \
            [(r["flag"], r["error"]) for r in measurement.records]
        errors = [abs(r["ttft_s"] - _true_ttft(truth[r["id"]])) for r in recs]
        assert figures.percentile(errors, 50) < TTFT_MEDIAN_ERROR_S and max(errors) < TTFT_MAX_ERROR_S, errors
        for r in recs:
            t = truth[r["id"]]
            true_itl = (t["sent_ns"][-1] - t["sent_ns"][0]) / 1e9 / (t["tokens"] - 1)
            assert r["itl_s"] == pytest.approx(true_itl, rel=RELATIVE_MAX_ERROR)
    assert [c["concurrency"] for c in closed.client_cpu] == [1, 4]
    assert opened.client_cpu[0]["sender_cpu_s"] == 0.0          # no sender process: the loop kept the schedule
    seen = [(truth[r["id"]]["read_ns"] - opened.origin_ns) / 1e9 - r["scheduled_s"] for r in opened.records]
    assert figures.percentile([abs(s - r["send_lag_s"]) for s, r in zip(seen, opened.records)], 50) < 1e-3


def test_a_lone_stream_that_times_out_is_an_error_record_and_the_next_request_still_runs():
    # One stream reads its response blocking on the socket (client.read_alone): its timeout must
    # still end the request as an error, close the connection, and leave the level running.
    with scripted_server(ttft_ms=2000, first_ttft_ms=5, itl_ms=1) as server:
        measurement = measure(Plan(server.base_url, "m", levels=(1,), max_tokens=4, requests_per_level=2,
                                   timeout_s=0.3))
    assert measurement.warmup["flag"] is None
    assert [r["flag"] for r in measurement.records] == ["error", "error"]
    assert all(r["error"] == "no complete response in 0.3s" for r in measurement.records)
    assert all(0.3 <= r["end_s"] - r["written_s"] < 0.6 for r in measurement.records)


def test_a_lone_stream_keeps_its_deadline_in_the_kernel_or_else_in_python():
    # read_alone's deadline is SO_RCVTIMEO, re-armed only every _REARM_NS (not a poll per read);
    # where the kernel refuses the option, Python's socket timeout keeps the same deadline.
    import socket
    import time
    from sb.speed import client

    class Refusing(socket.socket):
        def setsockopt(self, *args):
            raise OSError("not here")

    for make in (socket.socket, Refusing):
        left, right = socket.socketpair()
        sock = make(fileno=left.detach())
        timeout = client._ReceiveTimeout(sock, time.perf_counter_ns() + 200_000_000)
        start = time.perf_counter()
        assert timeout.arm() and timeout.kernel is (make is socket.socket)
        with pytest.raises((BlockingIOError, TimeoutError)):
            sock.recv(1)                    # nothing comes: the armed timeout ends the read
        waited = time.perf_counter() - start
        # 0.2 s is the deadline; a read may outlive it by _REARM_NS (0.1 s) at most, and a
        # busy machine's scheduler adds a little more before this thread runs again.
        assert 0.19 <= waited < 0.2 + client._REARM_NS / 1e9 + 0.1, waited
        time.sleep(0.01)
        assert not timeout.arm()            # the deadline has passed
        sock.close(), right.close()


def test_an_untrusted_https_endpoint_is_refused_in_one_line(self_signed, tmp_path):
    # The certificate is verified: a self-signed one nobody trusted (no SSL_CERT_FILE) stops the run.
    cert, key = self_signed
    with scripted_server(ttft_ms=5, itl_ms=1, tls_cert=cert, tls_key=key) as server:
        result = _sb("speed", "--base-url", server.base_url, "--model", "m", "--concurrency", "1",
                     "--max-tokens", "4", "--results", str(tmp_path))
    assert result.returncode == 2 and result.stderr.startswith("sb: error: cannot reach https://"), result.stderr
    assert "CERTIFICATE_VERIFY_FAILED" in result.stderr and len(result.stderr.strip().splitlines()) == 1
