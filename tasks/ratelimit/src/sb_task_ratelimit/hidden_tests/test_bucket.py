"""A token bucket on an injected clock, graded in the judge.

Single-thread behaviour runs through the proxy with clocks that stay here (every
reading the solution takes is recorded here); the solution gets only each clock's
`reader`, so moving the clock stays the test's doing. Threads run next to the solution
through _probe_bucket, which returns grant counts; the judge compares them with the
capacity.

Two kinds of race test. Held open, by construction (test_*_stopped_at_any_step_*):
the probe runs two calls on a bucket (or a limiter key) that holds one token, step by
step (a step ends at each new line of bucket.py and before each write to an attribute,
item, global or closure cell), and tries every schedule of two stops: the first call
stopped before its x-th step while the second runs to its y-th, then each to its end.
So every check-then-take, refill-then-write-back and get-or-create that no lock guards
is entered by the other call between its two halves in some round, and a wrong
solution grants the one token twice on every run, whatever the OS does. Measured, 6
gradings each, on the race hand mutants and eleven more racy versions: each fails
these tests in every grading, but for the mutant that switches the probe's tracer off
(caught by the judge's clock, below).
Many threads at once (test_threads_never_overdraw, test_reading_the_balance_never_undoes_a_take,
test_limiter_first_use_of_a_key_from_many_threads): 50 threads per round, the probe's
clock sleeping in every reading and its tracer at every line and a seeded tenth of the
bytecodes, so those races are entered by chance on practically every round. The
limiter's reads the judge's clock, which nothing in the solution's process can quicken:
it still catches an unguarded get-or-create in a solution that switches the probe's
tracer off (the step-by-step schedules need that tracer too).

False-failure probability for a right answer: 0. A correct bucket grants exactly its
capacity under every interleaving, and stopping a thread between two steps is one of
the interleavings the OS could produce. A thread waiting for a lock the stopped one
holds is seen blocked (no step, and not runnable in the kernel for 8 polls in a row;
no step for 50 ms where /proc cannot be read) and the other runs: that only orders
the two calls, no assertion depends on timing, and the only time bound is the
deadlock detector (10 s without a step or a completed request, where a correct run
makes one every few milliseconds).
"""
import random
from fractions import Fraction

import pytest

from sb.judge import probe, solution_source
from bucket import RateLimiter, TokenBucket

from _clock import FakeClock, MovingClock, SlowClock
from sb.source_checks import module_uses

P = probe("_probe_bucket.py")

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
    bucket = TokenBucket(capacity=5, rate=1, clock=clock.reader)
    assert [bucket.try_acquire() for _ in range(7)] == [True] * 5 + [False] * 2
    assert bucket.available() == 0


def test_refills_at_the_rate():
    clock = FakeClock()
    bucket = TokenBucket(capacity=10, rate=2, clock=clock.reader)
    drain(bucket)
    clock.advance(1.5)
    assert bucket.available() == 3
    assert drain(bucket) == 3


def test_fractional_refill_accumulates():
    clock = FakeClock()
    bucket = TokenBucket(capacity=10, rate=2, clock=clock.reader)
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
    bucket = TokenBucket(capacity=4, rate=2, clock=clock.reader)
    drain(bucket)
    clock.advance(3600)
    assert bucket.available() == 4
    assert drain(bucket) == 4
    clock.advance(3600)
    assert drain(bucket) == 4


def test_refused_request_consumes_nothing():
    clock = FakeClock()
    bucket = TokenBucket(capacity=4, rate=2, clock=clock.reader)
    assert bucket.try_acquire(3) is True
    assert bucket.try_acquire(2) is False
    assert bucket.available() == 1
    clock.advance(0.5)
    assert bucket.try_acquire(2) is True
    assert bucket.available() == 0


def test_request_larger_than_capacity_is_an_error():
    bucket = TokenBucket(capacity=4, rate=2, clock=FakeClock().reader)
    with pytest.raises(ValueError):
        bucket.try_acquire(5)
    with pytest.raises(ValueError):
        bucket.wait_time(5)
    with pytest.raises(ValueError):
        bucket.try_acquire(0)
    assert bucket.available() == 4


