"""A scripted OpenAI-compatible streaming server whose timing is known exactly: the fake beside the client.

It speaks just enough HTTP/1.1 (keep-alive, chunked server-sent events) to be measured like
a real server. For each chat request it sends a role-only chunk at once, then the content
tokens on an absolute schedule (time to first token, then one token every inter-token
interval), then the usage report and `[DONE]`. Modes: a time to first token that grows
with the prompt (`--prefill-ms-per-token`, prompt tokens counted one per word plus a fixed
template, see `prompt_tokens`), a per-stream speed that is a known function of load
(`--itl-per-stream-ms`, see `per_stream_tokens_per_s`), a time to first token that grows
with the arrival rate the server sees (`--ttft-ms-per-rps`, see `ttft_at_rate`), late first tokens for chosen
requests (`--slow`), a wrong prompt count in the usage report (`--miscount`). A
non-streamed request gets one token and its usage report (the client's prompt-size probe).
It stamps, with the same system-wide monotonic clock the client uses (`perf_counter_ns`,
CLOCK_MONOTONIC on Linux), when each request fully arrived (the kernel's receive timestamp,
SO_TIMESTAMPNS) and when each chunk was handed to the kernel; the schedule runs from that
arrival; `GET /truth` returns those stamps, so a measurement's error is its difference from
what the server really did.

Run it with `python -m sb.speed.scripted --port 0 ...` (it prints `listening PORT`), or
through `scripted_server(...)`, which starts it as a separate process so its event loop
never shares the client's. It stops by itself after `--lifetime-s`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import Any

from sb.speed.stamps import SO_TIMESTAMPNS, kernel_stamp


@dataclass
class Script:
    ttft_s: float = 0.05
    itl_s: float = 0.005
    first_ttft_s: float | None = None      # the warm-up request's time to first token
    short: frozenset = frozenset()         # request numbers (0 = the first) that stop one token short
    usage: bool = True
    model: str = "scripted-model"
    itl_per_stream_s: float = 0.0          # added to the interval for each other stream in flight
    prefill_per_token_s: float = 0.0       # added to the time to first token per prompt token
    slow: frozenset = frozenset()          # request numbers whose first token comes after slow_ttft_s instead
    slow_ttft_s: float = 0.0
    miscount: frozenset = frozenset()      # request numbers whose usage reports twice the prompt tokens
    ttft_per_rps_s: float = 0.0            # added to the time to first token per request/s of arrival rate
    arrived: list = field(default_factory=list)   # the last RATE_WINDOW streamed requests' arrival stamps
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




class _Conn:
    """A loopback connection read with recvmsg, so each read carries the kernel's arrival time.

    The arrival stamp, not the moment this event loop got round to the socket, is when the
    request was fully read: 32 requests arriving at once would otherwise be stamped one after
    another, and the server's own queueing would pass for the client's measurement error.
    """

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.loop = asyncio.get_running_loop()

    async def recv(self) -> tuple:
        future = self.loop.create_future()
        self.loop.add_reader(self.sock, self._readable, future)
        try:
            return await future
        finally:
            self.loop.remove_reader(self.sock)

    def _readable(self, future) -> None:
        if future.done():
            return
        try:
            data, ancillary, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(16))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data, ancillary = b"", []
        future.set_result((data, kernel_stamp(ancillary, perf_counter_ns(), time.time_ns())))

    def write(self, data: bytes) -> None:
        """Loopback chunks are small: send() takes them whole; the rest is sent blocking, briefly."""
        sent = 0
        try:
            sent = self.sock.send(data)
        except BlockingIOError:
            pass
        if sent < len(data):
            self.sock.setblocking(True)
            try:
                self.sock.sendall(data[sent:])
            finally:
                self.sock.setblocking(False)


class _TlsConn(_Conn):
    """TLS (`--tls-cert`) over the same stamped reads: records are decrypted in memory (ssl.MemoryBIO).

    So a request's arrival is still the kernel's stamp of the read that completed it, and the
    client's TLS path is measured against the same truth as its plain one.
    """

    def __init__(self, sock: socket.socket, context: ssl.SSLContext):
        super().__init__(sock)
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_side=True)
        self.handshaken = False
        self.stamp = 0

    async def recv(self) -> tuple:
        while True:
            try:
                if not self.handshaken:
                    self.tls.do_handshake()
                    self.handshaken = True
                data = self.tls.read(65536)
                self._flush()
                return data, self.stamp
            except ssl.SSLWantReadError:
                self._flush()
            except ssl.SSLZeroReturnError:
                return b"", self.stamp
            raw, self.stamp = await super().recv()
            if not raw:
                return b"", self.stamp
            self.incoming.write(raw)

    def write(self, data: bytes) -> None:
        self.tls.write(data)
        self._flush()

    def _flush(self) -> None:
        out = self.outgoing.read()
        if out:
            super().write(out)


TEMPLATE_TOKENS = 6      # the scripted "chat template": tokens added to every prompt


def prompt_tokens(body: dict) -> int:
    """The scripted tokenizer: one token per whitespace-separated word of the messages, plus the template."""
    return TEMPLATE_TOKENS + sum(len(str(m.get("content") or "").split()) for m in body.get("messages") or [])


def per_stream_tokens_per_s(streams: int, tokens: int, ttft_s: float, itl_s: float, itl_per_stream_s: float) -> float:
    """The truth of the load mode: per-stream speed when `streams` run side by side for the whole request.

    Every token interval is itl + itl_per_stream x (streams - 1), so a request takes
    ttft + (tokens - 1) x that interval.
    """
    return tokens / (ttft_s + (tokens - 1) * (itl_s + itl_per_stream_s * (streams - 1)))


RATE_WINDOW = 4         # arrivals the rate mode's rate is measured over


def ttft_at_rate(rate_rps: float, ttft_s: float, ttft_per_rps_s: float) -> float:
    """The truth of the rate mode: the time to first token of a request arriving at `rate_rps`.

    The rate is the server's own view: RATE_WINDOW arrivals over the time they spanned,
    this request's included (`arrival_rate`). Under constant arrivals that is the schedule's
    rate give or take the sends' jitter, so the highest rate whose TTFT meets a bound B is
    exactly (B - ttft) / ttft_per_rps: a capacity the search can be checked against.
    """
    return ttft_s + ttft_per_rps_s * rate_rps


def arrival_rate(arrived: list, t_read: int) -> float:
    """Requests/s over the last RATE_WINDOW arrivals before `t_read` and this one; 0 for the first."""
    earlier = arrived[-RATE_WINDOW:]
    if not earlier or t_read <= earlier[0]:
        return 0.0
    return len(earlier) / ((t_read - earlier[0]) / 1e9)


def _time_to_first_token(script: Script, number: int, prompt: int, rate_rps: float) -> float:
    if number == 0 and script.first_ttft_s is not None:
        base = script.first_ttft_s
    else:
        base = script.slow_ttft_s if number in script.slow else script.ttft_s
    return ttft_at_rate(rate_rps, base, script.ttft_per_rps_s) + script.prefill_per_token_s * prompt


def _probe_response(script: Script, body: dict) -> bytes:
    """A non-streamed request (the client's prompt-size probe): one token and the usage report, not numbered."""
    prompt = prompt_tokens(body)
    return _json_response({"id": "chatcmpl-probe", "object": "chat.completion", "created": 0, "model": script.model,
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": "tok"},
                                        "finish_reason": "length"}],
                           "usage": {"prompt_tokens": prompt, "completion_tokens": 1, "total_tokens": prompt + 1}})


