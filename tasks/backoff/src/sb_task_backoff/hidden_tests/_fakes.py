"""A fake clock and sleep, a scripted service and fake random sources. They stay in the
judge: the solution calls them through the wire, so every call time, sleep and draw
recorded here is the judge's own record.

The solution is handed facades (`sb.judge.facade`), never the fakes themselves: through the wire
the worker may call any public method and read any public attribute of an object the
judge hands over, so a fake handed over as itself would show the solution the test's
controls and records (the clock's `now` and `sleeps`, the script's steps and its clock,
the random source's `u`). It gets what the prompt promises: `clock()`, `sleep(seconds)`
(which legitimately moves the fake clock on), `rng.random()` (a draw), and the service's
call (through the probe)."""
import random


class FakeClock:
    def __init__(self, start=500.0):
        self.now = start
        self.sleeps = []
        self.reads = 0

    def __call__(self):
        self.reads += 1
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


class Script:
    """What the service does on each call, as data the probe turns into a return or an
    exception of the solution's classes: ("return", value), ("transient", message,
    retry_after), ("subclass", message, retry_after) for a TransientError subclass,
    ("lookalike", message, retry_after) for a non-TransientError carrying retry_after,
    or (builtin exception name, message). After the script it keeps doing `then`.
    Each call takes `latency` seconds of fake time (a number, or one per call), and its
    start time is recorded. Past `hard_limit` calls it raises a non-retryable error."""

    def __init__(self, clock, steps, then=None, latency=0.0, hard_limit=200):
        self.clock = clock
        self.steps = list(steps)
        self.then = then
        self.latency = latency
        self.hard_limit = hard_limit
        self.call_times = []

    def __call__(self):
        i = len(self.call_times)
        self.call_times.append(self.clock.now)
        if i >= self.hard_limit:
            return ("stop", f"called {i + 1} times")
        latency = self.latency[i] if isinstance(self.latency, list) else self.latency
        self.clock.now += latency
        step = self.steps[i] if i < len(self.steps) else self.then
        assert step is not None, "the script ran out: the test did not expect this call"
        return step

    @property
    def gaps(self):
        t = self.call_times
        return [b - a for a, b in zip(t, t[1:])]


def transient(message="503", retry_after=None):
    return ("transient", message, retry_after)


class ConstantRandom:
    """Stands in for random.Random: random() always returns u (it has nothing else)."""

    def __init__(self, u):
        self.u = u
        self.draws = 0

    def random(self):
        self.draws += 1
        return self.u


class SeededRandom:
    """random.Random(seed)'s random(), counted; it has no other method."""

    def __init__(self, seed):
        self._rng = random.Random(seed)
        self.draws = 0

    def random(self):
        self.draws += 1
        return self._rng.random()