def test_wait_time_is_exact():
    clock = FakeClock()
    bucket = TokenBucket(capacity=8, rate=4, clock=clock.reader)
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
    bucket = TokenBucket(capacity=4, rate=2, clock=clock.reader)
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
    requests, t = [], 50.0
    for _ in range(400):
        t += rng.expovariate(rate * 1.5)  # demand 1.5x the rate: the limit binds
        requests.append((t, rng.choice([1, 1, 1, 2])))
    want, margin = _exact_model(capacity, rate, 50.0, requests)
    # Float and exact arithmetic differ by far less than 1e-6 over these sums, so a
    # margin above that means no decision depends on rounding.
    assert margin > 1e-6
    got = P.replay(capacity, rate, 50.0, requests)
    assert got == want
    assert 0 < sum(want) < len(want)


def test_balance_and_wait_time_are_floats():
    clock = FakeClock()
    bucket = TokenBucket(capacity=5, rate=1, clock=clock.reader)
    values = [bucket.available(), bucket.wait_time()]
    bucket.try_acquire(5)
    values += [bucket.available(), bucket.wait_time(2)]
    assert [type(v) for v in values] == [float] * 4, values
    assert values == [5.0, 0.0, 0.0, 2.0]


def test_fractional_requests():
    clock = FakeClock()
    bucket = TokenBucket(capacity=2, rate=0.5, clock=clock.reader)
    assert bucket.try_acquire(1.5) is True
    assert bucket.try_acquire(0.75) is False
    assert bucket.available() == 0.5
    assert bucket.wait_time(0.75) == 0.5
    assert bucket.try_acquire(0.5) is True
    assert bucket.wait_time(2) == 4.0
    clock.advance(4.0)
    assert bucket.try_acquire(2) is True


def test_small_capacities_work():
    """Any positive capacity is a bucket: one token, or half of one."""
    clock = FakeClock()
    one = TokenBucket(capacity=1, rate=4, clock=clock.reader)
    half = TokenBucket(capacity=0.5, rate=1, clock=clock.reader)
    assert one.try_acquire() is True and one.try_acquire() is False
    assert half.try_acquire(0.5) is True and half.try_acquire(0.25) is False
    with pytest.raises(ValueError):
        half.try_acquire(1)
    clock.advance(0.25)
    assert one.try_acquire() is True
    assert half.available() == 0.25


def test_wait_time_is_zero_whenever_the_balance_covers_the_request():
    clock = FakeClock(start=100.0)
    bucket = TokenBucket(capacity=4, rate=2, clock=clock.reader)
    assert bucket.try_acquire(3.5) is True
    assert bucket.wait_time(0.25) == 0.0, "a balance of 0.5 covers 0.25 now: never a negative wait"
    assert bucket.wait_time(0.5) == 0.0
    clock.now = 90.0  # behind the latest time seen, but the balance already suffices
    assert bucket.wait_time(0.5) == 0.0
    assert bucket.wait_time(1) == 10.25


def test_invalid_requests_raise_and_take_nothing():
    clock = FakeClock()
    bucket = TokenBucket(capacity=4, rate=2, clock=clock.reader)
    assert bucket.try_acquire(1) is True
    for bad in (-1, -0.5, 0, 0.0, 4.000001, 1e9):
        with pytest.raises(ValueError):
            bucket.try_acquire(bad)
        with pytest.raises(ValueError):
            bucket.wait_time(bad)
    assert bucket.available() == 3
    assert bucket.try_acquire(3) is True
    clock.advance(2.0)
    assert bucket.try_acquire(4) is True, "a request for exactly the capacity is valid"