async def _stream(script: Script, conn: _Conn, body: dict, t_read: int) -> None:
    number = script.served
    script.served += 1
    rid = f"chatcmpl-{number}"
    max_tokens = int(body.get("max_tokens") or 16)
    tokens = max_tokens - 1 if number in script.short else max_tokens
    prompt = prompt_tokens(body)
    rate = arrival_rate(script.arrived, t_read)
    script.arrived = script.arrived[-RATE_WINDOW + 1:] + [t_read]
    ttft = _time_to_first_token(script, number, prompt, rate)
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    conn.write(head + _event(_delta(rid, script.model, {"role": "assistant", "content": ""})))
    truth: dict[str, Any] = {"id": rid, "number": number, "read_ns": t_read, "role_ns": perf_counter_ns(),
                             "sent_ns": [], "tokens": tokens, "prompt_tokens": prompt, "ttft_scripted_s": ttft,
                             "arrival_rate_rps": rate}
    script.truth[rid] = truth
    token = _event(_delta(rid, script.model, {"content": "tok "}))
    deadline = t_read + round(ttft * 1e9)
    script.active += 1
    try:
        for _ in range(tokens):
            await _sleep_until(deadline)
            truth["sent_ns"].append(perf_counter_ns())        # stamped before the send, as the client does
            conn.write(token)
            deadline += round((script.itl_s + script.itl_per_stream_s * (script.active - 1)) * 1e9)
    finally:
        script.active -= 1
    reported = 2 * prompt if number in script.miscount else prompt
    usage = {"prompt_tokens": reported, "completion_tokens": tokens, "total_tokens": reported + tokens}
    tail = _event(_delta(rid, script.model, {}, "length"))
    if script.usage:
        tail += _event({"id": rid, "object": "chat.completion.chunk", "created": 0, "model": script.model,
                        "choices": [], "usage": usage})
    truth["end_ns"] = perf_counter_ns()
    conn.write(tail + _event(b"[DONE]") + b"0\r\n\r\n")


