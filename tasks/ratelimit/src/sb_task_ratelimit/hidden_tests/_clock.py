"""Injected clocks the tests move by hand. They stay in the judge: every reading the
solution takes is a call here, recorded.

The solution is handed `clock.reader`, never the clock itself: the prompt promises it
`clock()` and nothing else, and the clock's controls (`advance`, `now`, `readings`,
`moving`, ...) are the test's. Through the wire the worker may call any public method of
an object the judge hands over, so a clock handed over as itself could be moved (or its
record read) by the solution. `sb.judge.facade(clock, call=True)` is that reader: calling it
reads the time (recorded), and it has no other public attribute."""

from sb.judge import facade


class FakeClock:
    def __init__(self, start=1000.0):
        self.now = start
        self.readings = []
        self.reader = facade(self, call=True)

    def __call__(self):
        self.readings.append(self.now)
        return self.now

    def advance(self, seconds):
        self.now += seconds


class MovingClock(FakeClock):
    """A clock that moves while it is read: each reading returns the time and then time
    moves on by `tick` (reading a real clock takes a moment). While `moving` is False
    it stands still. `readings_since(i)` are the values returned from reading i on."""

    def __init__(self, start=1000.0, tick=0.0):
        super().__init__(start)
        self.tick = tick
        self.moving = False

    def __call__(self):
        value = super().__call__()
        if self.moving:
            self.now += self.tick
        return value

    def mark(self):
        return len(self.readings)

    def readings_since(self, mark):
        return self.readings[mark:]


class SlowClock:
    """The race tests' clock, in the judge. The probe's threads in the solution's process
    read it through `reader`, so every reading is a round trip over the wire that this
    side answers; each answer is held for a seeded, jittered pause first ("it may take a
    moment to answer"), and time moves on by `tick` per reading. A thread waiting for
    the time is blocked with the GIL free, however the solution has set up its own
    process (no tracer, no preemption), so every other released thread runs while it
    waits: a limiter that finds no bucket for a key and creates one that reads the clock
    is entered by every other thread before it stores it.

    Worker readings are served one at a time on the judge's thread, each after a wait of
    up to the wire's 50 ms poll, so a bucket that holds its lock while it reads the clock
    waits for them in turn: only the limiter race (a few hundred readings) uses it."""

    # Worker calls are answered one after another on the judge's thread: these pauses
    # add up to well under a second per test (a few hundred readings).
    PAUSES_S = (0.0, 0.0001, 0.0003, 0.001)

    def __init__(self, start, tick, seed):
        import random
        import threading

        self.now = start
        self.tick = tick
        self.readings = 0
        self._rng = random.Random(f"slow-clock/{seed}")
        self._lock = threading.Lock()
        self.reader = facade(self, call=True)

    def __call__(self):
        import time

        with self._lock:
            pause = self._rng.choice(self.PAUSES_S)
        time.sleep(pause)
        with self._lock:
            self.readings += 1
            self.now += self.tick
            return self.now

    def advance(self, seconds):
        with self._lock:
            self.now += seconds

