"""Runs in the solution's process: real threads racing for one bucket's tokens, and
two calls run step by step in every order of two stops (interleave, "races held open"
below: a race entered by construction).

The judge chooses the capacity, the rate, the number of threads and rounds; this file
runs them and returns how many tokens were granted in each round, what available()
reported meanwhile, and anything that raised or stopped making progress. No expected
value and no oracle lives here: the judge compares the counts with the capacity.

Why an unguarded bucket or limiter loses the 50-thread race here on practically every round,
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

import dis
import random
import sys
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

    def __init__(self, start, tick, pause=True):
        self.now = start
        self._tick = tick
        self._pause = pause
        self._lock = threading.Lock()

    def __call__(self):
        if self._pause:
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


# ------------------------------------------------------------------ races held open
#
# Two threads call the solution, and the probe decides, step by step, which of them
# runs: a step ends at each position of the solution's code, that is each new line of
# bucket.py and each write to shared state (an attribute, an item, a global or a closure
# cell). A schedule (x, y) lets the first thread pass x positions and stops it there;
# lets the second pass y positions (or finish) and stops it; then runs the first to its
# end, then the second. Every x and y is tried, each on a fresh bucket that holds one
# token, so each check-then-take, read-then-write-back and get-or-create that no lock
# guards is entered at each of its steps by the other thread's code: a wrong solution
# grants two tokens in some round on every run, by construction. A thread that cannot
# go on (it waits for a lock the stopped one holds) is seen blocked, and the other one
# runs; a correct solution decides the same in every round.
#
# Blocked means: the thread made no step and its kernel state was "not runnable" in
# every sample for BLOCKED_SAMPLES polls in a row (Linux /proc); where /proc cannot be
# read, no step for FALLBACK_BLOCKED_S. Neither is a tolerance: a wrong call that should
# have run is only run later, in the same round, and no verdict reads a time.

POLL_S = 0.0005
BLOCKED_SAMPLES = 8
FALLBACK_BLOCKED_S = 0.05
# Bounds for a solution that spins (a busy-wait passes positions forever): a thread
# let run to its end that passes SPIN_POSITIONS without finishing is waiting for the
# other, as if blocked; a schedule stops at MAX_POSITIONS, a sweep at MAX_ROUNDS.
SPIN_POSITIONS = 1000
MAX_POSITIONS = 200
MAX_ROUNDS = 2000
_WRITES = {dis.opmap[name] for name in ("STORE_ATTR", "STORE_SUBSCR", "STORE_GLOBAL", "STORE_DEREF",
                                       "DELETE_ATTR", "DELETE_SUBSCR", "DELETE_GLOBAL", "DELETE_DEREF")}
_write_offsets = {}


def _writes(code):
    offsets = _write_offsets.get(code)
    if offsets is None:
        offsets = _write_offsets[code] = {i.offset for i in dis.get_instructions(code) if i.opcode in _WRITES}
    return offsets


class _Stepper:
    """One thread of a schedule: it runs `op` and stops before its position
    `allowed + 1` until the controller allows more (`allowed` None: no stop)."""

    def __init__(self, cond, op, name):
        self._cond, self._op, self._file = cond, op, bucket.__file__
        self.allowed, self.passed, self.steps = 0, 0, 0
        self.paused = self.done = False
        self.result = self.error = self.native_id = None
        self.thread = threading.Thread(target=self._body, name=name, daemon=True)

    def _body(self):
        self.native_id = threading.get_native_id()
        sys.settrace(self._trace)
        try:
            self.result = self._op()
        except BaseException as exc:  # reported to the judge
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            sys.settrace(None)
            with self._cond:
                self.done = True
                self._cond.notify_all()

    def _trace(self, frame, event, arg):
        if frame.f_code.co_filename != self._file:
            return None
        frame.f_trace_opcodes = True
        return self._local

    def _local(self, frame, event, arg):
        self.steps += 1
        if event == "line" or (event == "opcode" and frame.f_lasti in _writes(frame.f_code)):
            with self._cond:
                self.passed += 1
                while self.allowed is not None and self.passed > self.allowed:
                    self.paused = True
                    self._cond.notify_all()
                    self._cond.wait()
                self.paused = False
        return self._local

    def stopped(self):
        return self.paused and self.allowed is not None and self.passed > self.allowed


def _kernel_state(native_id):
    try:
        with open(f"/proc/self/task/{native_id}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _advance(cond, s, allowed):
    """Let `s` pass `allowed` positions in all (None: all it has); return "paused",
    "done", "blocked" or "stuck" (no step for STALL_S)."""
    with cond:
        s.allowed = allowed
        cond.notify_all()
    quiet, steps, since, start = 0, s.steps, _monotonic(), s.passed
    while True:
        with cond:
            if s.done:
                return "done"
            if s.stopped():
                return "paused"
            if allowed is None and s.passed - start > SPIN_POSITIONS:
                return "blocked"
            cond.wait(POLL_S)
        state = _kernel_state(s.native_id)
        if s.steps != steps or state == "R":
            quiet, steps, since = 0, s.steps, _monotonic()
            continue
        quiet += 1
        waited = _monotonic() - since
        if (state is not None and quiet >= BLOCKED_SAMPLES) or (state is None and waited > FALLBACK_BLOCKED_S):
            with cond:
                if not (s.done or s.stopped()):
                    return "blocked"
        if waited > STALL_S:
            return "stuck"


def _finish(cond, first, second):
    """Run the first to its end, then the second; whichever waits on the other lets it
    run. False when both are blocked or one is stuck (a deadlock)."""
    while not (first.done and second.done):
        for s in (first, second):
            if not s.done:
                outcome = _advance(cond, s, None)
                if outcome == "stuck":
                    return False
                if outcome == "done":
                    break
        else:
            return False
    return True


def _one_schedule(target, ops, x, y):
    cond = threading.Condition()
    first, second = (_Stepper(cond, lambda op=op: op(target), f"step{i}") for i, op in enumerate(ops))
    for s in (first, second):
        s.thread.start()
    for s in (first, second):  # both stopped before their first position
        _advance(cond, s, 0)
    at = [_advance(cond, first, x), _advance(cond, second, y)]
    finished = "stuck" not in at and _finish(cond, first, second)
    return at, finished, first, second


def _observed(value):
    """A call's answer as data: a bool, an int or a float as it is (the judge checks the
    type), a list of answers item by item, anything else as its repr."""
    if type(value) is list:
        return [_observed(v) for v in value]
    return value if type(value) in (bool, float, int) else repr(value)


def interleave(scenario, seed):
    """Every schedule (x, y) of two calls, each on a fresh bucket (or limiter key) that
    holds one token: "take" is try_acquire() against try_acquire(); "read" is
    available() then wait_time() against try_acquire(); "first_use" is the limiter's
    try_acquire(key) against the same, for a key never used. Per schedule: what each
    call returned, then what three more try_acquire() calls returned (the tokens left)."""
    rounds = []
    with _TimeModuleWatch() as watch:
        x = 0
        while x <= MAX_POSITIONS and len(rounds) < MAX_ROUNDS:
            y = 0
            while y <= MAX_POSITIONS and len(rounds) < MAX_ROUNDS:
                target, ops, more = _scenario(scenario, seed, len(rounds))
                at, finished, first, second = _one_schedule(target, ops, x, y)
                rounds.append({"x": x, "y": y, "at": at, "finished": finished,
                               "first": _observed(first.result), "second": _observed(second.result),
                               "errors": [e for e in (first.error, second.error) if e],
                               "positions": [first.passed, second.passed],
                               "after": [_observed(more()) for _ in range(3)] if finished else []})
                if not finished or at[1] != "paused":
                    break
                y += 1
            if not finished or at[0] != "paused":
                break
            x += 1
    return {"rounds": rounds, "time_module_calls": watch.calls}


def _scenario(name, seed, i):
    clock = SlowTickingClock(1000.0 + i, 1e-9, pause=False)
    if name == "first_use":
        limiter, key = RateLimiter(1, 1e-3, clock), f"client-{seed}-{i}"
        take = lambda lim: lim.try_acquire(key)  # noqa: E731
        return limiter, (take, take), lambda: limiter.try_acquire(key)
    b = TokenBucket(1, 1e-3, clock)
    take = lambda bk: bk.try_acquire()  # noqa: E731
    if name == "take":
        return b, (take, take), b.try_acquire
    return b, ((lambda bk: [bk.available(), bk.wait_time()]), take), b.try_acquire
