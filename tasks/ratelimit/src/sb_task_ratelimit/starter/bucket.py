"""A thread-safe token bucket on an injected clock."""
import threading


class TokenBucket:
    def __init__(self, capacity, rate, clock):
        raise NotImplementedError

    def try_acquire(self, tokens=1):
        raise NotImplementedError

    def available(self):
        raise NotImplementedError

    def wait_time(self, tokens=1):
        raise NotImplementedError


class RateLimiter:
    def __init__(self, capacity, rate, clock):
        raise NotImplementedError

    def try_acquire(self, key, tokens=1):
        raise NotImplementedError
