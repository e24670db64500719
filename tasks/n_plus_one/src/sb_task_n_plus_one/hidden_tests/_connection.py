"""The connection customer_report receives: a DB-API subset over a database in the judge.

The database, the connection to it and the statement count all live here, in the test's
process; the solution gets a handle, and every call it makes is a round trip that runs
here. So nothing the solution does in its own process (replacing a trace callback,
rewriting a recorder found on the stack, patching sqlite3) reaches the count. The real
connection and cursor stay in private attributes, which the wire never lets the
solution's side read: had `execute` returned the sqlite3 cursor itself, its public
`.connection` would hand over `set_trace_callback`. The cursor is sb.sqlite_facade's.
"""

from sb.sqlite_facade import Cursor

OFFERED = "execute, executemany, cursor and in_transaction"
# Far above the 3 statements a call may take, so a call that reaches it has failed the
# count already: refusing more statements from then on only keeps a per-row loop (about
# 1,000 statements for 300 customers, each several round trips over the wire) from
# running into the time limit, so it fails with its count instead of timing out.
STATEMENT_CAP = 100


class ShopConnection:
    """execute, executemany, cursor() and in_transaction, as on sqlite3.Connection.
    Everything else is refused with a message that names what is offered."""

    def __init__(self, db):
        self._db = db
        self._statements = None  # the count's record while a counted call runs

    def execute(self, sql, params=()):
        return self.cursor().execute(sql, params)

    def executemany(self, sql, seq_of_params):
        return self.cursor().executemany(sql, seq_of_params)

    def cursor(self):
        return Cursor(self._db.cursor(), lambda sql, sets: self._within_cap(len(sets)))

    @property
    def in_transaction(self):
        return self._db.in_transaction

    def _count(self, call):
        """(call(), every statement SQLite ran on the connection meanwhile). Private, so
        the wire never lets the solution's side reach it: were it public, a solution could
        call it from inside its own count and so switch the recording off."""
        statements = self._statements = []
        self._db.set_trace_callback(statements.append)
        try:
            result = call()
        finally:
            self._db.set_trace_callback(None)
            self._statements = None
        return result, statements

    def _within_cap(self, more):
        if self._statements is not None and len(self._statements) + more > STATEMENT_CAP:
            raise RuntimeError(f"{len(self._statements)} statements in this call already: "
                               f"the caller refuses to run more than {STATEMENT_CAP}")

    def __getattr__(self, name):
        raise AttributeError(f"the connection handed to customer_report has no {name!r}: "
                             f"it offers {OFFERED}, nothing else")

    def __enter__(self):
        raise TypeError("the connection handed to customer_report is not a context manager "
                        "(`with conn:` would commit or roll back the caller's transaction)")

