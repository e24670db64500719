"""The load generator: one event loop, keep-alive connections, a closed loop of N streams per level.

No process or connection is started inside a level: the pool is filled before the level's
first request, so a level measures the server and not the client's start-up.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from time import perf_counter_ns

from sb.speed import procedure
from sb.speed.client import Endpoint, Pool
from sb.speed.records import build_record


@dataclass
class Plan:
    base_url: str
    model: str
    levels: tuple = procedure.CONCURRENCY_LEVELS
    max_tokens: int = procedure.MAX_TOKENS
    requests_per_level: int | None = None
    timeout_s: float = 600.0
    api_key: str | None = None

    def per_level(self) -> dict:
        return {c: procedure.requests_for_level(c, self.requests_per_level) for c in self.levels}


@dataclass
class Measurement:
    warmup: dict
    records: list            # every measured request, in the order each was written
    client_cpu: list         # per level: {concurrency, cpu_s, streamed_tokens}
    started_at: str
    origin_ns: int           # perf_counter_ns at the run's start: records' times are seconds after it


def measure(plan: Plan) -> Measurement:
    """Run the whole procedure (warm-up, then each level in order) and return the raw records."""
    return asyncio.run(_measure(plan))


async def _measure(plan: Plan) -> Measurement:
    endpoint = Endpoint.from_base_url(plan.base_url)
    body = procedure.request_body(plan.model, plan.max_tokens)
    request = procedure.request_bytes(endpoint.path, endpoint.host_header, body, plan.api_key)
    pool = Pool(endpoint)
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    origin = perf_counter_ns()
    counter = itertools.count()
    try:
        await pool.ensure(1)
        warmup = build_record(await _one(pool, request, plan), plan.max_tokens, origin, next(counter), 0)
        records, cpu = [], []
        for concurrency, n in plan.per_level().items():
            await pool.ensure(concurrency)
            cpu_before = time.process_time()
            raws = await _level(pool, request, plan, concurrency, n)
            level = [build_record(raw, plan.max_tokens, origin, next(counter), concurrency) for raw in raws]
            cpu.append({"concurrency": concurrency, "cpu_s": time.process_time() - cpu_before,
                        "streamed_tokens": sum(r["content_chunks"] for r in level)})
            records.extend(level)
    finally:
        pool.close()
    return Measurement(warmup, records, cpu, started_at, origin)


async def _one(pool: Pool, request: bytes, plan: Plan):
    """One request; sent again once, on a new connection, if a reused one was closed before any reply byte."""
    conn, reused = await pool.acquire()
    raw = await conn.send(request, plan.timeout_s)
    pool.release(conn)
    if reused and raw.status is None and (raw.error or "").startswith("connection closed"):
        return await _one(pool, request, plan)
    return raw


async def _level(pool: Pool, request: bytes, plan: Plan, concurrency: int, n: int) -> list:
    """The raw responses of a level; JSON is parsed after it ends, so parsing never delays a timestamp."""
    remaining = iter(range(n))
    raws: list = []

    async def stream() -> None:
        for _ in remaining:
            raws.append(await _one(pool, request, plan))

    await asyncio.gather(*(stream() for _ in range(concurrency)))
    return sorted(raws, key=lambda raw: raw.t_written_ns)
