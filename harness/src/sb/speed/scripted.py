"""A scripted OpenAI-compatible streaming server whose timing is known exactly: the fake beside the client.

It speaks just enough HTTP/1.1 (keep-alive, chunked server-sent events) to be measured like
a real server. For each chat request it sends a role-only chunk at once, then the content
tokens on an absolute schedule (time to first token, then one token every inter-token
interval), then the usage report and `[DONE]`. It stamps, with the same system-wide
monotonic clock the client uses (`perf_counter_ns`, CLOCK_MONOTONIC on Linux), when each
request was fully read and when each chunk was handed to the kernel; `GET /truth` returns
those stamps, so a measurement's error is its difference from what the server really did.

Run it with `python -m sb.speed.scripted --port 0 ...` (it prints `listening PORT`), or
through `scripted_server(...)`, which starts it as a separate process so its event loop
never shares the client's. It stops by itself after `--lifetime-s`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from time import perf_counter_ns


@dataclass
class Script:
    ttft_s: float = 0.05
    itl_s: float = 0.005
    first_ttft_s: float | None = None      # the warm-up request's time to first token
    short: frozenset = frozenset()         # request numbers (0 = the first) that stop one token short
    usage: bool = True
    model: str = "scripted-model"
    itl_per_stream_s: float = 0.0          # added to the interval for each other stream in flight
    truth: dict = field(default_factory=dict)
    served: int = 0
    active: int = 0


def _chunk(payload: bytes) -> bytes:
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"


def _event(obj) -> bytes:
    return _chunk(b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n")


def _delta(rid: str, model: str, delta: dict, finish=None) -> dict:
    return {"id": rid, "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


async def _sleep_until(deadline_ns: int) -> None:
    delay = (deadline_ns - perf_counter_ns()) / 1e9
    if delay > 0:
        await asyncio.sleep(delay)


async def _stream(script: Script, writer, body: dict, t_read: int) -> None:
    number = script.served
    script.served += 1
    rid = f"chatcmpl-{number}"
    max_tokens = int(body.get("max_tokens") or 16)
    tokens = max_tokens - 1 if number in script.short else max_tokens
    ttft = script.first_ttft_s if number == 0 and script.first_ttft_s is not None else script.ttft_s
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    writer.write(head + _event(_delta(rid, script.model, {"role": "assistant", "content": ""})))
    truth = {"id": rid, "number": number, "read_ns": t_read, "role_ns": perf_counter_ns(), "sent_ns": [],
             "tokens": tokens}
    script.truth[rid] = truth
    token = _event(_delta(rid, script.model, {"content": "tok "}))
    deadline = t_read + round(ttft * 1e9)
    script.active += 1
    try:
        for _ in range(tokens):
            await _sleep_until(deadline)
            writer.write(token)
            truth["sent_ns"].append(perf_counter_ns())
            await writer.drain()
            deadline += round((script.itl_s + script.itl_per_stream_s * (script.active - 1)) * 1e9)
    finally:
        script.active -= 1
    usage = {"prompt_tokens": 20, "completion_tokens": tokens, "total_tokens": 20 + tokens}
    tail = _event(_delta(rid, script.model, {}, "length"))
    if script.usage:
        tail += _event({"id": rid, "object": "chat.completion.chunk", "created": 0, "model": script.model,
                        "choices": [], "usage": usage})
    writer.write(tail + _event(b"[DONE]") + b"0\r\n\r\n")
    truth["end_ns"] = perf_counter_ns()
    await writer.drain()


def _json_response(obj) -> bytes:
    payload = json.dumps(obj).encode()
    return (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
            .encode() + payload)


async def _serve_connection(script: Script, reader, writer) -> None:
    try:
        while True:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            lines = head.split("\r\n")
            method, path = lines[0].split(" ")[:2]
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
            body = await reader.readexactly(int(headers.get("content-length", 0) or 0))
            t_read = perf_counter_ns()
            if method == "GET" and path == "/truth":
                writer.write(_json_response(list(script.truth.values())))
            elif method == "GET" and path.endswith("/models"):
                writer.write(_json_response({"object": "list", "data": [{"id": script.model, "object": "model"}]}))
            else:
                await _stream(script, writer, json.loads(body or b"{}"), t_read)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(script: Script, port: int, lifetime_s: float) -> None:
    server = await asyncio.start_server(lambda r, w: _serve_connection(script, r, w), "127.0.0.1", port,
                                        backlog=256)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        try:
            await asyncio.wait_for(server.serve_forever(), lifetime_s)
        except asyncio.TimeoutError:
            pass


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m sb.speed.scripted", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ttft-ms", type=float, default=50.0)
    parser.add_argument("--itl-ms", type=float, default=5.0)
    parser.add_argument("--first-ttft-ms", type=float, default=None)
    parser.add_argument("--short", default="", help="comma-separated request numbers (0 = first) one token short")
    parser.add_argument("--no-usage", action="store_true", help="send no usage report")
    parser.add_argument("--model", default="scripted-model")
    parser.add_argument("--itl-per-stream-ms", type=float, default=0.0,
                        help="added to the inter-token interval for each other stream in flight (a server that slows)")
    parser.add_argument("--lifetime-s", type=float, default=900.0)
    args = parser.parse_args(argv)
    script = Script(ttft_s=args.ttft_ms / 1e3, itl_s=args.itl_ms / 1e3,
                    first_ttft_s=None if args.first_ttft_ms is None else args.first_ttft_ms / 1e3,
                    short=frozenset(int(n) for n in args.short.split(",") if n.strip()),
                    usage=not args.no_usage, model=args.model, itl_per_stream_s=args.itl_per_stream_ms / 1e3)
    asyncio.run(serve(script, args.port, args.lifetime_s))


@dataclass
class ScriptedServer:
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def truth(self) -> dict:
        """The server's own stamps, by response id."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/truth", timeout=30) as response:
            return {t["id"]: t for t in json.load(response)}


@contextmanager
def scripted_server(ttft_ms=50.0, itl_ms=5.0, first_ttft_ms=None, short=(), usage=True, model="scripted-model",
                    itl_per_stream_ms=0.0, lifetime_s=900.0):
    """Start the scripted server in its own process on a free loopback port; stop it at the end."""
    args = [sys.executable, "-m", "sb.speed.scripted", "--ttft-ms", str(ttft_ms), "--itl-ms", str(itl_ms),
            "--short", ",".join(str(n) for n in short), "--model", model, "--lifetime-s", str(lifetime_s),
            "--itl-per-stream-ms", str(itl_per_stream_ms)]
    if first_ttft_ms is not None:
        args += ["--first-ttft-ms", str(first_ttft_ms)]
    if not usage:
        args.append("--no-usage")
    process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        if not line.startswith("listening "):
            raise RuntimeError(f"scripted server did not start (exit {process.poll()})")
        yield ScriptedServer(int(line.split()[1]))
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