def _json_response(obj) -> bytes:
    payload = json.dumps(obj).encode()
    return (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
            .encode() + payload)


def _split_request(buffer: bytes):
    """(method, path, body, rest) once a whole request is in `buffer`, else None."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = buffer[:end].decode("latin-1").split("\r\n")
    method, path = lines[0].split(" ")[:2]
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    length = int(headers.get("content-length", 0) or 0)
    if len(buffer) < end + 4 + length:
        return None
    return method, path, buffer[end + 4:end + 4 + length], buffer[end + 4 + length:]


async def _serve_connection(script: Script, conn: _Conn) -> None:
    buffer = b""
    try:
        while True:
            data, arrived = await conn.recv()
            if not data:
                return
            buffer += data
            while (request := _split_request(buffer)) is not None:
                method, path, body, buffer = request
                if method == "GET" and path == "/truth":
                    conn.write(_json_response(list(script.truth.values())))
                elif method == "GET" and path.endswith("/models"):
                    conn.write(_json_response({"object": "list", "data": [{"id": script.model, "object": "model"}]}))
                elif (parsed := json.loads(body or b"{}")).get("stream") is False:
                    conn.write(_probe_response(script, parsed))
                else:
                    await _stream(script, conn, parsed, arrived)
    except ConnectionError:
        pass
    finally:
        conn.sock.close()


async def serve(script: Script, port: int, lifetime_s: float, tls: ssl.SSLContext | None = None) -> None:
    loop = asyncio.get_running_loop()
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(256)
    listener.setblocking(False)
    print(f"listening {listener.getsockname()[1]}", flush=True)
    tasks = set()

    async def accept_forever() -> None:
        while True:
            sock, _ = await loop.sock_accept(listener)
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with contextlib.suppress(OSError):       # not Linux: arrival stamped in the loop
                sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            conn = _Conn(sock) if tls is None else _TlsConn(sock, tls)
            task = asyncio.create_task(_serve_connection(script, conn))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    try:
        await asyncio.wait_for(accept_forever(), lifetime_s)
    except asyncio.TimeoutError:
        pass
    finally:
        listener.close()


def _numbers(text: str) -> frozenset:
    return frozenset(int(n) for n in text.split(",") if n.strip())


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
    parser.add_argument("--prefill-ms-per-token", type=float, default=0.0,
                        help="added to the time to first token per prompt token "
                             "(prefill proportional to prompt length)")
    parser.add_argument("--slow", default="", help="comma-separated request numbers whose first token is late")
    parser.add_argument("--slow-ttft-ms", type=float, default=0.0)
    parser.add_argument("--miscount", default="",
                        help="comma-separated request numbers reporting twice the prompt tokens")
    parser.add_argument("--ttft-ms-per-rps", type=float, default=0.0,
                        help="added to the time to first token per request/s of arrival rate (a server that queues)")
    parser.add_argument("--tls-cert", default=None, help="serve HTTPS with this certificate (PEM) ...")
    parser.add_argument("--tls-key", default=None, help="... and this private key (PEM)")
    parser.add_argument("--lifetime-s", type=float, default=900.0)
    args = parser.parse_args(argv)
    tls = None
    if args.tls_cert:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(args.tls_cert, args.tls_key)
    script = Script(ttft_s=args.ttft_ms / 1e3, itl_s=args.itl_ms / 1e3,
                    first_ttft_s=None if args.first_ttft_ms is None else args.first_ttft_ms / 1e3,
                    short=_numbers(args.short),
                    usage=not args.no_usage, model=args.model, itl_per_stream_s=args.itl_per_stream_ms / 1e3,
                    prefill_per_token_s=args.prefill_ms_per_token / 1e3, slow=_numbers(args.slow),
                    slow_ttft_s=args.slow_ttft_ms / 1e3, miscount=_numbers(args.miscount),
                    ttft_per_rps_s=args.ttft_ms_per_rps / 1e3)
    asyncio.run(serve(script, args.port, args.lifetime_s, tls))


@dataclass
class ScriptedServer:
    port: int
    tls_cert: str | None = None          # HTTPS, trusting this certificate for /truth

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls_cert else 'http'}://127.0.0.1:{self.port}/v1"

    def truth(self) -> dict:
        """The server's own stamps, by response id."""
        context = ssl.create_default_context(cafile=self.tls_cert) if self.tls_cert else None
        url = f"{self.base_url.rsplit('/', 1)[0]}/truth"
        with urllib.request.urlopen(url, timeout=30, context=context) as response:
            return {t["id"]: t for t in json.load(response)}


