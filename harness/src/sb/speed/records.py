"""One request's record, read from the raw streamed events after the response has ended.

A chunk is a token-bearing chunk only when it carries text (content, or a reasoning
model's reasoning text): the role-only first chunk many servers send at once would
otherwise pass for a time to first token of a few hundred microseconds.
"""

from __future__ import annotations

import json

NS = 1e9
_decode = json.JSONDecoder().decode


def _payloads(events: list):
    """(t_ns, parsed JSON or the marker 'DONE') for each data event; comments and pings skipped."""
    for t, event in events:
        lines = [line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:")]
        if not lines:
            continue
        data = b"\n".join(lines)
        yield t, ("DONE" if data.strip() == b"[DONE]" else _decode(data.decode()))


def _text(chunk: dict) -> str:
    choices = chunk.get("choices") or []
    if not choices:
        return ""
    choice = choices[0]
    delta = choice.get("delta") or {}
    return (delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning")
            or choice.get("text") or "")


def _usage_tokens(chunk: dict, key: str = "completion_tokens"):
    usage = chunk.get("usage") or {}
    tokens = usage.get(key)
    return tokens if isinstance(tokens, int) else None


# A TCP read holding several packets is stamped by Linux with the last one's arrival. When the
# read that brought a request's first token also brought the next one, and some read of the
# request came this long after its stamp, the client fell behind the stream: the first token's
# stamp (TTFT, ITL) is a later packet's, and the request is flagged `client-late`, out of the
# figures, rather than measured wrong (a CI machine at load 9 measured TTFT 150 ms off at 32
# streams that way). A late read of one packet keeps its exact stamp and is not flagged; nor is
# a server sending tokens back to back to a client keeping up.
READ_LAG_BOUND_NS = 10_000_000


def build_record(raw, max_tokens: int, origin_ns: int, request_index: int, level: int) -> dict:
    """The per-request record kept in the results file; times in seconds from the run's start."""
    record = {"index": request_index, "concurrency": level, "id": None, "model": None,
              "written_s": (raw.t_written_ns - origin_ns) / NS, "end_s": (raw.t_end_ns - origin_ns) / NS,
              "status": raw.status, "error": raw.error, "output_tokens": None, "token_source": None,
              "content_chunks": 0, "ttft_s": None, "itl_s": None, "e2e_s": None, "tokens_per_s": None,
              "flag": None, "prompt_tokens": None, "chunk_offsets_ms": [],
              "read_lag_ms": round(getattr(raw, "read_lag_ns", 0) / 1e6, 3), "first_read_shared": False}
    if raw.error is None and raw.status != 200:
        record["error"] = f"HTTP {raw.status}: {_body_text(raw)}"
    if record["error"] is None:
        try:
            _read_stream(record, raw)
        except (ValueError, TypeError, AttributeError) as exc:
            record["error"] = f"unreadable stream: {exc}"
    record["flag"] = _flag(record, max_tokens)
    if record["flag"] is None and record["first_read_shared"] and getattr(raw, "read_lag_ns", 0) > READ_LAG_BOUND_NS:
        record["flag"] = "client-late"
    return record


def _body_text(raw) -> str:
    return b" ".join(event for _, event in raw.events).decode("utf-8", "replace")[:200]


def _read_stream(record: dict, raw) -> None:
    times, usage, prompt, end = [], None, None, raw.t_end_ns
    for t, payload in _payloads(raw.events):
        if payload == "DONE":
            end = t
            continue
        if "error" in payload and not payload.get("choices"):
            raise ValueError(f"server error in stream: {str(payload['error'])[:200]}")
        record["id"] = record["id"] or payload.get("id")
        record["model"] = record["model"] or payload.get("model")
        usage = _usage_tokens(payload) or usage
        prompt = _usage_tokens(payload, "prompt_tokens") or prompt
        if _text(payload):
            times.append(t)
    start = raw.t_written_ns
    record["first_read_shared"] = len(times) > 1 and times[0] == times[1]
    record["prompt_tokens"] = prompt
    record["content_chunks"] = len(times)
    record["chunk_offsets_ms"] = [round((t - start) / 1e6, 3) for t in times]
    record["output_tokens"], record["token_source"] = (usage, "usage") if usage is not None else (len(times), "chunks")
    record["e2e_s"] = (end - start) / NS
    record["end_s"] += (end - raw.t_end_ns) / NS
    if times:
        record["ttft_s"] = (times[0] - start) / NS
        if record["output_tokens"] > 1:
            record["itl_s"] = (times[-1] - times[0]) / NS / (record["output_tokens"] - 1)
    if record["e2e_s"] > 0:
        record["tokens_per_s"] = record["output_tokens"] / record["e2e_s"]


def _flag(record: dict, max_tokens: int):
    """Why a request is out of the figures, or None: an error, or not exactly the asked count
    (build_record adds `client-late`, READ_LAG_BOUND_NS)."""
    if record["error"]:
        return "error"
    if record["output_tokens"] is None or record["ttft_s"] is None:
        return "short"
    if record["output_tokens"] < max_tokens:
        return "short"
    if record["output_tokens"] > max_tokens:
        return "long"
    return None


def token_gaps_s(record: dict) -> list:
    """Per-token inter-token latencies: chunk gaps when every chunk is one token, else the mean gap per token."""
    n = record["output_tokens"]
    offsets = record["chunk_offsets_ms"]
    if len(offsets) == n:
        return [(b - a) / 1e3 for a, b in zip(offsets, offsets[1:])]
    return [record["itl_s"]] * (n - 1) if record["itl_s"] is not None else []


def flag_prompt(record: dict, target: int, margin: float, calibrated) -> None:
    """Check the prompt's size as the server counted it; more than `margin` (a fraction) off `target` is flagged.

    The server's own streamed usage report is the witness when it sends one; otherwise the
    count it reported for the same prompt size during calibration (`calibrated`), or
    nothing, and then the request is left unchecked rather than guessed at.
    """
    record["prompt_tokens_target"] = target
    if record["prompt_tokens"] is not None:
        record["prompt_token_source"] = "usage"
    elif calibrated is not None:
        record["prompt_tokens"], record["prompt_token_source"] = calibrated, "calibration"
    else:
        record["prompt_token_source"] = None
        return
    off = abs(record["prompt_tokens"] - target) / target
    if record["flag"] is None and off > margin:
        record["flag"] = "prompt"


def prompt_count(body: bytes):
    """prompt_tokens from a non-streamed response body, or None."""
    try:
        return _usage_tokens(json.loads(body.decode() or "{}"), "prompt_tokens")
    except (ValueError, AttributeError):
        return None
