"""The connection search_users receives: a DB-API subset over a users database in the judge.

The database, the real sqlite3 connection to it and the record of every statement (its
SQL text exactly as the solution wrote it, before any parameter is bound, and the
parameters bound to it) all live here, in the test's process. The solution gets a
handle, and every call it makes is a round trip that runs here: there is no sqlite3
connection in the solution's process to open a side door on (a plain `sqlite3.Cursor`,
a patched class, a second connection), and nothing it does there reaches the record.

The real connection and cursor stay in private attributes, which the wire never lets the
solution's side read: had `execute` returned the sqlite3 cursor itself, its public
`.connection` would hand over the unrecorded real connection.
"""

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
        return UsersCursor(self._db.cursor(), self._record)

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

    def _take(self):
        """Every (text, parameters) recorded since the last call; clears the record.
        Private, so the solution's side can never reach it."""
        seen = list(self._record)
        self._record.clear()
        return seen

    def __getattr__(self, name):
        raise AttributeError(f"the connection handed to search_users has no {name!r}: "
                             f"it offers {OFFERED}, nothing else")


class UsersCursor:
    """A DB-API cursor: execute, executemany, fetchone, fetchmany, fetchall, iteration,
    description, rowcount, lastrowid, arraysize (read only) and close. Rows are tuples."""

    def __init__(self, cursor, record):
        self._cursor, self._record = cursor, record

    def execute(self, sql, params=()):
        sql, params = _text(sql), _parameters(params)
        self._record.append((sql, params))
        self._cursor.execute(sql, params)
        return self

    def executemany(self, sql, seq_of_params):
        sql = _text(sql)
        params = [_parameters(p) for p in seq_of_params]
        for p in params:
            self._record.append((sql, p))
        if not params:
            self._record.append((sql, ()))
        self._cursor.executemany(sql, params)
        return self

    def fetchone(self):
        return self._cursor.fetchone()

    def fetchmany(self, size=None):
        return self._cursor.fetchmany(self._cursor.arraysize if size is None else size)

    def fetchall(self):
        return self._cursor.fetchall()

    def close(self):
        self._cursor.close()

    @property
    def description(self):
        return self._cursor.description

    @property
    def rowcount(self):
        return self._cursor.rowcount

    @property
    def lastrowid(self):
        return self._cursor.lastrowid

    @property
    def arraysize(self):
        return self._cursor.arraysize

    def __iter__(self):
        return self

    def __next__(self):
        row = self._cursor.fetchone()
        if row is None:
            raise StopIteration
        return row

    def __getattr__(self, name):
        raise AttributeError(f"the cursor has no {name!r}: it offers execute, executemany, fetchone, "
                             "fetchmany, fetchall, close, iteration, description, rowcount, lastrowid "
                             "and arraysize, nothing else")


def _text(sql):
    """The statement's text as a plain str (what arrived by value), so the record holds
    exactly what SQLite is given."""
    if not isinstance(sql, str):
        raise TypeError(f"the SQL must be a str, not {type(sql).__name__}")
    return str(sql)


def _parameters(params):
    """A dict (named parameters) or a tuple: what arrived by value from the solution, or
    the items of a handle it passed, read once here."""
    return dict(params) if isinstance(params, dict) else tuple(params)
