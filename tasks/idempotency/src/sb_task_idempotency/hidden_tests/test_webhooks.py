"""Exactly-once webhook processing, graded in the judge.

Sequential tests call the solution through the proxy with a fulfil fake that stays here
(its record is the judge's own; the solution is handed only `fulfil.handed`, a call).
Threads and processes run next to the solution through _probe_webhooks, which returns
what happened; every expectation is computed here. Their fulfilments are recorded here
too: the probe is handed `fulfil.handed` and every fulfil the solution makes, on a
thread or in a child process, is a call on it that completes before the solution's
fulfil returns (see the probe's docstring). "Each payment fulfilled once" is read from
that judge-side record, never from a list in the solution's process, so a delivery
that ships and then erases its trace there changes nothing.

Why the races below are near certain for a wrong answer, and never fail a right one:
every fulfilment is a wire round trip to the judge's recording fake (a millisecond or
more; for a child process two pipe hops more) followed by a 5-15 ms sleep (seeded
jitter) in the solution's process, and every round's deliveries are released together
(a barrier for threads; a line written to each child's stdin, back to back, for
processes). An implementation whose "already taken effect?" check is not atomic with
recording the event lets every delivery that checks during that round trip and sleep
through, and the other deliveries check within microseconds of the release (threads)
or about a millisecond (processes), so a round passes such an implementation only if
every other delivery is descheduled for the whole fulfilment; the tests need that to
happen in every one of 10 (threads) or 6 (processes) rounds. A correct implementation
is exact under every interleaving, so its false-failure probability is 0; the only
timing bound is the hang guard (60 s, for a deadlock), far above the few seconds these
tests take on a loaded machine.
"""
import random
import threading

import pytest

from sb.judge import probe
from webhooks import WebhookHandler

from _fakes import RecordingFulfil, event

P = probe("_probe_webhooks.py")
OUTCOMES = {"processed", "stale", "duplicate"}


@pytest.fixture
def db_path():
    path = P.new_db_path()
    yield path
    P.cleanup()


def succeeded(event_id, payment_id, amount, sequence):
    return event(event_id, payment_id, "payment.succeeded", amount, sequence)


def refunded(event_id, payment_id, amount, sequence):
    return event(event_id, payment_id, "payment.refunded", amount, sequence)


# ---------------------------------------------------------------- one delivery at a time


def test_first_delivery_is_processed_and_fulfilled(db_path):
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    assert handler.status("pay_1") is None
    assert handler.handle(succeeded("evt_1", "pay_1", 1250, 1)) == "processed"
    assert fulfil.calls == [("pay_1", 1250)]
    assert handler.status("pay_1") == "succeeded"
    assert handler.status("pay_unknown") is None


def test_redelivery_is_a_duplicate(db_path):
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    evt = succeeded("evt_1", "pay_1", 1250, 1)
    assert handler.handle(evt) == "processed"
    assert handler.handle(dict(evt)) == "duplicate"
    assert handler.handle(dict(evt)) == "duplicate"
    assert fulfil.calls == [("pay_1", 1250)]
    assert handler.status("pay_1") == "succeeded"


def test_duplicate_is_remembered_across_restart(db_path):
    """A new handler on the same file is a restarted service: it must remember."""
    fulfil = RecordingFulfil()
    evt = succeeded("evt_1", "pay_1", 1250, 1)
    assert WebhookHandler(db_path, fulfil.handed).handle(evt) == "processed"
    restarted = WebhookHandler(db_path, fulfil.handed)
    assert restarted.handle(dict(evt)) == "duplicate"
    assert restarted.status("pay_1") == "succeeded"
    assert fulfil.calls == [("pay_1", 1250)]


def test_distinct_events_of_one_payment_are_not_duplicates(db_path):
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    assert handler.handle(succeeded("evt_1", "pay_1", 900, 1)) == "processed"
    assert handler.handle(refunded("evt_2", "pay_1", 900, 2)) == "processed"
    assert handler.status("pay_1") == "refunded"
    assert fulfil.calls == [("pay_1", 900)], "a refund never calls fulfil"


def test_same_event_id_on_another_payment_is_still_a_duplicate(db_path):
    """Ids are unique per event, not per payment: the id alone decides."""
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    assert handler.handle(succeeded("evt_1", "pay_1", 500, 1)) == "processed"
    assert handler.handle(succeeded("evt_1", "pay_2", 500, 1)) == "duplicate"
    assert handler.status("pay_2") is None
    assert fulfil.calls == [("pay_1", 500)]


