"""Bounded, jittered retry, graded in the judge.

The solution's exception classes only exist in its own process, so the service that
raises them runs there (_probe_retry); what it does on each call is decided by a Script
here, and the clock, sleep and random source are fakes here, so call times, sleeps and
draws are the judge's own record. Expected delays come from the formula in the prompt,
recomputed here (and in one test from an independent step-by-step model).
"""
import random

import pytest

from sb.judge import facade, probe, solution_source

from _fakes import ConstantRandom, FakeClock, Script, SeededRandom, transient
from sb.source_checks import module_uses

P = probe("_probe_retry.py")

# Delays are compared with rel=1e-12: the formula is a product of a few doubles, so
# implementations that group it differently agree to a few ulps, and nothing below
# depends on anything finer.
REL = 1e-12


def run(script, clock, rng, **policy):
    settings = dict(max_attempts=5, base_delay=1.0, max_delay=8.0, timeout=None)
    settings.update(policy)
    # Only what the prompt promises crosses: the fakes' records and controls stay here.
    seen = P.run(facade(script, call=True), facade(clock, call=True), clock.sleep, facade(rng, "random"),
                 settings)
    assert seen["time_module_calls"] == {}, f"the time module was used: {seen['time_module_calls']}"
    assert all(s >= 0 for s in clock.sleeps), clock.sleeps
    return seen


def assert_exhausted(seen, attempts, script):
    assert seen.get("type") == "RetriesExhausted", seen
    assert seen.get("attempts") == attempts and seen.get("attempts_type") == "int", seen
    assert len(script.call_times) == attempts
    assert seen.get("cause_index") == seen["raised"] - 1, "RetriesExhausted must be chained from the last TransientError"


# ---------------------------------------------------------------- what is retried


def test_success_first_time_does_not_sleep():
    clock = FakeClock()
    script = Script(clock, [("return", "ok")])
    seen = run(script, clock, ConstantRandom(0.5))
    assert seen["outcome"] == "returned" and seen["value"] == "ok" and seen["is_fn_result"]
    assert len(script.call_times) == 1 and clock.sleeps == []


def test_transient_failures_then_success():
    clock = FakeClock()
    script = Script(clock, [transient(), transient(), ("return", 7)])
    seen = run(script, clock, ConstantRandom(0.0))
    assert seen["outcome"] == "returned" and seen["value"] == 7 and seen["is_fn_result"]
    assert len(script.call_times) == 3
    assert clock.sleeps == pytest.approx([0.5, 1.0], rel=REL)


@pytest.mark.parametrize("value", [None, 0, "", False], ids=["None", "zero", "empty", "False"])
def test_a_falsy_return_value_is_a_success(value):
    clock = FakeClock()
    script = Script(clock, [transient(), ("return", value)], then=("return", "called again"))
    seen = run(script, clock, ConstantRandom(0.5))
    assert seen["outcome"] == "returned" and seen["is_fn_result"], seen
    assert seen["value"] == value and type(seen["value"]) is type(value)
    assert len(script.call_times) == 2


@pytest.mark.parametrize("name", ["ValueError", "KeyError", "ConnectionError", "TimeoutError"])
def test_non_retryable_error_is_raised_at_once_unchanged(name):
    """Only TransientError is retryable: not even errors that sound transient."""
    clock = FakeClock()
    script = Script(clock, [(name, "400 bad request")], then=("return", "never reached"))
    seen = run(script, clock, ConstantRandom(0.5))
    assert seen["outcome"] == "raised" and seen.get("type") == name
    assert seen.get("raised_index") == 0, "the very exception fn raised must propagate"
    assert len(script.call_times) == 1 and clock.sleeps == []


def test_non_retryable_after_transient_stops_retrying():
    clock = FakeClock()
    script = Script(clock, [transient(), ("KeyError", "gone")], then=("return", "ok"))
    seen = run(script, clock, ConstantRandom(0.5))
    assert seen.get("type") == "KeyError" and seen.get("raised_index") == 1
    assert len(script.call_times) == 2 and len(clock.sleeps) == 1


