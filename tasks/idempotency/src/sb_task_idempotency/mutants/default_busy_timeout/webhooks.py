"""Exactly-once processing of payment webhooks, backed by SQLite."""
import sqlite3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS processed_events (
    event_id TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS payments (
    payment_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    sequence INTEGER NOT NULL
);
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
        # isolation_level=None: we issue BEGIN/COMMIT ourselves; sqlite3's busy
        # timeout makes concurrent deliveries queue on the write lock.
        return sqlite3.connect(self._db_path, isolation_level=None)

    def handle(self, event):
        status = _STATUS_BY_TYPE[event["type"]]
        conn = self._connect()
        try:
            # BEGIN IMMEDIATE takes the database write lock before the check, so
            # the check and the act are one atomic step across threads, handler
            # instances and processes.
            conn.execute("BEGIN IMMEDIATE")
            try:
                outcome = self._apply(conn, event, status)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return outcome
        finally:
            conn.close()

    def _apply(self, conn, event, status):
        seen = conn.execute(
            "SELECT 1 FROM processed_events WHERE event_id = ?", (event["id"],)
        ).fetchone()
        if seen:
            return "duplicate"
        conn.execute("INSERT INTO processed_events (event_id) VALUES (?)", (event["id"],))
        row = conn.execute(
            "SELECT sequence FROM payments WHERE payment_id = ?", (event["payment_id"],)
        ).fetchone()
        if row is not None and event["sequence"] < row[0]:
            return "stale"
        conn.execute(
            "INSERT INTO payments (payment_id, status, sequence) VALUES (?, ?, ?) "
            "ON CONFLICT(payment_id) DO UPDATE SET status = excluded.status, "
            "sequence = excluded.sequence",
            (event["payment_id"], status, event["sequence"]),
        )
        if status == "succeeded":
            # Inside the transaction: if fulfilment raises, everything rolls back
            # and a redelivery processes the event again.
            self._fulfil(event["payment_id"], event["amount"])
        return "processed"

    def status(self, payment_id):
        conn = self._connect()
        try:
            row = conn.execute(
                "SELECT status FROM payments WHERE payment_id = ?", (payment_id,)
            ).fetchone()
        finally:
            conn.close()
        return row[0] if row else None