def test_out_of_order_older_event_is_stale(db_path):
    """The refund (sequence 2) overtakes the success (sequence 1) in transit."""
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    assert handler.handle(refunded("evt_2", "pay_1", 900, 2)) == "processed"
    assert handler.handle(succeeded("evt_1", "pay_1", 900, 1)) == "stale"
    assert handler.status("pay_1") == "refunded"
    assert fulfil.calls == [], "a refunded payment must never be fulfilled"


def test_stale_event_redelivered_is_a_duplicate(db_path):
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    handler.handle(refunded("evt_2", "pay_1", 900, 2))
    assert handler.handle(succeeded("evt_1", "pay_1", 900, 1)) == "stale"
    assert handler.handle(succeeded("evt_1", "pay_1", 900, 1)) == "duplicate"
    assert fulfil.calls == []


def test_only_a_lower_sequence_is_stale(db_path):
    """Rule 3 says lower: an event at the current sequence is not late, and the
    sequence compared is the payment's own (other payments' sequences do not count)."""
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    assert handler.handle(refunded("evt_a", "pay_1", 300, 4)) == "processed"
    assert handler.handle(succeeded("evt_b", "pay_1", 300, 4)) == "processed"
    assert handler.status("pay_1") == "succeeded"
    assert handler.handle(succeeded("evt_c", "pay_2", 800, 1)) == "processed"
    assert handler.handle(refunded("evt_d", "pay_1", 300, 3)) == "stale"
    assert handler.status("pay_1") == "succeeded"
    assert fulfil.calls == [("pay_1", 300), ("pay_2", 800)]


def test_status_is_the_highest_sequence_that_took_effect(db_path):
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    assert handler.handle(succeeded("evt_5", "pay_1", 100, 5)) == "processed"
    assert handler.handle(refunded("evt_9", "pay_1", 100, 9)) == "processed"
    assert handler.handle(succeeded("evt_7", "pay_1", 100, 7)) == "stale"
    assert handler.status("pay_1") == "refunded"
    assert handler.handle(succeeded("evt_12", "pay_1", 100, 12)) == "processed"
    assert handler.status("pay_1") == "succeeded"
    assert fulfil.calls == [("pay_1", 100), ("pay_1", 100)]


def test_failed_fulfilment_is_retried_on_redelivery(db_path):
    fulfil = RecordingFulfil(fail_on={1})
    handler = WebhookHandler(db_path, fulfil.handed)
    evt = succeeded("evt_1", "pay_1", 700, 1)
    with pytest.raises(RuntimeError, match="fulfilment service unavailable"):
        handler.handle(evt)
    assert handler.status("pay_1") is None, "a failed delivery must leave no trace"
    assert WebhookHandler(db_path, fulfil.handed).status("pay_1") is None
    assert handler.handle(dict(evt)) == "processed"
    assert handler.handle(dict(evt)) == "duplicate"
    assert fulfil.attempts == [("pay_1", 700), ("pay_1", 700)]
    assert fulfil.calls == [("pay_1", 700)]
    assert handler.status("pay_1") == "succeeded"


def test_failed_fulfilment_changes_neither_status_nor_sequence(db_path):
    """The failed event (sequence 5) never took effect: the payment keeps its status,
    and an event at sequence 3 is not late, because 5 was never the current sequence."""
    fulfil = RecordingFulfil(fail_on={2})
    handler = WebhookHandler(db_path, fulfil.handed)
    assert handler.handle(succeeded("evt_1", "pay_1", 400, 1)) == "processed"
    assert handler.handle(refunded("evt_2", "pay_1", 400, 2)) == "processed"
    with pytest.raises(RuntimeError):
        handler.handle(succeeded("evt_5", "pay_1", 450, 5))
    assert handler.status("pay_1") == "refunded"
    restarted = WebhookHandler(db_path, fulfil.handed)
    assert restarted.status("pay_1") == "refunded"
    assert restarted.handle(succeeded("evt_3", "pay_1", 420, 3)) == "processed"
    assert restarted.handle(succeeded("evt_5", "pay_1", 450, 5)) == "processed"
    assert restarted.status("pay_1") == "succeeded"
    assert fulfil.calls == [("pay_1", 400), ("pay_1", 420), ("pay_1", 450)]


# ---------------------------------------------------------------- the file and what is in it


