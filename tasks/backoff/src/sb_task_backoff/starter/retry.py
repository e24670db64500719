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


def call_with_retry(fn, *, max_attempts, base_delay, max_delay, clock, sleep, rng, timeout=None):
    raise NotImplementedError
