"""Test doubles that stay in the judge: the solution calls them through the wire, so what
they record is the judge's own record of every fulfilment.

The solution is handed `fulfil.handed`, never the recorder itself: through the wire the
worker may call any public method and read any public attribute of an object the judge
hands over, so a recorder handed over as itself would let the solution read the test's
record (`calls`, `attempts`: a dedupe that needs no database). The prompt promises it
`fulfil(payment_id, amount)` and nothing else."""
import threading
import time

from sb.judge import facade


class RecordingFulfil:
    """Records every fulfil(payment_id, amount) call: `attempts` all of them, `calls` the
    ones that succeeded. The attempts numbered in `fail_on` (1 is the first call) raise
    RuntimeError, as a fulfilment service that is briefly down. A payment in `slow`
    (payment_id -> seconds) takes that long to fulfil: the call sleeps here, in the
    judge, after it is recorded, so how long the solution's fulfil lasts is the judge's
    doing and nothing in the worker can shorten it."""

    def __init__(self, fail_on=(), slow=None):
        self.calls = []
        self.attempts = []
        self._lock = threading.Lock()
        self._fail_on = set(fail_on)
        self._slow = dict(slow or {})
        self.handed = facade(self, call=True)

    def __call__(self, payment_id, amount):
        with self._lock:
            self.attempts.append((payment_id, amount))
            if len(self.attempts) in self._fail_on:
                raise RuntimeError("fulfilment service unavailable")
            self.calls.append((payment_id, amount))
        pause = self._slow.get(payment_id, 0)
        if pause:
            time.sleep(pause)  # outside the lock: other payments' fulfilments go on meanwhile


def event(event_id, payment_id, type_, amount, sequence):
    return {
        "id": event_id,
        "payment_id": payment_id,
        "type": type_,
        "amount": amount,
        "sequence": sequence,
    }