def test_an_empty_file_at_the_path_gets_the_tables(db_path):
    """A deployment may create the file before the service starts (zero bytes)."""
    P.make_empty_file(db_path)
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    assert handler.handle(succeeded("evt_1", "pay_1", 990, 1)) == "processed"
    assert WebhookHandler(db_path, fulfil.handed).handle(succeeded("evt_1", "pay_1", 990, 1)) == "duplicate"
    assert fulfil.calls == [("pay_1", 990)]


def test_a_database_that_already_holds_other_tables(db_path):
    """The file is the application's database: its own tables are there first and
    stay as they were."""
    rows = [["ord_1", 1500], ["ord_2", 20], ["ord_3", 7]]
    P.make_foreign_table(db_path, rows)
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    assert handler.handle(succeeded("evt_1", "pay_1", 1500, 1)) == "processed"
    assert WebhookHandler(db_path, fulfil.handed).handle(succeeded("evt_1", "pay_1", 1500, 1)) == "duplicate"
    assert handler.status("pay_1") == "succeeded"
    assert P.read_foreign_table(db_path) == rows
    assert fulfil.calls == [("pay_1", 1500)]


def test_fulfil_runs_synchronously_on_the_callers_thread(db_path):
    fulfil = RecordingFulfil()
    seen = P.fulfil_thread_and_timing(db_path, succeeded("evt_1", "pay_1", 321, 1), fulfil.handed)
    assert seen["outcome"] == "processed"
    assert fulfil.calls == [("pay_1", 321)]
    assert seen["calls_at_return"] == [["pay_1", 321]], "fulfil must have run when handle returns"
    assert seen["calls_later"] == [["pay_1", 321]]
    assert seen["same_thread"] is True, "fulfil must run on the thread that called handle"


# ---------------------------------------------------------------- shuffled redeliveries


def _event_stream(seed, n_payments=8):
    """Each payment's history: 1 to 3 events at increasing sequences with gaps."""
    rng = random.Random(seed)
    events = []
    for p in range(n_payments):
        amount = rng.randrange(100, 10_000)
        sequences = sorted(rng.sample(range(1, 20), rng.randrange(1, 4)))
        for k, seq in enumerate(sequences):
            type_ = "payment.succeeded" if k % 2 == 0 else "payment.refunded"
            events.append(event(f"evt_{p}_{seq}", f"pay_{p}", type_, amount + k, seq))
    deliveries = [dict(e) for e in events for _ in range(rng.randrange(1, 4))]
    rng.shuffle(deliveries)
    return events, deliveries


def _simulate(deliveries):
    """Independent in-memory model of the stated rules, one delivery at a time."""
    seen, latest, fulfilled, outcomes = set(), {}, [], []
    for e in deliveries:
        if e["id"] in seen:
            outcomes.append("duplicate")
            continue
        seen.add(e["id"])
        if e["payment_id"] in latest and e["sequence"] < latest[e["payment_id"]][0]:
            outcomes.append("stale")
            continue
        status = "succeeded" if e["type"] == "payment.succeeded" else "refunded"
        latest[e["payment_id"]] = (e["sequence"], status)
        if status == "succeeded":
            fulfilled.append((e["payment_id"], e["amount"]))
        outcomes.append("processed")
    return outcomes, fulfilled, {p: s for p, (_, s) in latest.items()}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_shuffled_redeliveries_match_model(db_path, seed):
    events, deliveries = _event_stream(seed)
    want_outcomes, want_fulfilled, want_status = _simulate(deliveries)
    assert "stale" in want_outcomes and "duplicate" in want_outcomes  # every seed has both
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    got = [handler.handle(e) for e in deliveries]
    assert got == want_outcomes
    assert fulfil.calls == want_fulfilled
    assert {p: handler.status(p) for p in want_status} == want_status


# ---------------------------------------------------------------- threads and processes


def _check_no_trouble(seen):
    assert seen.get("failures", []) == [], seen["failures"]
    assert seen.get("stuck", 0) == 0, "deliveries still running after the hang guard: a deadlock"
    assert seen.get("problems", []) == [], seen["problems"]
    errors = [out for per in seen["results"] for _, out in per if out not in OUTCOMES]
    assert errors == [], f"{len(errors)} deliveries failed, first: {errors[0]}"


N_ROUNDS = 10
N_THREADS = 8


def _duplicate_rounds(n_rounds, tag):
    return [succeeded(f"evt_{tag}{r}", f"pay_{tag}{r}", 100 + r, 1) for r in range(n_rounds)]


