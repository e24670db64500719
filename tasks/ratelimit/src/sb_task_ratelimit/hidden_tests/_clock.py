"""Injected clocks the tests move by hand. They stay in the judge: every reading the
solution takes is a call here, recorded."""


class FakeClock:
    def __init__(self, start=1000.0):
        self.now = start
        self.readings = []

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
