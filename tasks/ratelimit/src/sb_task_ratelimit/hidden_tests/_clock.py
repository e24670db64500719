"""Injected clocks the tests move by hand. They stay in the judge: every reading the
solution takes is a call here, recorded.

The solution is handed `clock.reader`, never the clock itself: the prompt promises it
`clock()` and nothing else, and the clock's controls (`advance`, `now`, `readings`,
`moving`, ...) are the test's. Through the wire the worker may call any public method of
an object the judge hands over, so a clock handed over as itself could be moved (or its
record read) by the solution."""


class ClockReader:
    """The clock as the solution sees it: calling it reads the time (recorded), and it
    has no other public attribute."""

    __slots__ = ("_clock",)

    def __init__(self, clock):
        self._clock = clock

    def __call__(self):
        return self._clock()


class FakeClock:
    def __init__(self, start=1000.0):
        self.now = start
        self.readings = []
        self.reader = ClockReader(self)

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