def _check_duplicate_rounds(seen, rounds, n_deliverers, fulfil):
    _check_no_trouble(seen)
    want = sorted((e["payment_id"], e["amount"]) for e in rounds)
    # The judge's own record, made as each fulfilment happened: checked before the
    # outcomes, so a double shipment is reported as one whatever handle() returned.
    assert sorted(fulfil.attempts) == want, "each payment fulfilled once"
    assert sorted(fulfil.calls) == want, "each payment fulfilled once"
    for r, evt in enumerate(rounds):
        outcomes = sorted(out for per in seen["results"] for eid, out in per if eid == evt["id"])
        assert outcomes == ["duplicate"] * (n_deliverers - 1) + ["processed"], (r, outcomes)


@pytest.mark.parametrize("shared", [True, False], ids=["one_shared_handler", "one_handler_per_thread"])
def test_concurrent_duplicates_on_threads(db_path, shared):
    """Every round, all threads deliver the same event at once; status readers run
    alongside. One handler for all threads, or one per thread (as several processes)."""
    rounds = _duplicate_rounds(N_ROUNDS, "t")
    plans = [[[evt] for evt in rounds] for _ in range(N_THREADS)]
    fulfil = RecordingFulfil()
    seen = P.run_threads(db_path, plans, shared, fulfil.handed, 0.01, 11, status_readers=2,
                         status_ids=[e["payment_id"] for e in rounds[:3]])
    _check_duplicate_rounds(seen, rounds, N_THREADS, fulfil)
    on_caller = list(seen["on_caller"])
    assert len(on_caller) == len(fulfil.attempts), "fulfil was called other than through what it was handed"
    assert all(on_caller), "fulfil ran off the delivering thread"
    assert seen["status_errors"] == [], f"status failed during deliveries: {seen['status_errors']}"
    assert seen["status_reads"] > 0
    assert set(seen["status_values"]) <= {"None", "succeeded"}
    handler = WebhookHandler(db_path, RecordingFulfil().handed)
    assert {e["payment_id"]: handler.status(e["payment_id"]) for e in rounds} == \
        {e["payment_id"]: "succeeded" for e in rounds}


def _check_converged(seen, events, db_path, fulfil):
    _check_no_trouble(seen)
    deliveries = [(eid, out) for per in seen["results"] for eid, out in per]
    took_effect = sorted(eid for eid, out in deliveries if out in ("processed", "stale"))
    assert took_effect == sorted(e["id"] for e in events), "each event takes effect exactly once"
    outcome_of = {eid: out for eid, out in deliveries if out != "duplicate"}
    top = {}
    for e in events:
        if e["sequence"] > top.get(e["payment_id"], {"sequence": 0})["sequence"]:
            top[e["payment_id"]] = e
    for e in top.values():
        assert outcome_of[e["id"]] == "processed", f"{e['id']} has the highest sequence: never stale"
    handler = WebhookHandler(db_path, RecordingFulfil().handed)
    assert {p: handler.status(p) for p in top} == {p: e["type"].split(".")[1] for p, e in top.items()}
    want_calls = sorted((e["payment_id"], e["amount"]) for e in events
                        if e["type"] == "payment.succeeded" and outcome_of[e["id"]] == "processed")
    assert sorted(fulfil.attempts) == want_calls, "each processed success fulfilled once, nothing else"
    assert sorted(fulfil.calls) == want_calls


def test_concurrent_shuffled_streams_converge(db_path):
    """Four handlers each receive every event, twice over, in their own shuffled order."""
    events, _ = _event_stream(7)
    plans = []
    for w in range(4):
        stream = [dict(e) for e in events for _ in range(2)]
        random.Random(100 + w).shuffle(stream)
        plans.append([stream])
    fulfil = RecordingFulfil()
    seen = P.run_threads(db_path, plans, False, fulfil.handed, 0.002, 12)
    _check_converged(seen, events, db_path, fulfil)


N_PROCESSES = 4
N_PROCESS_ROUNDS = 6


def test_concurrent_duplicates_across_worker_processes(db_path):
    """Real processes, each with its own handler on the file: a lock inside one process
    cannot serialise them; only the database can."""
    rounds = _duplicate_rounds(N_PROCESS_ROUNDS, "p")
    plans = [[[evt] for evt in rounds] for _ in range(N_PROCESSES)]
    fulfil = RecordingFulfil()
    seen = P.run_processes(db_path, plans, fulfil.handed, 0.01, 21)
    _check_duplicate_rounds(seen, rounds, N_PROCESSES, fulfil)


