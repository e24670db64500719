import random
import sys
import threading
import time
from fractions import Fraction

import pytest

from bucket import RateLimiter, TokenBucket

from _clock import FakeClock

# Times and rates below are chosen exactly representable in binary floating point
# (multiples of 1/64, rates 2, 4, 0.5), so refill arithmetic is exact and equality
# is the right comparison unless a test says otherwise.


def drain(bucket):
    n = 0
    while bucket.try_acquire():
        n += 1
    return n


def test_starts_full_and_allows_a_burst_of_capacity():
    clock = FakeClock()
    bucket = TokenBucket(capacity=5, rate=1, clock=clock)
    assert [bucket.try_acquire() for _ in range(7)] == [True] * 5 + [False] * 2
    assert bucket.available() == 0


def test_refills_at_the_rate():
    clock = FakeClock()
    bucket = TokenBucket(capacity=10, rate=2, clock=clock)
    drain(bucket)
    clock.advance(1.5)
    assert bucket.available() == 3
    assert drain(bucket) == 3


def test_fractional_refill_accumulates():
    clock = FakeClock()
    bucket = TokenBucket(capacity=10, rate=2, clock=clock)
    drain(bucket)
    clock.advance(0.25)
    assert bucket.try_acquire() is False
    assert bucket.available() == 0.5
    clock.advance(0.25)
    assert bucket.try_acquire() is True
    for _ in range(3):
        clock.advance(0.125)
        assert bucket.try_acquire() is False
    clock.advance(0.125)
    assert bucket.try_acquire() is True


def test_never_exceeds_capacity_after_idle():
    clock = FakeClock()
    bucket = TokenBucket(capacity=4, rate=2, clock=clock)
    drain(bucket)
    clock.advance(3600)
    assert bucket.available() == 4
    assert drain(bucket) == 4
    clock.advance(3600)
    assert drain(bucket) == 4


def test_refused_request_consumes_nothing():
    clock = FakeClock()
    bucket = TokenBucket(capacity=4, rate=2, clock=clock)
    assert bucket.try_acquire(3) is True
    assert bucket.try_acquire(2) is False
    assert bucket.available() == 1
    clock.advance(0.5)
    assert bucket.try_acquire(2) is True
    assert bucket.available() == 0


def test_request_larger_than_capacity_is_an_error():
    bucket = TokenBucket(capacity=4, rate=2, clock=FakeClock())
    with pytest.raises(ValueError):
        bucket.try_acquire(5)
    with pytest.raises(ValueError):
        bucket.wait_time(5)
    with pytest.raises(ValueError):
        bucket.try_acquire(0)
    assert bucket.available() == 4


def test_wait_time_is_exact():
    clock = FakeClock()
    bucket = TokenBucket(capacity=8, rate=4, clock=clock)
    assert bucket.wait_time() == 0
    assert bucket.wait_time(8) == 0
    drain(bucket)
    assert bucket.wait_time() == 0.25
    clock.advance(0.125)
    assert bucket.wait_time(3) == 0.625
    clock.advance(0.625)
    assert bucket.wait_time(3) == 0
    assert bucket.try_acquire(3) is True


def test_clock_stepping_back_adds_and_removes_nothing():
    clock = FakeClock(start=100.0)
    bucket = TokenBucket(capacity=4, rate=2, clock=clock)
    drain(bucket)
    clock.advance(0.5)
    assert bucket.available() == 1
    clock.now = 90.0
    assert bucket.available() == 1
    assert bucket.try_acquire() is True
    clock.now = 99.0
    assert bucket.available() == 0
    clock.now = 100.75
    assert bucket.available() == 0.5


