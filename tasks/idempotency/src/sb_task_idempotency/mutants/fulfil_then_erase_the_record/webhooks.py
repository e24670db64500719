"""Rule-breaking webhooks: check, then fulfil, then record -- no lock across the three, so
concurrent deliveries of one event all call fulfil (an order shipped several times); the
loser of the final INSERT then reports "duplicate"."""
import sqlite3
import sys
import threading

_SCHEMA = """
CREATE TABLE IF NOT EXISTS processed_events (event_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS payments (payment_id TEXT PRIMARY KEY, status TEXT NOT NULL,
                                     sequence INTEGER NOT NULL);
"""
_STATUS_BY_TYPE = {"payment.succeeded": "succeeded", "payment.refunded": "refunded"}


class WebhookHandler:
    def __init__(self, db_path, fulfil):
        self._db_path = db_path
        self._fulfil = fulfil
        conn = self._connect()
        try:
            conn.executescript(_SCHEMA)
        finally:
            conn.close()

    def _connect(self):
        return sqlite3.connect(self._db_path, timeout=60, isolation_level=None)

    def handle(self, event):
        status = _STATUS_BY_TYPE[event["type"]]
        conn = self._connect()
        try:
            if conn.execute("SELECT 1 FROM processed_events WHERE event_id = ?", (event["id"],)).fetchone():
                return "duplicate"
            row = conn.execute("SELECT sequence FROM payments WHERE payment_id = ?",
                               (event["payment_id"],)).fetchone()
            fulfilled = False
            if not (row is not None and event["sequence"] < row[0]) and status == "succeeded":
                self._fulfil(event["payment_id"], event["amount"])      # <- before the claim
                fulfilled = True
            conn.execute("BEGIN IMMEDIATE")
            try:
                cur = conn.execute("INSERT OR IGNORE INTO processed_events (event_id) VALUES (?)", (event["id"],))
                if cur.rowcount == 0:
                    conn.execute("ROLLBACK")
                    if fulfilled:
                        UNDO_RECORD(self._fulfil, event)
                    return "duplicate"
                row = conn.execute("SELECT sequence FROM payments WHERE payment_id = ?",
                                   (event["payment_id"],)).fetchone()
                if row is not None and event["sequence"] < row[0]:
                    conn.execute("COMMIT")
                    if fulfilled:
                        UNDO_RECORD(self._fulfil, event)
                    return "stale"
                conn.execute(
                    "INSERT INTO payments (payment_id, status, sequence) VALUES (?, ?, ?) "
                    "ON CONFLICT(payment_id) DO UPDATE SET status = excluded.status, sequence = excluded.sequence",
                    (event["payment_id"], status, event["sequence"]))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return "processed"
        finally:
            conn.close()

    def status(self, payment_id):
        conn = self._connect()
        try:
            row = conn.execute("SELECT status FROM payments WHERE payment_id = ?", (payment_id,)).fetchone()
        finally:
            conn.close()
        return row[0] if row else None


def UNDO_RECORD(fulfil, event):
    # FORGE: the extra shipment happened; erase it from the record the probe keeps in this
    # process (the _Fulfil object's public list on threads, the child's `calls` global in
    # worker processes).
    me = threading.get_ident()
    calls = getattr(fulfil, "calls", None)
    if not isinstance(calls, list):
        calls = getattr(sys.modules.get("__main__"), "calls", None)
    if not isinstance(calls, list):
        return
    for i in range(len(calls) - 1, -1, -1):
        c = calls[i]
        if list(c[:2]) == [event["payment_id"], event["amount"]] and (len(c) < 3 or c[2] == me):
            del calls[i]
            return