def test_shuffled_streams_across_worker_processes_converge(db_path):
    events, _ = _event_stream(8)
    plans = []
    for w in range(3):
        stream = [dict(e) for e in events]
        random.Random(200 + w).shuffle(stream)
        plans.append([stream])
    fulfil = RecordingFulfil()
    seen = P.run_processes(db_path, plans, fulfil.handed, 0.002, 22)
    _check_converged(seen, events, db_path, fulfil)


def test_a_new_process_knows_what_an_earlier_one_did(db_path):
    """A restart is a new process: nothing kept in the old one's memory survives."""
    first = [succeeded("evt_1", "pay_1", 610, 1), refunded("evt_2", "pay_2", 620, 2)]
    earlier = RecordingFulfil()
    seen = P.run_processes(db_path, [[first]], earlier.handed, 0.0, 23)
    _check_no_trouble(seen)
    assert seen["results"] == [[["evt_1", "processed"], ["evt_2", "processed"]]]
    assert earlier.attempts == [("pay_1", 610)]
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil.handed)
    assert handler.handle(dict(first[0])) == "duplicate"
    assert handler.handle(succeeded("evt_0", "pay_2", 620, 1)) == "stale"
    assert handler.status("pay_1") == "succeeded" and handler.status("pay_2") == "refunded"
    assert handler.handle(succeeded("evt_3", "pay_3", 630, 1)) == "processed"
    later_fulfil = RecordingFulfil()
    later = P.run_processes(db_path, [[[succeeded("evt_3", "pay_3", 630, 1), dict(first[1])]]],
                            later_fulfil.handed, 0.0, 24)
    _check_no_trouble(later)
    assert later["results"] == [[["evt_3", "duplicate"], ["evt_2", "duplicate"]]]
    assert fulfil.calls == [("pay_3", 630)] and later_fulfil.attempts == []


# Rule 6 says no call may fail because the database is busy, and fulfil "may be slow".
# SLOW_FULFIL_S is how long one delivery's fulfil lasts (a sleep in the judge's fake, so
# the worker cannot shorten it) while other calls need the database. 6 s because the
# commonest wrong setting is sqlite3's default busy timeout of 5 s: a waiting call gives
# up once SQLite's busy handler has slept its timeout in total (each sleep at least as
# long as asked), so every waiter here, which starts within milliseconds after the slow
# fulfil begins and must wait until it ends and commits, fails under any busy timeout
# up to about 5.9 s; a 5 s one would survive only if the busy handler's ~60 sleeps
# together overslept by a whole second (about 17 ms each, every time). No faster test can
# tell: SQLite's busy handler sleeps in real time, so a wait shorter than the timeout
# looks the same as none. A finite timeout longer than SLOW_FULFIL_S (the reference's
# 60 s) passes, as it must: no test can outlast every finite timeout. A right solution
# cannot fail from timing: it waits (or does not need the lock) however long fulfil
# takes, up to the hang guard (60 s, ten times this test), so its false-failure
# probability is 0; "overlapped" needs only that a started thread runs within 6 s.
SLOW_FULFIL_S = 6.0


def test_no_call_fails_while_a_slow_fulfilment_holds_the_database(db_path):
    """While one delivery's fulfil takes 6 s: another payment's delivery on another
    handler and on the same handler, a redelivery of the slow event, and status reads
    all complete without a 'database is locked'."""
    slow_evt = succeeded("evt_slow", "pay_slow", 4100, 1)
    other = succeeded("evt_other", "pay_other", 4200, 1)
    shared = succeeded("evt_shared", "pay_shared", 4300, 1)
    during = [["handle", "own", other], ["handle", "shared", shared], ["handle", "own", slow_evt],
              ["status", "own", "pay_slow"], ["status", "shared", "pay_other"]]
    fulfil = RecordingFulfil(slow={"pay_slow": SLOW_FULFIL_S})
    seen = P.run_during_slow_fulfil(db_path, slow_evt, during, fulfil.handed)
    assert list(seen["failures"]) == [] and seen["stuck"] == 0, seen
    results = list(seen["results"])
    errors = [(kind, arg if kind == "status" else arg["id"], r) for (kind, _, arg), r in zip(during, results)
              if isinstance(r, str) and r.startswith("error")]
    assert errors == [], f"calls failed while fulfil was slow: {errors}"
    assert seen["slow"] == "processed"
    assert list(seen["overlapped"]) == [True] * len(during), "the calls ran after the slow delivery"
    assert results[:3] == ["processed", "processed", "duplicate"]
    assert results[3] in (None, "succeeded") and results[4] in (None, "succeeded")
    # The judge's own record: every payment shipped once, the slow one included.
    want = sorted([("pay_slow", 4100), ("pay_other", 4200), ("pay_shared", 4300)])
    assert sorted(fulfil.attempts) == want and sorted(fulfil.calls) == want
    handler = WebhookHandler(db_path, RecordingFulfil().handed)
    assert {p: handler.status(p) for p in ("pay_slow", "pay_other", "pay_shared")} == \
        {"pay_slow": "succeeded", "pay_other": "succeeded", "pay_shared": "succeeded"}