@contextlib.contextmanager
def scripted_server(ttft_ms=50.0, itl_ms=5.0, first_ttft_ms=None, short=(), usage=True, model="scripted-model",
                    itl_per_stream_ms=0.0, lifetime_s=900.0, prefill_ms_per_token=0.0, slow=(), slow_ttft_ms=0.0,
                    miscount=(), ttft_ms_per_rps=0.0, tls_cert=None, tls_key=None):
    """Start the scripted server in its own process on a free loopback port; stop it at the end."""
    def numbers(values) -> str:
        return ",".join(str(n) for n in values)
    args = [sys.executable, "-m", "sb.speed.scripted", "--ttft-ms", str(ttft_ms), "--itl-ms", str(itl_ms),
            "--short", numbers(short), "--model", model, "--lifetime-s", str(lifetime_s),
            "--itl-per-stream-ms", str(itl_per_stream_ms), "--prefill-ms-per-token", str(prefill_ms_per_token),
            "--slow", numbers(slow), "--slow-ttft-ms", str(slow_ttft_ms), "--miscount", numbers(miscount),
            "--ttft-ms-per-rps", str(ttft_ms_per_rps)]
    if first_ttft_ms is not None:
        args += ["--first-ttft-ms", str(first_ttft_ms)]
    if not usage:
        args.append("--no-usage")
    if tls_cert:
        args += ["--tls-cert", str(tls_cert), "--tls-key", str(tls_key)]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        if not line.startswith("listening "):
            raise RuntimeError(f"scripted server did not start (exit {process.poll()})")
        yield ScriptedServer(int(line.split()[1]), str(tls_cert) if tls_cert else None)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
