"""Test doubles that stay in the judge: the solution calls them through the wire, so what
they record is the judge's own record of every fulfilment."""
import threading


class RecordingFulfil:
    """Records every fulfil(payment_id, amount) call: `attempts` all of them, `calls` the
    ones that succeeded. The attempts numbered in `fail_on` (1 is the first call) raise
    RuntimeError, as a fulfilment service that is briefly down."""

    def __init__(self, fail_on=()):
        self.calls = []
        self.attempts = []
        self._lock = threading.Lock()
        self._fail_on = set(fail_on)

    def __call__(self, payment_id, amount):
        with self._lock:
            self.attempts.append((payment_id, amount))
            if len(self.attempts) in self._fail_on:
                raise RuntimeError("fulfilment service unavailable")
            self.calls.append((payment_id, amount))


def event(event_id, payment_id, type_, amount, sequence):
    return {
        "id": event_id,
        "payment_id": payment_id,
        "type": type_,
        "amount": amount,
        "sequence": sequence,
    }