def test_a_subclass_of_transient_error_is_retried():
    clock = FakeClock()
    script = Script(clock, [("subclass", "429", None), ("subclass", "429", 3.0), ("return", "ok")])
    seen = run(script, clock, ConstantRandom(0.0))
    assert seen["outcome"] == "returned" and seen["value"] == "ok"
    assert clock.sleeps == pytest.approx([0.5, 3.0], rel=REL)


def test_an_error_with_retry_after_that_is_not_transient_is_not_retried():
    clock = FakeClock()
    script = Script(clock, [("lookalike", "429", 1.0)], then=("return", "ok"))
    seen = run(script, clock, ConstantRandom(0.5))
    assert seen.get("type") == "LooksTransient" and seen.get("raised_index") == 0
    assert len(script.call_times) == 1 and clock.sleeps == []


# ---------------------------------------------------------------- how many attempts


@pytest.mark.parametrize("max_attempts", [1, 2, 4])
def test_gives_up_after_max_attempts(max_attempts):
    clock = FakeClock()
    script = Script(clock, [transient(f"503 #{i}") for i in range(max_attempts)],
                    then=("stop", "called past max_attempts"))
    rng = ConstantRandom(0.5)
    seen = run(script, clock, rng, max_attempts=max_attempts)
    assert_exhausted(seen, max_attempts, script)
    assert len(clock.sleeps) == max_attempts - 1, "no sleep after the last attempt"


def test_a_service_that_never_recovers_is_not_hammered_forever():
    clock = FakeClock()
    script = Script(clock, [], then=transient("down"), hard_limit=50)
    seen = run(script, clock, ConstantRandom(0.5), max_attempts=6)
    assert_exhausted(seen, 6, script)


def test_many_attempts_do_not_overflow():
    """2.0 ** n overflows a float past n = 1023 and 2 ** n makes huge ints: thousands of
    attempts must still give the capped delay."""
    seen = P.run_always_failing_locally(3000, 500.0, 0.0, dict(
        max_attempts=2500, base_delay=0.001, max_delay=0.5, timeout=None))
    assert seen["time_module_calls"] == {}
    assert seen.get("type") == "RetriesExhausted" and seen["attempts"] == 2500, seen
    assert seen["calls"] == 2500 and len(seen["sleeps"]) == 2499
    caps = [min(0.5, 0.001 * 2.0 ** min(k, 60)) for k in range(2499)]
    assert seen["sleeps"] == pytest.approx([c / 2 for c in caps], rel=REL)
    assert seen["draws"] >= len(seen["sleeps"])


def test_tens_of_thousands_of_attempts_still_work():
    """"Any max_attempts, including many thousands": 20000 attempts, past any fixed
    allowance (one frame per attempt under a raised recursion limit, a table of delays
    of some fixed length), each delay the capped one."""
    n = 20000
    seen = P.run_always_failing_locally(n + 500, 0.0, 0.5, dict(
        max_attempts=n, base_delay=0.25, max_delay=2.0, timeout=None))
    assert seen["time_module_calls"] == {}
    assert seen.get("type") == "RetriesExhausted" and seen["attempts"] == n, {
        k: v for k, v in seen.items() if k != "sleeps"}
    assert seen["calls"] == n and len(seen["sleeps"]) == n - 1
    # u = 0.5 gives three quarters of the cap: caps 0.25, 0.5, 1.0, then 2.0 for every
    # later delay.
    caps = [min(2.0, 0.25 * 2.0 ** min(k, 60)) for k in range(n - 1)]
    assert seen["sleeps"] == pytest.approx([0.75 * c for c in caps], rel=REL)


def test_the_source_never_uses_the_time_module():
    """Read in the judge, never run: the worker-side watch in run() only sees the time
    module's attributes looked up while the call runs, so a function imported from it at
    import (`from time import monotonic`) passes there. See sb.source_checks for what this
    reading covers; code built at run time is left to the watch."""
    clock = FakeClock()
    script = Script(clock, [transient(), ("return", "ok")])
    seen = run(script, clock, ConstantRandom(0.0))  # a working retry, watched in the worker too
    assert seen["outcome"] == "returned" and seen["value"] == "ok", seen
    uses = module_uses(solution_source("retry.py"), "time", "retry.py")
    assert not uses, "the prompt says never to use the time module: " + "; ".join(uses)


