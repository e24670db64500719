"""The load generator: one event loop, keep-alive connections, closed-loop streams or open-loop arrivals.

No process or connection is started inside a closed-loop level: the pool is filled before
the level's first request, so a level measures the server and not the client's start-up.
Open-loop levels (sb.speed.openloop) open the connections they expect to need beforehand
and keep a few spare while they run; a send that finds none waits for a connect, and that
wait is in its send lag, never hidden. Warm-up, prompt calibration and `--search` are here.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from time import perf_counter_ns

from sb.speed import arrivals, figures, openloop, procedure
from sb.speed.client import Endpoint, Pool, send_one
from sb.speed.records import build_record, flag_prompt, prompt_count

CALIBRATION_WORDS = 8
CALIBRATION_CORRECTIONS = 2


@dataclass
class Plan:
    base_url: str
    model: str
    levels: tuple = procedure.CONCURRENCY_LEVELS      # closed-loop concurrencies
    max_tokens: int = procedure.MAX_TOKENS
    requests_per_level: int | None = None
    timeout_s: float = 600.0
    api_key: str | None = None
    rates: tuple | None = None                        # requests/s: open loop instead of the concurrencies
    arrivals: str = "poisson"
    seed: int = 0
    prompt_tokens: tuple | None = None                # prompt sizes to sweep; None: the fixed prompt
    prompt_margin: float = 0.1
    lag_bound_s: float = 0.010
    objectives: tuple = ()
    share: float | None = None
    search: bool = False
    max_requests: int = 1000
    search_resolution: float = 0.05

    @property
    def load(self) -> str:
        return "open" if self.rates else "closed"

    def values(self) -> tuple:
        return tuple(self.rates) if self.rates else tuple(self.levels)

    def prompt_sizes(self) -> tuple:
        return tuple(self.prompt_tokens) if self.prompt_tokens else (None,)

    def requests_for(self, value) -> int:
        if self.load == "open":
            return arrivals.requests_for_rate(value, self.requests_per_level)
        return procedure.requests_for_level(int(value), self.requests_per_level)

    def per_level(self) -> dict:
        return {v: self.requests_for(v) for v in self.values()}


@dataclass
class Measurement:
    warmup: dict
    records: list            # every measured request, level by level, in the order each was written
    client_cpu: list         # per level: {level, concurrency, rate_rps, prompt_tokens, cpu_s, streamed_tokens}
    started_at: str
    origin_ns: int           # perf_counter_ns at the run's start: records' times are seconds after it
    # each level as run: load, concurrency/rate_rps, prompt_tokens, probe
    levels: list = field(default_factory=list)
    calibration: dict = field(default_factory=dict)   # prompt size -> how its filler length was found
    searches: list = field(default_factory=list)      # one per prompt size when --search


def measure(plan: Plan) -> Measurement:
    """Run the whole procedure (warm-up, calibration, then each level or the search) and return the raw records."""
    return asyncio.run(_measure(plan))


async def _measure(plan: Plan) -> Measurement:
    session = Session(plan)
    try:
        await session.pool.ensure(1)
        session.warmup = await session.warm_up()
        for size in plan.prompt_tokens or ():
            session.calibration[size] = await session.calibrate(size)
        for size in plan.prompt_sizes():
            if plan.search:
                await _search(session, size)
            else:
                for value in plan.values():
                    await session.level(value, size)
    finally:
        session.pool.close()
    return Measurement(session.warmup, session.records, session.cpu, session.started_at, session.origin,
                       session.levels, {str(k): v for k, v in session.calibration.items()}, session.searches)


async def _search(session: "Session", size) -> None:
    from sb.speed.search import Search
    plan = session.plan
    search = Search(start=min(plan.values()), integer=plan.load == "closed", budget=plan.max_requests,
                    requests_for=plan.requests_for, resolution=plan.search_resolution)
    while (value := search.next_value()) is not None:
        summary = await session.level(value, size, probe=len(search.probes) + 1)
        search.record(value, summary["slo"]["held"], summary["requests"], summary.get("client_limited", False))
    session.searches.append({**search.result(), "prompt_tokens": size})


class Session:
    """One run's connections, clock origin and everything measured so far."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.endpoint = Endpoint.from_base_url(plan.base_url)
        self.pool = Pool(self.endpoint)
        self.started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.origin = perf_counter_ns()
        self.counter = itertools.count()
        self.nonces = itertools.count(1)
        self.warmup: dict = {}
        self.records: list = []
        self.cpu: list = []
        self.levels: list = []
        self.calibration: dict = {}
        self.searches: list = []

    def _bytes(self, body: dict) -> bytes:
        return procedure.request_bytes(self.endpoint.path, self.endpoint.host_header, body, self.plan.api_key)

    def _requests(self, size, n: int) -> list:
        """The level's request bytes, prepared before it starts; a sized prompt is unique per request."""
        if size is None:
            return [self._bytes(procedure.request_body(self.plan.model, self.plan.max_tokens))] * n
        words = self.calibration[size]["words"]
        return [self._bytes(procedure.request_body(self.plan.model, self.plan.max_tokens,
                                                   procedure.sized_prompt(words, next(self.nonces))))
                for _ in range(n)]

    async def warm_up(self) -> dict:
        request = self._bytes(procedure.request_body(self.plan.model, self.plan.max_tokens))
        raw = await send_one(self.pool, request, self.plan.timeout_s)
        return build_record(raw, self.plan.max_tokens, self.origin, next(self.counter), 0)

    async def _prompt_tokens(self, words: int) -> tuple:
        """(prompt_tokens the server counted for a sized prompt of `words`, or None; why not, or None)."""
        body = procedure.probe_body(self.plan.model, procedure.sized_prompt(words, 0))
        raw = await send_one(self.pool, self._bytes(body), self.plan.timeout_s)
        text = b"\n\n".join(event for _, event in raw.events)
        if raw.error or raw.status != 200:
            return None, raw.error or f"HTTP {raw.status}: {text.decode('utf-8', 'replace')[:200]}"
        count = prompt_count(text)
        return count, None if count is not None else "no usage.prompt_tokens in the response"

    async def calibrate(self, target: int) -> dict:
        """How many filler words make a prompt of `target` tokens on this server, from its own counts.

        Two one-token probes a quarter of the target apart give the server's tokens per filler
        word and its fixed part (chat template, instruction); the length they predict is
        probed to check, and corrected at most twice. The probes stay short so a long target
        never overflows the context before it is known to fit. A server that reports no
        prompt_tokens gets one word per token, unchecked.
        """
        short, long = CALIBRATION_WORDS, CALIBRATION_WORDS + max(CALIBRATION_WORDS, target // 4)
        (first, why), (second, why_second) = await self._prompt_tokens(short), await self._prompt_tokens(long)
        probes = [[short, first], [long, second]]
        if first is None or second is None or second <= first:
            return {"target": target, "words": target, "tokens_per_word": None, "fixed_tokens": None,
                    "reported": None, "probes": probes,
                    "note": f"no usable prompt_tokens from the server ({why or why_second or 'no growth'}): "
                            "one filler word per token, unchecked"}
        per_word = (second - first) / (long - short)
        fixed = first - per_word * short
        words = max(1, round((target - fixed) / per_word))
        reported, why = await self._prompt_tokens(words)
        probes.append([words, reported])
        for _ in range(CALIBRATION_CORRECTIONS):
            if reported is None or abs(reported - target) < per_word:
                break
            words = max(1, words + round((target - reported) / per_word))
            reported, why = await self._prompt_tokens(words)
            probes.append([words, reported])
        return {"target": target, "words": words, "tokens_per_word": per_word, "fixed_tokens": fixed,
                "reported": reported, "probes": probes, "note": why}

    async def level(self, value, size, probe=None) -> dict:
        """Run one level, keep its records, and return its summary (judged against the objectives)."""
        plan = self.plan
        n = plan.requests_for(value)
        index = len(self.levels)
        spec = {"index": index, "load": plan.load, "concurrency": int(value) if plan.load == "closed" else None,
                "rate_rps": value if plan.load == "open" else None, "prompt_tokens": size, "probe": probe}
        requests = self._requests(size, n)
        cpu_before = time.process_time()
        if plan.load == "open":
            offsets = arrivals.schedule(plan.arrivals, value, n, plan.seed)
            raws, due, sender_cpu_s = await openloop.run_level(self.pool, requests, offsets, plan.timeout_s,
                                                        self._expected_e2e_s())
        else:
            await self.pool.ensure(int(value))
            raws, due, sender_cpu_s = await _closed_level(self.pool, requests, plan.timeout_s, int(value)), None, 0.0
        cpu_s = time.process_time() - cpu_before + sender_cpu_s
        records = self._records(raws, due, spec)
        self.cpu.append({"level": index, "concurrency": spec["concurrency"], "rate_rps": spec["rate_rps"],
                         "prompt_tokens": size, "cpu_s": cpu_s, "sender_cpu_s": sender_cpu_s,
                         "streamed_tokens": sum(r["content_chunks"] for r in records)})
        self.records.extend(records)
        self.levels.append(spec)
        return figures.level_summary(spec, records, list(plan.objectives), plan.share,
                                     plan.lag_bound_s if plan.load == "open" else None)

    def _records(self, raws: list, due, spec: dict) -> list:
        order = sorted(range(len(raws)), key=lambda i: raws[i].t_written_ns)
        records = []
        for i in order:
            record = build_record(raws[i], self.plan.max_tokens, self.origin, next(self.counter),
                                  spec["concurrency"])
            record.update(level=spec["index"], rate_rps=spec["rate_rps"])
            if due is not None:
                record["scheduled_s"] = (due[i] - self.origin) / 1e9
                record["send_lag_s"] = (raws[i].t_written_ns - due[i]) / 1e9
            if spec["prompt_tokens"] is not None:
                calibration = self.calibration[spec["prompt_tokens"]]
                flag_prompt(record, spec["prompt_tokens"], self.plan.prompt_margin, calibration["reported"])
            records.append(record)
        return records

    def _expected_e2e_s(self) -> float:
        """How long a request is expected to take, to size the open-loop pool: the slowest measured so far."""
        seen = [r["e2e_s"] for r in [self.warmup, *self.records] if r.get("e2e_s")]
        return max(seen) if seen else 1.0


async def _closed_level(pool: Pool, requests: list, timeout_s: float, concurrency: int) -> list:
    """N streams, each sending its next request as soon as its last ended. JSON is parsed after the level.

    One stream reads its responses blocking (`send_one(alone=True)`): nothing else is on the loop.
    """
    remaining = iter(requests)
    raws: list = []

    async def stream() -> None:
        for request in remaining:
            raws.append(await send_one(pool, request, timeout_s, alone=concurrency == 1))

    await asyncio.gather(*(stream() for _ in range(concurrency)))
    return raws