def test_wait_time_after_the_clock_stepped_back():
    """Behind the latest time seen, refilling waits for the clock to catch up first."""
    clock = FakeClock(start=100.0)
    bucket = TokenBucket(capacity=4, rate=2, clock=clock.reader)
    drain(bucket)
    clock.now = 90.0
    assert bucket.wait_time(1) == 10.5
    clock.now = 99.5
    assert bucket.wait_time(1) == 1.0
    clock.now = 100.25
    assert bucket.wait_time(1) == 0.25
    clock.now = 100.5
    assert bucket.wait_time(1) == 0.0 and bucket.try_acquire(1) is True


def test_a_clock_that_moves_while_it_is_read_loses_no_time():
    """Each reading takes 1/8 s. Every moment after the bucket was drained must be
    refilled exactly once: the balance is rate * (r - t0) - granted for the reading r
    the bucket's last refill used (one of those taken during the final available())."""
    clock = MovingClock(start=200.0, tick=0.125)
    rate = 2
    bucket = TokenBucket(capacity=50, rate=rate, clock=clock.reader)
    assert drain(bucket) == 50
    t0 = clock.now
    clock.moving = True
    granted = 0
    for i in range(40):
        granted += bucket.try_acquire(1 if i % 3 else 2) * (1 if i % 3 else 2)
    mark = clock.mark()
    balance = bucket.available()
    last_readings = clock.readings_since(mark)
    assert last_readings, "available() must read the clock"
    # Multiples of 1/8 s times rate 2, minus whole tokens: all exact in binary.
    candidates = [rate * (r - t0) - granted for r in last_readings]
    assert balance in candidates, (balance, candidates)
    assert 0 < granted < 40, "the test must both grant and refuse while the clock moves"


def _check_race(seen):
    assert seen["failures"] == [], seen["failures"]
    assert seen["stuck"] == 0, "threads made no progress for 10 s: deadlocked"
    assert seen["time_module_calls"] == {}, seen["time_module_calls"]
    assert seen["yields"] > 0, "the tracer saw none of the solution's code run"


def test_threads_never_overdraw():
    """Each round 50 threads race for 100 tokens, 3 attempts each; then a full refill.
    Measured on the unguarded mutants: 110 to 150 grants in every round."""
    capacity, rate = 100, 1e-3
    seen = P.race_bucket(capacity, rate, 50, 3, 0, 0, 2, 1)
    _check_race(seen)
    # The clock ticks 1e-9 s per reading: at 1e-3 tokens/s that refills about 1e-9
    # tokens a round, never a whole token, so each round grants exactly the capacity.
    assert seen["grants"] == [capacity] * 2, seen["grants"]


def test_reading_the_balance_never_undoes_a_take():
    """10 threads take (80 attempts for 40 tokens) while 30 threads read available().
    A read that refills without the lock writes back a balance from before a take.
    Measured on that mutant: 2 to 4 extra grants in every round."""
    capacity, rate = 40, 1e-3
    seen = P.race_bucket(capacity, rate, 10, 8, 30, 4, 3, 2)
    _check_race(seen)
    assert seen["grants"] == [capacity] * 3, seen["grants"]
    for round_balances in seen["balances"]:
        assert len(round_balances) == 120
        assert all(isinstance(b, float) and 0 <= b <= capacity for b in round_balances), round_balances


def _every_schedule(scenario):
    """Every schedule of two calls on a bucket (or a limiter key) holding one token,
    run by the probe step by step (see its "races held open"): what each round gave."""
    seen = P.interleave(scenario, 7)
    rounds = seen["rounds"]
    assert seen["time_module_calls"] == {}, seen["time_module_calls"]
    assert len(rounds) > 1 and max(r["positions"][0] for r in rounds) > 1, \
        "the probe saw none of the solution's code run"
    for r in rounds:
        assert r["errors"] == [], r
        assert r["finished"], f"the two calls made no progress for 10 s: deadlocked ({r})"
    return rounds


def _grants(round_, calls):
    values = [round_[c] for c in calls] + round_["after"]
    assert all(type(v) is bool for v in values), round_
    return sum(values)


