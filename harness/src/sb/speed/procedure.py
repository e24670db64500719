"""The fixed measurement procedure: one prompt, one request body, written into every results file.

Every model is measured the same way so numbers compare across models, not against a
vendor's slide: exactly `max_tokens` output tokens with end-of-sequence ignored, at
temperature 0, the first request discarded as warm-up.
"""

from __future__ import annotations

import json

MAX_TOKENS = 256
CONCURRENCY_LEVELS = (1, 2, 4, 8, 16, 32)
PROMPT = ("Write a long, detailed story about a lighthouse keeper who finds a message in a bottle. "
          "Keep writing until you are stopped.")


def requests_for_level(concurrency: int, requested: int | None) -> int:
    """Requests measured at a level: each stream runs at least two when the user names no count.

    Never fewer than the concurrency itself: a level whose streams never all start does not
    measure that level at all.
    """
    return max(concurrency, requested) if requested else max(8, 2 * concurrency)


def request_body(model: str, max_tokens: int = MAX_TOKENS, prompt: str = PROMPT) -> dict:
    """The chat request: both servers' spellings of 'ignore EOS' are sent, unknown keys are ignored."""
    return {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "temperature": 0, "stream": True, "stream_options": {"include_usage": True},
            "ignore_eos": True, "min_tokens": max_tokens}


# Short common English words: one token each in most tokenizers, and the same count in a
# given tokenizer wherever they stand, so prompt tokens grow linearly with the word count.
FILLER = ("the of and to in is that for it as was with on be at by this from or an are not but had his they "
          "you were her she which their all one can has there been if more when will would who so no").split()
SIZED_TAIL = "Ignore the words above. " + PROMPT


def sized_prompt(words: int, nonce: int) -> str:
    """A deterministic prompt of `words` filler words; the request's number comes first.

    Why the number first: a server with prefix caching (vLLM, SGLang) would otherwise serve
    every request after the first from cache, and the prefill time a prompt size is meant
    to measure would vanish. Fixed width, so every request's prompt has the same length.
    """
    filler = " ".join(FILLER[i % len(FILLER)] for i in range(words))
    return f"{nonce % 1_000_000:06d} {filler} {SIZED_TAIL}"


def probe_body(model: str, prompt: str) -> dict:
    """A one-token, non-streamed request whose usage report says how many tokens the server counts in `prompt`.

    Non-streamed because some servers (llama-cpp-python) report usage only then.
    """
    return {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 1,
            "temperature": 0, "stream": False}


def request_bytes(url_path: str, host: str, body: dict, api_key: str | None = None) -> bytes:
    """The whole HTTP/1.1 request, prepared before the clock starts."""
    payload = json.dumps(body, separators=(",", ":")).encode()
    headers = [f"POST {url_path} HTTP/1.1", f"Host: {host}", "Content-Type: application/json",
               "Accept: text/event-stream", "Connection: keep-alive", f"Content-Length: {len(payload)}"]
    if api_key:
        headers.append(f"Authorization: Bearer {api_key}")
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + payload


def describe(max_tokens: int, levels: list, per_level: dict, extra: dict | None = None) -> dict:
    """The procedure as recorded in the results file; `extra` adds what this run's options changed."""
    return {
        "output_tokens": max_tokens,
        "end_of_sequence": "ignored (sent ignore_eos=true and min_tokens=max_tokens)",
        "temperature": 0,
        "prompt": PROMPT,
        "warmup": "the first request of the run is discarded",
        "token_count": "server usage report (stream_options.include_usage) when given, else content chunks",
        "exact_count": "a request that did not produce exactly output_tokens is flagged and excluded",
        "clock": "time.perf_counter_ns per received read; starts when the request is fully written",
        "time_to_first_token": "first chunk with non-empty content; a role-only chunk is not a token",
        "inter_token_latency": "per token: (last content - first content) / (tokens - 1)",
        "per_stream_tokens_per_s": "median over requests of tokens / end-to-end seconds",
        "aggregate_tokens_per_s": "valid tokens / (last response end - first request written) at the level",
        "achieved_concurrency": "time-weighted: summed request durations / level window",
        "capacity": "highest level, walking up from 1, before per-stream tokens/s first falls below the floor",
        "load": "closed loop: N streams, each sends its next request as soon as its last one ends",
        "concurrency_levels": levels,
        "requests_per_level": per_level,
        **(extra or {}),
    }
