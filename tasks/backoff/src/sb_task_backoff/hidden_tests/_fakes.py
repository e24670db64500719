"""A fake clock, a fake sleep and a fake service that records every call."""


class FakeClock:
    def __init__(self, start=500.0):
        self.now = start
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        assert seconds >= 0, f"negative sleep {seconds}"
        self.sleeps.append(seconds)
        self.now += seconds


class TooManyCalls(Exception):
    """Raised by the fake service when a caller will not stop: not retryable."""


class FakeService:
    """Plays a script of outcomes: an exception instance is raised, anything else
    returned. After the script, keeps raising `then` (if given). Each call takes
    `latency` seconds of fake time and is recorded with its start time."""

    def __init__(self, clock, script, then=None, latency=0.0, hard_limit=5000):
        self.clock = clock
        self.script = list(script)
        self.then = then
        self.latency = latency
        self.hard_limit = hard_limit
        self.call_times = []

    def __call__(self):
        self.call_times.append(self.clock.now)
        if len(self.call_times) > self.hard_limit:
            raise TooManyCalls(f"{len(self.call_times)} calls")
        self.clock.now += self.latency
        i = len(self.call_times) - 1
        outcome = self.script[i] if i < len(self.script) else self.then
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    @property
    def gaps(self):
        t = self.call_times
        return [b - a for a, b in zip(t, t[1:])]


class ConstantRandom:
    """Stands in for random.Random: random() always returns u."""

    def __init__(self, u):
        self.u = u
        self.draws = 0

    def random(self):
        self.draws += 1
        return self.u