def test_a_take_stopped_at_any_step_never_grants_twice():
    """try_acquire() against try_acquire() on a bucket of one token, the first stopped
    before each step of its code in turn while the second runs to each of its steps:
    a check-then-take or a refill's write-back that no lock guards is entered at every
    step, so an unguarded bucket grants the one token twice in some round, every run."""
    for r in _every_schedule("take"):
        assert _grants(r, ["first", "second"]) == 1, r


def test_a_read_stopped_at_any_step_never_undoes_a_take():
    """available() then wait_time() against try_acquire(), interleaved at every step:
    a read that refills without the bucket's lock writes back the balance from before
    the take, and the token is granted again."""
    for r in _every_schedule("read"):
        assert _grants(r, ["second"]) == 1, r
        balance, wait = r["first"]
        assert type(balance) is float and 0 <= balance <= 1, r
        assert type(wait) is float and wait >= 0, r


def test_first_use_stopped_at_any_step_makes_one_bucket():
    """Two first requests for a new key of a limiter of capacity 1, interleaved at every
    step: a get-or-create that no lock guards makes two full buckets in some round."""
    for r in _every_schedule("first_use"):
        assert _grants(r, ["first", "second"]) == 1, r


def test_limiter_keys_are_independent():
    clock = FakeClock()
    limiter = RateLimiter(capacity=2, rate=1, clock=clock.reader)
    assert [limiter.try_acquire("alice") for _ in range(3)] == [True, True, False]
    assert [limiter.try_acquire("bob") for _ in range(3)] == [True, True, False]
    clock.advance(1)
    assert limiter.try_acquire("alice") is True
    assert limiter.try_acquire("alice") is False
    assert limiter.try_acquire("carol", 2) is True


def test_limiter_creates_each_bucket_full_at_its_first_request():
    """A key first seen long after the limiter was made gets exactly a full bucket,
    and a refill that starts at its own first request."""
    clock = FakeClock(start=0.0)
    limiter = RateLimiter(capacity=3, rate=0.5, clock=clock.reader)
    assert limiter.try_acquire("early") is True
    clock.advance(500.0)
    assert [limiter.try_acquire("late") for _ in range(4)] == [True, True, True, False]
    clock.advance(1.5)
    assert limiter.try_acquire("late") is False
    clock.advance(0.5)
    assert limiter.try_acquire("late") is True
    assert limiter.try_acquire("late", 0.5) is False


def test_limiter_requests_are_validated_like_the_bucket():
    clock = FakeClock()
    limiter = RateLimiter(capacity=2, rate=1, clock=clock.reader)
    for bad in (3, 0, -1, 2.0000001):
        with pytest.raises(ValueError):
            limiter.try_acquire("k", bad)
    assert [limiter.try_acquire("k") for _ in range(3)] == [True, True, False]


def test_limiter_first_use_of_a_key_from_many_threads():
    """Every round, 50 threads make the first requests for a new key at once.
    Measured on the unguarded get-or-create: 55 to 65 grants of 10 in every round."""
    capacity = 10
    clock = SlowClock(500.0, 0.0, seed=3)
    seen = P.race_limiter(clock.reader, capacity, 1, 50, 2, 3, 3)
    _check_race(seen)
    # Every request reads the judge's clock (each bucket's refill needs the time), and
    # the count is the judge's own.
    assert clock.readings >= 50 * 2 * 3, clock.readings
    # The clock stands still here, so each key's bucket grants exactly its capacity.
    assert seen["grants"] == [capacity] * 3, seen["grants"]


def test_time_comes_only_from_the_injected_clock():
    assert P.time_module_use(4, 2) == {}
    # The probe's watch above patches the time module only while the calls run: a
    # function bound at import (`from time import monotonic`) passes it. So the source
    # is also read here in the judge, never run (see sb.source_checks for what it covers).
    uses = module_uses(solution_source("bucket.py"), "time", "bucket.py")
    assert not uses, "time must come only from the injected clock: " + "; ".join(uses)
