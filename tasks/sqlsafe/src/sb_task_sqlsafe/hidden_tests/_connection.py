"""The connection search_users receives: a DB-API subset over a users database in the judge.

The database, the real sqlite3 connection to it and the record of every statement (its
SQL text exactly as the solution wrote it, before any parameter is bound, and the
parameters bound to it) all live here, in the test's process. The solution gets a
handle, and every call it makes is a round trip that runs here: there is no sqlite3
connection in the solution's process to open a side door on (a plain `sqlite3.Cursor`,
a patched class, a second connection), and nothing it does there reaches the record.

The real connection and cursor stay in private attributes, which the wire never lets the
solution's side read: had `execute` returned the sqlite3 cursor itself, its public
`.connection` would hand over the unrecorded real connection. The cursor is
sb.sqlite_facade's; it calls `_note` ahead of every statement it gives SQLite.
"""

from sb.sqlite_facade import Cursor

OFFERED = "execute, executemany, cursor, commit, rollback, in_transaction and `with conn:`"


class UsersConnection:
    """execute, executemany, cursor(), commit, rollback, in_transaction and the context
    manager, each as on sqlite3.Connection. Everything else is refused with a message that
    names what is offered. Every statement is recorded (text, parameters) before it runs."""

    def __init__(self, db):
        self._db = db
        self._record = []  # (sql text, bound parameters) of every statement, in order

    def execute(self, sql, params=()):
        return self.cursor().execute(sql, params)

    def executemany(self, sql, seq_of_params):
        return self.cursor().executemany(sql, seq_of_params)

    def cursor(self):
        return Cursor(self._db.cursor(), self._note)

    def commit(self):
        self._db.commit()

    def rollback(self):
        self._db.rollback()

    @property
    def in_transaction(self):
        return self._db.in_transaction

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # As sqlite3.Connection does: commit on success, roll back on an exception.
        if exc_type is None:
            self._db.commit()
        else:
            self._db.rollback()
        return False

    def _note(self, sql, parameter_sets):
        for params in parameter_sets:
            self._record.append((sql, params))
        if not parameter_sets:  # executemany over nothing: the text was still given
            self._record.append((sql, ()))

    def _take(self):
        """Every (text, parameters) recorded since the last call; clears the record.
        Private, so the solution's side can never reach it."""
        seen = list(self._record)
        self._record.clear()
        return seen

    def __getattr__(self, name):
        raise AttributeError(f"the connection handed to search_users has no {name!r}: "
                             f"it offers {OFFERED}, nothing else")

