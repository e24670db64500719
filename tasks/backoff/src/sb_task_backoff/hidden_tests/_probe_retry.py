"""Runs in the solution's process: raises the solution's own exception classes for a
scripted service, and reports what call_with_retry did with them.

Exceptions of the solution's classes cannot cross to the judge as themselves (they
arrive as look-alike classes), so the service that raises them lives here. Which
outcome each call has comes from the judge: `step()` is the judge's script, and the
clock, sleep and rng passed in are the judge's fakes, so the judge keeps its own record
of every call time, sleep and draw. This file returns observations only: what was
returned or raised, and identities (is the raised exception the very object the
service raised, is its cause the last TransientError). No expected value lives here.
"""

import time

from retry import RetriesExhausted, TransientError, call_with_retry


class RateLimited(TransientError):
    """A subclass of TransientError, as a client library would define one."""


class LooksTransient(Exception):
    """Not a TransientError, but it carries a retry_after as if it were."""

    def __init__(self, message="", retry_after=None):
        super().__init__(message)
        self.retry_after = retry_after


class TooManyCalls(Exception):
    """Raised when the judge's script says the caller will not stop: not retryable."""


_ERRORS = {"ValueError": ValueError, "KeyError": KeyError, "RuntimeError": RuntimeError,
           "ConnectionError": ConnectionError, "TimeoutError": TimeoutError}


class _Service:
    def __init__(self, step):
        self._step = step
        self.raised = []
        self.returned = []

    def __call__(self):
        kind, *rest = self._step()
        if kind == "return":
            value = rest[0]
            self.returned.append(value)
            return value
        if kind == "transient":
            exc = TransientError(rest[0], retry_after=rest[1])
        elif kind == "subclass":
            exc = RateLimited(rest[0], retry_after=rest[1])
        elif kind == "lookalike":
            exc = LooksTransient(rest[0], retry_after=rest[1])
        elif kind == "stop":
            exc = TooManyCalls(rest[0])
        else:
            exc = _ERRORS[kind](rest[0])
        self.raised.append(exc)
        raise exc


class _TimeModuleWatch:
    """Counts calls to the time module's clocks and sleep while the retry runs (the
    solution is to use only the injected ones)."""

    NAMES = ("sleep", "time", "monotonic", "perf_counter", "time_ns", "monotonic_ns")

    def __enter__(self):
        self.calls = {}
        self._saved = {name: getattr(time, name) for name in self.NAMES}
        for name, real in self._saved.items():
            setattr(time, name, self._counting(name, real))
        return self

    def _counting(self, name, real):
        def counted(*args):
            self.calls[name] = self.calls.get(name, 0) + 1
            if name == "sleep":
                return None  # never really wait: the test reports the call instead
            return real(*args)
        return counted

    def __exit__(self, *exc_info):
        for name, real in self._saved.items():
            setattr(time, name, real)
        return False


def _index(obj, objects):
    for i, candidate in enumerate(objects):
        if obj is candidate:
            return i
    return None


def _value(v):
    return v if v is None or isinstance(v, (bool, int, float, str)) else repr(v)


def run(step, clock, sleep, rng, policy):
    """call_with_retry(service, clock=clock, sleep=sleep, rng=rng, **policy), observed."""
    service = _Service(step)
    seen = {}
    with _TimeModuleWatch() as watch:
        try:
            value = call_with_retry(service, clock=clock, sleep=sleep, rng=rng, **policy)
        except RetriesExhausted as exc:
            attempts = getattr(exc, "attempts", None)
            seen.update(outcome="raised", type="RetriesExhausted", attempts=_value(attempts),
                        attempts_type=type(attempts).__name__,
                        cause_index=_index(exc.__cause__, service.raised),
                        raised_index=_index(exc, service.raised))
        except BaseException as exc:  # whatever it is, the test decides
            seen.update(outcome="raised", type=type(exc).__name__, message=str(exc),
                        raised_index=_index(exc, service.raised))
        else:
            seen.update(outcome="returned", value=_value(value),
                        is_fn_result=bool(service.returned) and value is service.returned[-1])
    seen.update(calls=len(service.raised) + len(service.returned), raised=len(service.raised),
                time_module_calls=watch.calls)
    return seen


class _LocalClock:
    def __init__(self, start):
        self.now = start
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


class _LocalRandom:
    def __init__(self, u):
        self.u = u
        self.draws = 0

    def random(self):
        self.draws += 1
        return self.u


def run_always_failing_locally(n_calls_allowed, start, u, policy):
    """Thousands of attempts: a round trip to the judge per call would take seconds, so
    this run keeps clock, sleep, rng and service here and reports the sleeps."""
    clock = _LocalClock(start)
    rng = _LocalRandom(u)
    calls = []

    def service():
        calls.append(clock.now)
        if len(calls) > n_calls_allowed:
            raise TooManyCalls(f"{len(calls)} calls")
        raise TransientError("503")

    seen = {}
    with _TimeModuleWatch() as watch:
        try:
            call_with_retry(service, clock=clock, sleep=clock.sleep, rng=rng, **policy)
            seen["outcome"] = "returned"
        except RetriesExhausted as exc:
            attempts = getattr(exc, "attempts", None)
            seen.update(outcome="raised", type="RetriesExhausted", attempts=_value(attempts),
                        attempts_type=type(attempts).__name__)
        except BaseException as exc:
            seen.update(outcome="raised", type=type(exc).__name__, message=str(exc)[:300])
    seen.update(calls=len(calls), sleeps=[float(s) for s in clock.sleeps], draws=rng.draws,
                time_module_calls=watch.calls)
    return seen
