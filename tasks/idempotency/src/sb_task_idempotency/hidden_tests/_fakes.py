"""Test doubles shared by the idempotency tests."""
import threading
import time


class RecordingFulfil:
    """Records every fulfil(payment_id, amount) call.

    `pause_s` is a deliberate yield point: while one delivery sits inside
    fulfilment, every other thread gets the CPU. An implementation that checks
    "already processed?" outside a lock or transaction and acts afterwards lets
    every concurrent duplicate through that window, so a 10 ms pause makes the
    race happen on essentially every repetition, even on one CPU (the GIL is
    released by sleep, and the other threads are already runnable at a barrier).
    No assertion depends on how long anything takes.
    """

    def __init__(self, pause_s=0.0, fail_first=0):
        self.calls = []
        self._lock = threading.Lock()
        self._pause_s = pause_s
        self._failures_left = fail_first

    def __call__(self, payment_id, amount):
        with self._lock:
            if self._failures_left > 0:
                self._failures_left -= 1
                raise RuntimeError("fulfilment service unavailable")
        if self._pause_s:
            time.sleep(self._pause_s)
        with self._lock:
            self.calls.append((payment_id, amount))


def event(event_id, payment_id, type_, amount, sequence):
    return {
        "id": event_id,
        "payment_id": payment_id,
        "type": type_,
        "amount": amount,
        "sequence": sequence,
    }


def run_threads(targets):
    """Run callables on real threads released together; re-raise any error."""
    barrier = threading.Barrier(len(targets))
    errors = []

    def wrap(fn):
        def body():
            try:
                barrier.wait()
                fn()
            except BaseException as exc:  # collected and reported by the test
                errors.append(exc)
        return body

    threads = [threading.Thread(target=wrap(fn)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, f"{len(errors)} thread(s) raised, first: {errors[0]!r}"
