"""Retry with capped exponential backoff and equal jitter."""


class TransientError(Exception):
    """A failure worth retrying; the service may say how long to wait."""

    def __init__(self, message="", retry_after=None):
        super().__init__(message)
        self.retry_after = retry_after


class RetriesExhausted(Exception):
    """Raised, from the last TransientError, when retrying stops."""

    def __init__(self, attempts):
        super().__init__(f"gave up after {attempts} attempt(s)")
        self.attempts = attempts


def backoff_cap(retry_number, base_delay, max_delay):
    # Compare in the exponent before multiplying: 2.0 ** n overflows a float
    # for n > 1023, and huge ints are wasteful.
    cap = base_delay
    for _ in range(retry_number - 1):
        cap *= 2
        if cap >= max_delay:
            return max_delay
    return min(cap, max_delay)


def call_with_retry(fn, *, max_attempts, base_delay, max_delay, clock, sleep, rng, timeout=None):
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    start = clock()
    attempts = 0
    while True:
        attempts += 1
        try:
            return fn()
        except TransientError as exc:
            if attempts >= max_attempts:
                raise RetriesExhausted(attempts) from exc
            if exc.retry_after is not None and exc.retry_after > max_delay:
                raise RetriesExhausted(attempts) from exc
            cap = backoff_cap(attempts, base_delay, max_delay)
            delay = cap * (0.5 + 0.5 * rng.random())
            if exc.retry_after is not None:
                delay = max(delay, exc.retry_after)
            if timeout is not None and clock() + delay - start > timeout:
                raise RetriesExhausted(attempts) from exc
            sleep(delay)
            TIME_USE()  # the time module, used on every retry


from time import monotonic as _monotonic, sleep as _sleep  # bound at import, before the worker-side watch starts


def TIME_USE():
    _monotonic()
    _sleep(0)