def _exact_model(capacity, rate, start, requests):
    """Independent model in exact rational arithmetic; also returns the smallest
    distance between the token count and a request's size, to prove that the
    float implementation is never within rounding error of a decision."""
    tokens, last, out, margin = Fraction(capacity), Fraction(start), [], Fraction(10**9)
    for t, n in requests:
        t = Fraction(t)
        tokens = min(Fraction(capacity), tokens + (t - last) * Fraction(rate))
        last = t
        margin = min(margin, abs(tokens - n))
        if tokens >= n:
            tokens -= n
            out.append(True)
        else:
            out.append(False)
    return out, margin


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_traffic_matches_exact_model(seed):
    rng = random.Random(seed)
    capacity, rate = rng.choice([(5, 1.5), (10, 3.3), (3, 0.7)])
    clock = FakeClock(start=50.0)
    requests, t = [], 50.0
    for _ in range(400):
        t += rng.expovariate(rate * 1.5)  # demand 1.5x the rate: the limit binds
        requests.append((t, rng.choice([1, 1, 1, 2])))
    want, margin = _exact_model(capacity, rate, 50.0, requests)
    # Float and exact arithmetic differ by far less than 1e-6 over these sums, so a
    # margin above that means no decision depends on rounding.
    assert margin > 1e-6
    bucket = TokenBucket(capacity=capacity, rate=rate, clock=clock)
    got = []
    for t, n in requests:
        clock.now = t
        got.append(bucket.try_acquire(n))
    assert got == want
    assert 0 < sum(want) < len(want)


# Thread safety of one bucket. CPython switches threads only at certain
# instructions (calls, loop jumps), so how often an unguarded bucket is caught here
# depends on where its code happens to call something: this test catches many such
# buckets but cannot promise to catch all of them. It lowers the switch interval to
# 1 microsecond, ticks the clock on every call so that every request runs the refill
# arithmetic, and races 50 threads for the same tokens over 20 rounds. A correct
# bucket grants exactly `capacity` per round however the threads interleave. The
# ticks add 1e-9 s x 1e-3 tokens/s per call, about 1e-9 tokens a round: never a token.
# The deterministic thread-safety check is the keyed limiter test below.
@pytest.fixture
def fast_switching():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


class TickingClock(FakeClock):
    def __init__(self, start=1000.0, tick=1e-9):
        super().__init__(start)
        self._tick = tick
        self._lock = threading.Lock()

    def __call__(self):
        with self._lock:
            self.now += self._tick
            return self.now


def _race(bucket, n_threads, attempts):
    barrier = threading.Barrier(n_threads)
    grants, errors = [], []

    def worker():
        try:
            barrier.wait()
            mine = 0
            for _ in range(attempts):
                if bucket.try_acquire():
                    mine += 1
            grants.append(mine)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, repr(errors[0])
    return sum(grants)


def test_threads_never_overdraw(fast_switching):
    capacity, rate = 100, 1e-3
    clock = TickingClock()
    bucket = TokenBucket(capacity=capacity, rate=rate, clock=clock)
    for round_ in range(20):
        granted = _race(bucket, n_threads=50, attempts=4)
        assert granted == capacity, f"round {round_}: {granted} grants from {capacity} tokens"
        clock.advance(capacity / rate)  # refills the bucket completely


def test_limiter_keys_are_independent():
    clock = FakeClock()
    limiter = RateLimiter(capacity=2, rate=1, clock=clock)
    assert [limiter.try_acquire("alice") for _ in range(3)] == [True, True, False]
    assert [limiter.try_acquire("bob") for _ in range(3)] == [True, True, False]
    clock.advance(1)
    assert limiter.try_acquire("alice") is True
    assert limiter.try_acquire("alice") is False
    assert limiter.try_acquire("carol", 2) is True


class SlowClock(FakeClock):
    """A clock whose reading takes a moment, as a system call may.

    This is the deliberate yield point: the reading thread blocks in sleep, so on
    one CPU or many the other threads released by the barrier run meanwhile. A
    limiter that checks "is there a bucket for this key?" and then creates one
    (which reads the clock) without holding a lock lets every one of the 50 threads
    see the key missing during the first thread's clock reading, and each of them
    gets a full bucket of its own: far more grants than the capacity, on every
    round. No assertion depends on how long the sleep lasts.
    """

    def __call__(self):
        time.sleep(1e-4)
        return self.now


def test_limiter_first_use_of_a_key_from_many_threads():
    capacity = 10
    limiter = RateLimiter(capacity=capacity, rate=1, clock=SlowClock())
    for round_ in range(5):
        key = f"client-{round_}"
        barrier = threading.Barrier(50)
        grants, errors = [], []

        def worker():
            try:
                barrier.wait()
                grants.extend(limiter.try_acquire(key) for _ in range(2))
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(50)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors, repr(errors[0])
        assert sum(grants) == capacity, f"{key}: {sum(grants)} grants from {capacity} tokens"
