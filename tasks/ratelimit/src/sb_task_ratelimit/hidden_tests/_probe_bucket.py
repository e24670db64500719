"""Runs in the solution's process: real threads racing for one bucket's tokens.

The judge chooses the capacity, the rate, the number of threads and rounds; this file
runs them and returns how many tokens were granted in each round, what available()
reported meanwhile, and anything that raised or stopped making progress. No expected
value and no oracle lives here: the judge compares the counts with the capacity.

Why an unguarded bucket or limiter loses the race here on practically every round,
however the OS schedules (a CPython bucket without a lock is otherwise almost never
caught: its check-then-take runs between two thread switches):
- the clock sleeps inside every reading ("it may take a moment to answer"), and moves
  on by a negligible tick each time, so every call runs the refill arithmetic. In
  race_limiter the clock is the judge's (a handle: every reading is a round trip the
  judge answers after a seeded, jittered pause), so nothing here can make a reading
  quick: a thread waiting for the time is blocked with the GIL free whatever the
  solution does to this process;
- a tracer sleeps at every line of the solution's own file and at a seeded tenth of
  its bytecodes, mostly briefly and one time in ten for a millisecond. A sleeping thread is off the CPU with the GIL free, so the other
  released threads run inside every gap: between the balance check and the take,
  between reading the balance and writing it back, between finding no bucket for a
  key and storing a new one.
Sleeping never changes what a correct implementation computes: each yield is one of
the interleavings the OS could produce anyway.
"""

import random
import threading
import time

import bucket
from bucket import RateLimiter, TokenBucket

_sleep = time.sleep
_monotonic = time.monotonic
CLOCK_PAUSE_S = 0.0001
# Mostly short yields, one in ten long: a gap a few bytecodes wide must sometimes stay
# open long enough for another thread's whole request (clock reading included).
TRACE_PAUSES_S = (0.00002,) * 9 + (0.001,)
OPCODE_YIELD_P = 0.1
# A deadlock detector, not a timing check: a correct run completes a request every few
# milliseconds even on a loaded machine.
STALL_S = 10.0