# ---------------------------------------------------------------- how long to wait


def test_delay_doubles_and_is_capped_at_lowest_jitter():
    clock = FakeClock()
    script = Script(clock, [], then=transient())
    seen = run(script, clock, ConstantRandom(0.0), max_attempts=7, base_delay=0.25, max_delay=3.0)
    assert_exhausted(seen, 7, script)
    caps = [0.25, 0.5, 1.0, 2.0, 3.0, 3.0]
    assert clock.sleeps == pytest.approx([c / 2 for c in caps], rel=REL)


def test_delay_at_highest_jitter_stays_under_cap():
    u = 1.0 - 2.0**-40  # the largest values random() produces are just below 1
    clock = FakeClock()
    script = Script(clock, [], then=transient())
    run(script, clock, ConstantRandom(u), max_attempts=6, base_delay=0.5, max_delay=4.0)
    caps = [0.5, 1.0, 2.0, 4.0, 4.0]
    assert clock.sleeps == pytest.approx([c * (0.5 + 0.5 * u) for c in caps], rel=REL)
    assert all(s <= c for s, c in zip(clock.sleeps, caps))


@pytest.mark.parametrize("u", [0.25, 0.75])
def test_jitter_is_half_the_cap_plus_half_the_cap_times_u(u):
    """Middle values of u separate equal jitter from every other spread of [cap/2, cap]."""
    clock = FakeClock()
    script = Script(clock, [], then=transient())
    run(script, clock, ConstantRandom(u), max_attempts=4, base_delay=2.0, max_delay=5.0)
    caps = [2.0, 4.0, 5.0]
    assert clock.sleeps == pytest.approx([c * (0.5 + 0.5 * u) for c in caps], rel=REL)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_seeded_jitter_matches_formula_and_spaces_calls(seed):
    clock = FakeClock()
    script = Script(clock, [], then=transient(), latency=0.01)
    rng = SeededRandom(seed)
    run(script, clock, rng, max_attempts=9, base_delay=0.1, max_delay=5.0)
    # Independent recomputation from the same seed, one draw per retry, in order.
    ref_rng = random.Random(seed)
    caps = [min(5.0, 0.1 * 2**k) for k in range(8)]
    want = [c * (0.5 + 0.5 * ref_rng.random()) for c in caps]
    assert clock.sleeps == pytest.approx(want, rel=REL)
    assert len(set(clock.sleeps)) == len(clock.sleeps), "no jitter: callers retry in lockstep"
    # The service itself sees every retry at least half a cap after the last call.
    assert len(script.gaps) == len(caps), f"{len(script.call_times)} calls, expected {len(caps) + 1}"
    for gap, cap in zip(script.gaps, caps):
        assert gap >= cap / 2


# ---------------------------------------------------------------- the server's retry_after


def test_retry_after_longer_than_backoff_is_honoured():
    clock = FakeClock()
    script = Script(clock, [transient("429", 6.0), ("return", "ok")])
    seen = run(script, clock, ConstantRandom(0.0))
    assert seen["outcome"] == "returned" and seen["value"] == "ok", seen
    assert clock.sleeps == [6.0]


def test_retry_after_shorter_than_backoff_keeps_backoff():
    clock = FakeClock()
    script = Script(clock, [transient(), transient("429", 0.1), ("return", "ok")])
    seen = run(script, clock, ConstantRandom(0.0))
    assert seen["outcome"] == "returned" and seen["value"] == "ok", seen
    assert clock.sleeps == pytest.approx([0.5, 1.0], rel=REL)


def test_retry_after_equal_to_max_delay_is_waited():
    clock = FakeClock()
    script = Script(clock, [transient("429", 8.0), ("return", "ok")])
    seen = run(script, clock, ConstantRandom(0.0), max_delay=8.0)
    assert seen["outcome"] == "returned" and seen["value"] == "ok", seen
    assert clock.sleeps == [8.0]