# ---------------------------------------------------------------- races held open


# How long the judge holds the first fulfil open while a competing delivery runs. Not a
# tolerance and no assertion reads it: it bounds the wait for a competitor that a right
# answer keeps out (it waits on the database write lock, or returns "duplicate" at once).
# A wrong answer lets the competitor decide while the first delivery is still inside
# fulfil, in a few milliseconds, and the hold ends as soon as it has returned, or, if it
# waits for the lock, once it is past its checks: the race is opened by construction,
# not by chance. A right answer costs HOLD_S per test.
HOLD_S = 1.0


class HeldFulfil(RecordingFulfil):
    """Records like RecordingFulfil; its first call (on the first delivery's thread) starts
    the competing delivery on another judge thread and returns only once that delivery
    has returned, or after HOLD_S."""

    def __init__(self, compete):
        super().__init__()
        self._compete = compete
        self.competitor = None
        self.answer = {}

    def __call__(self, payment_id, amount):
        super().__call__(payment_id, amount)
        if self.competitor is not None:
            return
        done = threading.Event()

        def body():
            try:
                self.answer["value"] = self._compete()
            except Exception as exc:  # reported; the test fails on it
                self.answer["error"] = f"{type(exc).__name__}: {exc}"
            finally:
                done.set()

        self.competitor = threading.Thread(target=body, daemon=True)
        self.competitor.start()
        done.wait(HOLD_S)


def held_delivery(db_path, first, competing, shared):
    """Deliver `first`; while its fulfil is held open, deliver `competing` on another
    thread (same handler, or another handler on the file). Returns both outcomes and
    the judge's fulfil record."""
    box = {}
    fulfil = HeldFulfil(lambda: box["other"].handle(dict(competing)))
    handler = WebhookHandler(db_path, fulfil.handed)
    box["other"] = handler if shared else WebhookHandler(db_path, fulfil.handed)
    outcome = handler.handle(dict(first))
    assert fulfil.competitor is not None, "fulfil was not called"
    fulfil.competitor.join(60)  # the hang guard: the competitor waits at most for a commit
    assert not fulfil.competitor.is_alive(), "the competing delivery never returned: a deadlock"
    assert "error" not in fulfil.answer, fulfil.answer["error"]
    return outcome, fulfil.answer["value"], fulfil


@pytest.mark.parametrize("shared", [True, False], ids=["one_shared_handler", "two_handlers"])
def test_a_redelivery_during_fulfil_held_open_is_a_duplicate(db_path, shared):
    evt = succeeded("evt_held", "pay_held", 5100, 1)
    outcome, other, fulfil = held_delivery(db_path, evt, evt, shared)
    assert fulfil.attempts == [("pay_held", 5100)], "the order was shipped twice"
    assert (outcome, other) == ("processed", "duplicate")


@pytest.mark.parametrize("shared", [True, False], ids=["one_shared_handler", "two_handlers"])
def test_an_older_event_during_fulfil_held_open_keeps_the_newer_status(db_path, shared):
    newer = succeeded("evt_new", "pay_order", 5200, 2)
    older = refunded("evt_old", "pay_order", 5200, 1)
    outcome, other, fulfil = held_delivery(db_path, newer, older, shared)
    assert fulfil.attempts == [("pay_order", 5200)]
    # The two deliveries overlap, so either serial order is a right answer: the older
    # event first (processed: a refund calls nothing) or after the newer one took effect
    # (stale). Either way the newer event's status is the one that stays.
    assert outcome == "processed" and other in ("processed", "stale")
    assert WebhookHandler(db_path, RecordingFulfil().handed).status("pay_order") == "succeeded"
