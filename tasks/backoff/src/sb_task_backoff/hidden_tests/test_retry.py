import random

import pytest

from retry import RetriesExhausted, TransientError, call_with_retry

from _fakes import ConstantRandom, FakeClock, FakeService, TooManyCalls

# Delays are compared with rel=1e-12: the formula is a product of a few doubles, so
# implementations that group it differently agree to a few ulps, and nothing below
# depends on anything finer.
REL = 1e-12


def run(service, clock, rng, **policy):
    settings = dict(max_attempts=5, base_delay=1.0, max_delay=8.0, timeout=None)
    settings.update(policy)
    return call_with_retry(service, clock=clock, sleep=clock.sleep, rng=rng, **settings)


def test_success_first_time_does_not_sleep():
    clock = FakeClock()
    service = FakeService(clock, ["ok"])
    assert run(service, clock, ConstantRandom(0.5)) == "ok"
    assert len(service.call_times) == 1 and clock.sleeps == []


def test_transient_failures_then_success():
    clock = FakeClock()
    service = FakeService(clock, [TransientError("503"), TransientError("503"), {"id": 7}])
    assert run(service, clock, ConstantRandom(0.0)) == {"id": 7}
    assert len(service.call_times) == 3
    assert clock.sleeps == pytest.approx([0.5, 1.0], rel=REL)


def test_non_retryable_error_is_raised_at_once():
    clock = FakeClock()
    boom = ValueError("400 bad request")
    service = FakeService(clock, [boom, "never reached"])
    with pytest.raises(ValueError) as info:
        run(service, clock, ConstantRandom(0.5))
    assert info.value is boom
    assert len(service.call_times) == 1 and clock.sleeps == []


def test_non_retryable_after_transient_stops_retrying():
    clock = FakeClock()
    service = FakeService(clock, [TransientError("503"), KeyError("gone")], then="ok")
    with pytest.raises(KeyError):
        run(service, clock, ConstantRandom(0.5))
    assert len(service.call_times) == 2


@pytest.mark.parametrize("max_attempts", [1, 2, 4])
def test_gives_up_after_max_attempts(max_attempts):
    clock = FakeClock()
    script = [TransientError(f"503 #{i}") for i in range(max_attempts)]
    last = script[-1]
    service = FakeService(clock, script, then=TooManyCalls("called past max_attempts"))
    with pytest.raises(RetriesExhausted) as info:
        run(service, clock, ConstantRandom(0.5), max_attempts=max_attempts)
    assert info.value.attempts == max_attempts
    assert info.value.__cause__ is last
    assert len(service.call_times) == max_attempts
    assert len(clock.sleeps) == max_attempts - 1


def test_a_service_that_never_recovers_is_not_hammered_forever():
    clock = FakeClock()
    service = FakeService(clock, [], then=TransientError("down"), hard_limit=50)
    with pytest.raises(RetriesExhausted):
        run(service, clock, ConstantRandom(0.5), max_attempts=6)
    assert len(service.call_times) == 6


def test_delay_doubles_and_is_capped_at_lowest_jitter():
    clock = FakeClock()
    service = FakeService(clock, [], then=TransientError("503"))
    with pytest.raises(RetriesExhausted):
        run(service, clock, ConstantRandom(0.0), max_attempts=7, base_delay=0.25, max_delay=3.0)
    caps = [0.25, 0.5, 1.0, 2.0, 3.0, 3.0]
    assert clock.sleeps == pytest.approx([c / 2 for c in caps], rel=REL)


def test_delay_at_highest_jitter_stays_under_cap():
    u = 1.0 - 2.0**-40  # the largest values random() produces are just below 1
    clock = FakeClock()
    service = FakeService(clock, [], then=TransientError("503"))
    with pytest.raises(RetriesExhausted):
        run(service, clock, ConstantRandom(u), max_attempts=6, base_delay=0.5, max_delay=4.0)
    caps = [0.5, 1.0, 2.0, 4.0, 4.0]
    assert clock.sleeps == pytest.approx([c * (0.5 + 0.5 * u) for c in caps], rel=REL)
    assert all(s <= c for s, c in zip(clock.sleeps, caps))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_seeded_jitter_matches_formula_and_spaces_calls(seed):
    clock = FakeClock()
    service = FakeService(clock, [], then=TransientError("503"), latency=0.01)
    with pytest.raises(RetriesExhausted):
        run(service, clock, random.Random(seed), max_attempts=9, base_delay=0.1, max_delay=5.0)
    # Independent recomputation from the same seed, one draw per retry.
    ref_rng = random.Random(seed)
    caps = [min(5.0, 0.1 * 2**k) for k in range(8)]
    want = [c * (0.5 + 0.5 * ref_rng.random()) for c in caps]
    assert clock.sleeps == pytest.approx(want, rel=REL)
    assert len(set(clock.sleeps)) == len(clock.sleeps), "no jitter: callers retry in lockstep"
    # The service itself sees every retry at least half a cap after the last call.
    for gap, cap in zip(service.gaps, caps):
        assert gap >= cap / 2


def test_retry_after_longer_than_backoff_is_honoured():
    clock = FakeClock()
    service = FakeService(clock, [TransientError("429", retry_after=6.0), "ok"])
    assert run(service, clock, ConstantRandom(0.0)) == "ok"
    assert clock.sleeps == [6.0]


def test_retry_after_shorter_than_backoff_keeps_backoff():
    clock = FakeClock()
    service = FakeService(
        clock, [TransientError("503"), TransientError("429", retry_after=0.1), "ok"]
    )
    assert run(service, clock, ConstantRandom(0.0)) == "ok"
    assert clock.sleeps == pytest.approx([0.5, 1.0], rel=REL)


def test_retry_after_beyond_max_delay_gives_up_without_waiting():
    clock = FakeClock()
    service = FakeService(clock, [TransientError("429", retry_after=3600.0)], then="ok")
    with pytest.raises(RetriesExhausted) as info:
        run(service, clock, ConstantRandom(0.5), max_delay=30.0)
    assert info.value.attempts == 1
    assert clock.sleeps == [] and len(service.call_times) == 1


def test_timeout_stops_before_a_sleep_that_would_overrun_it():
    clock = FakeClock(start=0.0)
    service = FakeService(clock, [], then=TransientError("503"), latency=0.5)
    with pytest.raises(RetriesExhausted) as info:
        run(service, clock, ConstantRandom(0.0), max_attempts=50, base_delay=1.0,
            max_delay=100.0, timeout=10.0)
    # By hand: calls start at 0, 1.0, 2.5, 5.0; after the 4th call the clock reads
    # 5.5 and the next delay is 4.0, ending at 9.5 <= 10: a 5th call at 9.5. After
    # it the clock reads 10.0 and the next delay (8.0) would end at 18.0 > 10.
    assert service.call_times == pytest.approx([0.0, 1.0, 2.5, 5.0, 9.5], rel=REL)
    assert info.value.attempts == 5
    assert clock.now <= 10.0


def test_many_attempts_do_not_overflow():
    clock = FakeClock()
    service = FakeService(clock, [], then=TransientError("503"), hard_limit=3000)
    with pytest.raises(RetriesExhausted) as info:
        run(service, clock, ConstantRandom(0.0), max_attempts=1500, base_delay=0.001,
            max_delay=0.5)
    assert info.value.attempts == 1500
    assert clock.sleeps[-1] == pytest.approx(0.25, rel=REL)