def test_retry_after_beyond_max_delay_gives_up_without_waiting():
    clock = FakeClock()
    script = Script(clock, [transient("429", 3600.0)], then=("return", "ok"))
    seen = run(script, clock, ConstantRandom(0.5), max_delay=30.0)
    assert_exhausted(seen, 1, script)
    assert clock.sleeps == []


def test_retry_after_beyond_max_delay_on_a_later_attempt():
    clock = FakeClock()
    script = Script(clock, [transient(), transient("429", 8.5)], then=("return", "ok"))
    seen = run(script, clock, ConstantRandom(0.0), max_delay=8.0)
    assert_exhausted(seen, 2, script)
    assert clock.sleeps == pytest.approx([0.5], rel=REL)


# ---------------------------------------------------------------- the overall timeout


def test_timeout_stops_before_a_sleep_that_would_overrun_it():
    clock = FakeClock(start=0.0)
    script = Script(clock, [], then=transient(), latency=0.5)
    seen = run(script, clock, ConstantRandom(0.0), max_attempts=50, base_delay=1.0,
               max_delay=100.0, timeout=10.0)
    # By hand: calls start at 0, 1.0, 2.5, 5.0; after the 4th call the clock reads
    # 5.5 and the next delay is 4.0, ending at 9.5 <= 10: a 5th call at 9.5. After
    # it the clock reads 10.0 and the next delay (8.0) would end at 18.0 > 10.
    assert script.call_times == pytest.approx([0.0, 1.0, 2.5, 5.0, 9.5], rel=REL)
    assert_exhausted(seen, 5, script)
    assert clock.now <= 10.0


def test_timeout_counts_the_time_spent_inside_calls():
    """The clock moves while fn runs, between the reading before the first call and the
    one after a failure: slow calls use up the budget as much as sleeps do."""
    clock = FakeClock(start=100.0)
    script = Script(clock, [], then=transient(), latency=[3.0, 3.0, 3.0, 0.0])
    seen = run(script, clock, ConstantRandom(0.0), max_attempts=10, base_delay=1.0,
               max_delay=100.0, timeout=10.0)
    # Calls at 100, 103.5, 107.5; after the third the clock reads 110.5 and a 2.0
    # delay would end at 112.5, 12.5 after the start > 10. Counting from the end of
    # the first call, or from before the third, or only the sleeps, allows a 4th.
    assert script.call_times == pytest.approx([100.0, 103.5, 107.5], rel=REL)
    assert_exhausted(seen, 3, script)
    assert clock.sleeps == pytest.approx([0.5, 1.0], rel=REL)


def test_timeout_reached_exactly_still_sleeps():
    """The rule gives up when the wait would end MORE than timeout after the start."""
    clock = FakeClock(start=0.0)
    script = Script(clock, [transient(), transient()], then=("return", "ok"), latency=0.25)
    seen = run(script, clock, ConstantRandom(0.0), base_delay=1.5, timeout=2.5)
    # After call 1 the clock reads 0.25, the delay is 0.75: ends at 1.0. After call 2
    # the clock reads 1.25, the delay is 1.5 * 2 / 2 = 1.5: ends at 2.75 > 2.5.
    assert_exhausted(seen, 2, script)
    clock = FakeClock(start=0.0)
    script = Script(clock, [transient(), transient()], then=("return", "ok"), latency=0.25)
    seen = run(script, clock, ConstantRandom(0.0), base_delay=1.5, timeout=2.75)
    assert seen["outcome"] == "returned", "ending exactly at the timeout is allowed"
    assert clock.sleeps == [0.75, 1.5]


def test_timeout_includes_the_retry_after_wait():
    """The server's retry_after (within max_delay) is part of the delay the timeout
    check sees: waiting it out would overrun, so give up without sleeping."""
    clock = FakeClock(start=0.0)
    script = Script(clock, [transient(), transient("429", 7.0)], then=("return", "ok"), latency=0.5)
    seen = run(script, clock, ConstantRandom(0.0), max_delay=8.0, timeout=6.0)
    # After call 1 (clock 0.5) the delay 0.5 ends at 1.0. After call 2 (clock 1.5) the
    # backoff alone (1.0) would end at 2.5, but retry_after makes it 7.0: 8.5 > 6.
    assert_exhausted(seen, 2, script)
    assert clock.sleeps == pytest.approx([0.5], rel=REL)


