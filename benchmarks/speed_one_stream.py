"""Where one stream's client CPU goes: the client beside the least a client can do, interleaved.

At one stream every token is its own wakeup, so the client's CPU per token is mostly the
machine's cost of a wakeup. This prints, against one scripted server and interleaved
round by round (so a noisy minute hits every variant alike), CPU per streamed token of:

- `bare`: a blocking recvmsg_into per read into one buffer, nothing else (the floor);
- `bare+rcvtimeo`: the same with the kernel receive timeout the client keeps its deadline in;
- `client`: `sb.speed.client.send_one(alone=True)`, what a one-stream level runs;

and the time the response parser spends per token on a typical chunk, off the wire.

    .venv/bin/python benchmarks/speed_one_stream.py [--rounds 7] [--requests 4] [--itl-ms 5]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import timeit
from time import process_time

from sb.speed import client, procedure
from sb.speed.scripted import scripted_server
from speed_accuracy import bare_read_ms_per_token     # benchmarks/, beside this script

TOKENS = procedure.MAX_TOKENS


def _request(port: int) -> bytes:
    return procedure.request_bytes("/v1/chat/completions", f"127.0.0.1:{port}",
                                   procedure.request_body("scripted", TOKENS), None)


async def via_client(port: int, requests: int) -> float:
    """ms of CPU per token for the client's one-stream path."""
    endpoint = client.Endpoint.from_base_url(f"http://127.0.0.1:{port}/v1")
    pool = client.Pool(endpoint)
    await pool.ensure(1)
    request = _request(port)
    start = process_time()
    for _ in range(requests):
        raw = await client.send_one(pool, request, 60, alone=True)
    cpu = process_time() - start
    pool.close()
    if raw.error or len(raw.events) < TOKENS:
        raise RuntimeError(f"the client got {len(raw.events)} events, error {raw.error}")
    return 1e3 * cpu / (requests * TOKENS)


def parser_us_per_token() -> float:
    """µs per token the response parser takes for one typical chunk per read (best of five)."""
    payload = (b'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m",'
               b'"choices":[{"index":0,"delta":{"content":"tok"}}]}\n\n')
    chunk = f"{len(payload):x}\r\n".encode() + payload + b"\r\n"
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    loop = asyncio.new_event_loop()

    def one_response():
        raw = client.RawResponse()
        raw.done = loop.create_future()
        parser = client._ResponseParser(raw, raw.done)
        parser.feed(0, head)
        for t in range(TOKENS):
            parser.feed(t, chunk)
    number = 100
    best = min(timeit.repeat(one_response, number=number, repeat=5))
    loop.close()
    return 1e6 * best / (number * TOKENS)


def _median(values: list) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=4, help="requests of 256 tokens per variant per round")
    parser.add_argument("--itl-ms", type=float, default=5.0)
    args = parser.parse_args(argv)
    seen: dict = {"bare": [], "bare+rcvtimeo": [], "client": []}
    with scripted_server(ttft_ms=50.0, itl_ms=args.itl_ms) as server:
        for _ in range(args.rounds):
            seen["bare"].append(bare_read_ms_per_token(server.port, args.requests))
            seen["bare+rcvtimeo"].append(bare_read_ms_per_token(server.port, args.requests, rcvtimeo=True))
            seen["client"].append(asyncio.run(via_client(server.port, args.requests)))
    floor = _median(seen["bare"])
    print(f"CPU ms per token at one stream, ITL {args.itl_ms} ms, {args.rounds} interleaved rounds of "
          f"{args.requests} x {TOKENS} tokens: median [min-max], ratio to bare")
    for name, values in seen.items():
        median = _median(values)
        print(f"{name:>14}: {median:.4f} [{min(values):.4f}-{max(values):.4f}]  x{median / floor:.2f}")
    print(f"{'parser':>14}: {parser_us_per_token():.2f} µs per token (one chunk per read, best of five)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