class _Tracer:
    def __init__(self, seed):
        self._file = bucket.__file__
        self._seed = seed
        self._local = threading.local()
        self.yields = 0

    def _rng(self):
        rng = getattr(self._local, "rng", None)
        if rng is None:
            rng = self._local.rng = random.Random(f"{self._seed}/{threading.current_thread().name}")
        return rng

    def __call__(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename == self._file:
            frame.f_trace_opcodes = True
            return self._local_trace
        return None

    def _local_trace(self, frame, event, arg):
        rng = self._rng()
        if event == "line" or (event == "opcode" and rng.random() < OPCODE_YIELD_P):
            self.yields += 1
            _sleep(rng.choice(TRACE_PAUSES_S))
        return self._local_trace


class _TimeModuleWatch:
    """Counts readings of the time module's clocks while the solution runs."""

    NAMES = ("time", "monotonic", "perf_counter", "time_ns", "monotonic_ns", "perf_counter_ns")

    def __enter__(self):
        self.calls = {}
        self._saved = {name: getattr(time, name) for name in self.NAMES}
        for name, real in self._saved.items():
            setattr(time, name, self._counting(name, real))
        return self

    def _counting(self, name, real):
        def counted(*args):
            self.calls[name] = self.calls.get(name, 0) + 1
            return real(*args)
        return counted

    def __exit__(self, *exc_info):
        for name, real in self._saved.items():
            setattr(time, name, real)
        return False


def _run_threads(bodies, seed):
    """Start one thread per body under the tracer, wait for all (or a stall)."""
    failures = []
    progress = [0]
    tracer = _Tracer(seed)

    def wrap(body):
        def run():
            try:
                body(progress)
            except BaseException as exc:  # reported to the judge
                failures.append(f"{type(exc).__name__}: {exc}")
        return run

    threads = [threading.Thread(target=wrap(b), name=f"t{i}", daemon=True) for i, b in enumerate(bodies)]
    threading.settrace(tracer)  # a new thread installs it after start() returns: keep it set
    try:
        for t in threads:
            t.start()
        last, last_change = -1, _monotonic()
        while any(t.is_alive() for t in threads):
            _sleep(0.02)
            if progress[0] != last:
                last, last_change = progress[0], _monotonic()
            elif _monotonic() - last_change > STALL_S:
                break
    finally:
        threading.settrace(None)
    return failures, sum(t.is_alive() for t in threads), tracer.yields


class SlowTickingClock:
    """The bucket races' clock, here: a reading takes a moment and moves time on by
    `tick`. (A lockless check-then-take holds no clock reading, so the judge's clock
    would not open it to other threads; only the tracer does. Readings here cost no
    wire round trip: a bucket that holds its lock while it reads the clock would wait
    for the judge's answers one at a time.)"""

    def __init__(self, start, tick):
        self.now = start
        self._tick = tick
        self._lock = threading.Lock()

    def __call__(self):
        _sleep(CLOCK_PAUSE_S)
        with self._lock:
            self.now += self._tick
            return self.now

    def advance(self, seconds):
        with self._lock:
            self.now += seconds


def race_bucket(capacity, rate, takers, attempts, readers, reads, rounds, seed):
    """Each round, `takers` threads call try_acquire() `attempts` times and `readers`
    threads call available() `reads` times, all released together; then the clock
    moves on by capacity / rate seconds (a full refill)."""
    clock = SlowTickingClock(1000.0, 1e-9)
    with _TimeModuleWatch() as watch:
        b = TokenBucket(capacity, rate, clock)
        grants, balances, problems = [], [], []
        stuck = yields = 0
        for _ in range(rounds):
            barrier = threading.Barrier(takers + readers)
            got, seen = [], []

            def take(progress):
                barrier.wait()
                mine = 0
                for _ in range(attempts):
                    if b.try_acquire() is True:
                        mine += 1
                    progress[0] += 1
                got.append(mine)

            def read(progress):
                barrier.wait()
                for _ in range(reads):
                    value = b.available()
                    seen.append(float(value) if isinstance(value, (int, float)) else repr(value))
                    progress[0] += 1

            failures, stuck_now, y = _run_threads([take] * takers + [read] * readers, seed)
            problems += failures
            stuck += stuck_now
            yields += y
            grants.append(sum(got))
            balances.append(seen)
            if stuck_now:
                break
            clock.advance(capacity / rate)
    return {"grants": grants, "balances": balances, "failures": problems, "stuck": stuck,
            "yields": yields, "time_module_calls": watch.calls}


def race_limiter(clock, capacity, rate, n_threads, per_thread, rounds, seed):
    """Each round a key never used before; n_threads threads released together each
    call try_acquire(key) `per_thread` times. Every reading of the judge's clock is a
    round trip, so a limiter that creates a missing bucket outside a lock lets many
    threads in."""
    with _TimeModuleWatch() as watch:
        limiter = RateLimiter(capacity, rate, clock)
        grants, problems = [], []
        stuck = yields = 0
        for r in range(rounds):
            key = f"client-{r}"
            barrier = threading.Barrier(n_threads)
            got = []

            def body(progress):
                barrier.wait()
                mine = 0
                for _ in range(per_thread):
                    if limiter.try_acquire(key) is True:
                        mine += 1
                    progress[0] += 1
                got.append(mine)

            failures, stuck_now, y = _run_threads([body] * n_threads, seed)
            problems += failures
            stuck += stuck_now
            yields += y
            grants.append(sum(got))
            if stuck_now:
                break
    return {"grants": grants, "failures": problems, "stuck": stuck, "yields": yields,
            "time_module_calls": watch.calls}


def time_module_use(capacity, rate):
    """One bucket and one limiter driven through every method on a plain fake clock,
    counting readings of the time module's clocks."""
    now = [10.0]
    clock = lambda: now[0]  # noqa: E731
    with _TimeModuleWatch() as watch:
        b = TokenBucket(capacity, rate, clock)
        b.try_acquire()
        now[0] += 0.5
        b.available()
        b.wait_time()
        limiter = RateLimiter(capacity, rate, clock)
        limiter.try_acquire("k")
        now[0] += 0.5
        limiter.try_acquire("k")
    return watch.calls


def replay(capacity, rate, start, requests):
    """try_acquire(n) at each (time, n) of `requests`, on a clock set to that time; the
    decisions in order. Hundreds of requests: a round trip to the judge per clock
    reading would take seconds, so this clock lives here."""
    now = [start]
    b = TokenBucket(capacity, rate, lambda: now[0])
    decisions = []
    for t, n in requests:
        now[0] = t
        decisions.append(b.try_acquire(n))
    return decisions