def test_retry_after_that_fits_the_timeout_is_waited():
    clock = FakeClock(start=0.0)
    script = Script(clock, [transient("429", 4.0), ("return", "ok")], latency=0.5)
    seen = run(script, clock, ConstantRandom(0.0), max_delay=8.0, timeout=4.5)
    assert seen["outcome"] == "returned" and seen["value"] == "ok", seen
    assert clock.sleeps == [4.0]
    assert script.call_times == [0.0, 4.5]


def test_no_timeout_means_only_attempts_bound_the_run():
    clock = FakeClock(start=0.0)
    script = Script(clock, [], then=transient(), latency=1000.0)
    seen = run(script, clock, ConstantRandom(0.0), max_attempts=8, timeout=None)
    assert_exhausted(seen, 8, script)
    assert len(clock.sleeps) == 7


# ---------------------------------------------------------------- everything at once


def _model(outcomes, latencies, us, start, max_attempts, base_delay, max_delay, timeout):
    """The prompt's rules, step by step, on a clock that moves by each call's latency."""
    now, t0, draws = start, start, iter(us)
    calls, sleeps, margin = [], [], float("inf")
    for n in range(1, max_attempts + 1):
        calls.append(now)
        now += latencies[n - 1]
        kind, _, retry_after = outcomes[n - 1]
        if kind == "return":
            return "returned", calls, sleeps, margin
        if n == max_attempts or (retry_after is not None and retry_after > max_delay):
            return "exhausted", calls, sleeps, margin
        cap = min(max_delay, base_delay * 2 ** (n - 1))
        delay = cap * (0.5 + 0.5 * next(draws))
        if retry_after is not None:
            delay = max(delay, retry_after)
        if timeout is not None:
            margin = min(margin, abs(now + delay - t0 - timeout))
            if now + delay - t0 > timeout:
                return "exhausted", calls, sleeps, margin
        sleeps.append(delay)
        now += delay
    raise AssertionError("unreachable")


# Seeds chosen so the runs end each way: by attempts (1, 7), by a success (4, 6), by the
# timeout (5, 8, 11), by a retry_after beyond max_delay (3).
@pytest.mark.parametrize("seed", [1, 3, 4, 5, 6, 7, 8, 11])
def test_jittered_latency_and_retry_after_match_a_model(seed):
    """Real-looking traffic: every call takes a random time, the server sometimes
    sends retry_after, sometimes one beyond max_delay, and the timeout binds."""
    rng = random.Random(1000 + seed)
    policy = dict(max_attempts=12, base_delay=0.05, max_delay=2.0, timeout=rng.choice([None, 6.0, 9.0]))
    outcomes, latencies = [], []
    for i in range(policy["max_attempts"]):
        latencies.append(rng.uniform(0.0, 0.6))
        roll = rng.random()
        if roll < 0.08 and i >= 3:
            outcomes.append(("return", "ok", None))
        elif roll < 0.12:
            outcomes.append(transient("429", 2.5))
        elif roll < 0.40:
            outcomes.append(transient("429", rng.uniform(0.0, 2.0)))
        else:
            outcomes.append(transient("503", None))
    draw_rng = random.Random(seed)
    us = [draw_rng.random() for _ in range(policy["max_attempts"])]
    want, calls, sleeps, margin = _model(outcomes, latencies, us, 40.0, **policy)
    # No give-up decision is within 1e-9 s of the timeout, so no rounding difference
    # between groupings of the check can flip it.
    assert margin > 1e-9
    clock = FakeClock(start=40.0)
    script = Script(clock, outcomes, latency=latencies)
    seen = run(script, clock, SeededRandom(seed), **policy)
    if want == "returned":
        assert seen["outcome"] == "returned" and seen["value"] == "ok"
    else:
        assert_exhausted(seen, len(calls), script)
    assert script.call_times == pytest.approx(calls, rel=REL)
    assert clock.sleeps == pytest.approx(sleeps, rel=REL)
