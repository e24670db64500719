import random

import pytest

from webhooks import WebhookHandler

from _fakes import RecordingFulfil, event, run_threads


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "payments.db")


def test_first_delivery_is_processed_and_fulfilled(db_path):
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil)
    assert handler.handle(event("evt_1", "pay_1", "payment.succeeded", 1250, 1)) == "processed"
    assert fulfil.calls == [("pay_1", 1250)]
    assert handler.status("pay_1") == "succeeded"
    assert handler.status("pay_unknown") is None


def test_redelivery_is_a_duplicate(db_path):
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil)
    evt = event("evt_1", "pay_1", "payment.succeeded", 1250, 1)
    assert handler.handle(evt) == "processed"
    assert handler.handle(dict(evt)) == "duplicate"
    assert handler.handle(dict(evt)) == "duplicate"
    assert fulfil.calls == [("pay_1", 1250)]


def test_duplicate_is_remembered_across_restart(db_path):
    """A new handler on the same file is a restarted service: it must remember."""
    fulfil = RecordingFulfil()
    evt = event("evt_1", "pay_1", "payment.succeeded", 1250, 1)
    assert WebhookHandler(db_path, fulfil).handle(evt) == "processed"
    restarted = WebhookHandler(db_path, fulfil)
    assert restarted.handle(dict(evt)) == "duplicate"
    assert restarted.status("pay_1") == "succeeded"
    assert fulfil.calls == [("pay_1", 1250)]


def test_distinct_events_of_one_payment_are_not_duplicates(db_path):
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil)
    assert handler.handle(event("evt_1", "pay_1", "payment.succeeded", 900, 1)) == "processed"
    assert handler.handle(event("evt_2", "pay_1", "payment.refunded", 900, 2)) == "processed"
    assert handler.status("pay_1") == "refunded"
    assert fulfil.calls == [("pay_1", 900)]


def test_out_of_order_older_event_is_stale(db_path):
    """The refund (sequence 2) overtakes the success (sequence 1) in transit."""
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil)
    assert handler.handle(event("evt_2", "pay_1", "payment.refunded", 900, 2)) == "processed"
    assert handler.handle(event("evt_1", "pay_1", "payment.succeeded", 900, 1)) == "stale"
    assert handler.status("pay_1") == "refunded"
    assert fulfil.calls == [], "a refunded payment must never be fulfilled"


def test_stale_event_redelivered_is_a_duplicate(db_path):
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil)
    handler.handle(event("evt_2", "pay_1", "payment.refunded", 900, 2))
    assert handler.handle(event("evt_1", "pay_1", "payment.succeeded", 900, 1)) == "stale"
    assert handler.handle(event("evt_1", "pay_1", "payment.succeeded", 900, 1)) == "duplicate"
    assert fulfil.calls == []


def test_failed_fulfilment_is_retried_on_redelivery(db_path):
    fulfil = RecordingFulfil(fail_first=1)
    handler = WebhookHandler(db_path, fulfil)
    evt = event("evt_1", "pay_1", "payment.succeeded", 700, 1)
    with pytest.raises(RuntimeError):
        handler.handle(evt)
    assert handler.status("pay_1") is None, "a failed delivery must leave no trace"
    assert handler.handle(dict(evt)) == "processed"
    assert handler.handle(dict(evt)) == "duplicate"
    assert fulfil.calls == [("pay_1", 700)]
    assert handler.status("pay_1") == "succeeded"


N_EVENTS = 10
N_THREADS = 8


def _concurrent_duplicates(handler_for_thread):
    fulfil = RecordingFulfil(pause_s=0.01)
    handlers = [handler_for_thread(fulfil) for _ in range(N_THREADS)]
    for i in range(N_EVENTS):
        evt = event(f"evt_{i}", f"pay_{i}", "payment.succeeded", 100 + i, 1)
        outcomes = []
        run_threads([lambda h=h: outcomes.append(h.handle(dict(evt))) for h in handlers])
        assert sorted(outcomes) == ["duplicate"] * (N_THREADS - 1) + ["processed"], (i, outcomes)
    assert sorted(fulfil.calls) == sorted((f"pay_{i}", 100 + i) for i in range(N_EVENTS))
    assert handlers[0].status("pay_0") == "succeeded"


def test_concurrent_duplicates_on_one_shared_handler(db_path):
    shared = []

    def one_handler(fulfil):
        if not shared:
            shared.append(WebhookHandler(db_path, fulfil))
        return shared[0]

    _concurrent_duplicates(one_handler)


def test_concurrent_duplicates_on_separate_handler_instances(db_path):
    """One handler per thread on one file: as if several worker processes."""
    _concurrent_duplicates(lambda fulfil: WebhookHandler(db_path, fulfil))


def _event_stream(seed):
    rng = random.Random(seed)
    events = []
    for p in range(8):
        amount = rng.randrange(100, 10_000)
        events.append(event(f"evt_{p}_s", f"pay_{p}", "payment.succeeded", amount, 1))
        if rng.random() < 0.5:
            events.append(event(f"evt_{p}_r", f"pay_{p}", "payment.refunded", amount, 2))
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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shuffled_redeliveries_match_model(db_path, seed):
    events, deliveries = _event_stream(seed)
    want_outcomes, want_fulfilled, want_status = _simulate(deliveries)
    fulfil = RecordingFulfil()
    handler = WebhookHandler(db_path, fulfil)
    got = [handler.handle(e) for e in deliveries]
    assert got == want_outcomes
    assert fulfil.calls == want_fulfilled
    assert {p: handler.status(p) for p in want_status} == want_status


def test_concurrent_shuffled_streams_converge(db_path):
    """Four workers each receive every event, in their own shuffled order."""
    events, _ = _event_stream(7)
    fulfil = RecordingFulfil(pause_s=0.001)
    streams = []
    for w in range(4):
        stream = [dict(e) for e in events]
        random.Random(100 + w).shuffle(stream)
        streams.append(stream)
    outcomes = []

    def worker(stream):
        handler = WebhookHandler(db_path, fulfil)
        for e in stream:
            outcomes.append((e["id"], handler.handle(e)))

    run_threads([lambda s=s: worker(s) for s in streams])
    taking_effect = [eid for eid, out in outcomes if out in ("processed", "stale")]
    assert sorted(taking_effect) == sorted(e["id"] for e in events), "each event exactly once"
    final = {}
    for e in events:
        if e["sequence"] >= final.get(e["payment_id"], (0, None))[0]:
            final[e["payment_id"]] = (e["sequence"], e["type"].split(".")[1])
    handler = WebhookHandler(db_path, fulfil)
    assert {p: handler.status(p) for p in final} == {p: s for p, (_, s) in final.items()}
    succeeded = {(e["payment_id"], e["amount"]) for e in events if e["type"] == "payment.succeeded"}
    assert len(fulfil.calls) == len(set(fulfil.calls)), "a payment fulfilled twice"
    assert set(fulfil.calls) <= succeeded
