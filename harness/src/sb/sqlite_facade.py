"""A DB-API cursor over a judge-side sqlite3 cursor (a task author's tool).

A task whose solution is handed a database connection keeps the database, the real
sqlite3 connection and every observation of it in the judge; the solution gets a handle
to a facade whose every call is a round trip that runs here (see the n_plus_one and
sqlsafe tasks). The connection facade is the task's own (what it offers, what it counts
or records); the cursor is the same everywhere, so it lives here: `Cursor(real_cursor,
before)` calls `before(sql, parameter_sets)` ahead of every statement it gives SQLite
(one set for `execute`, each set for `executemany`), which is where a task records or
caps. The real cursor stays in a private attribute, which the wire never lets the
solution's side read. Standalone (the standard library only): the grader lays it beside
sb.judge in the judge.
"""

from __future__ import annotations

CURSOR_OFFERS = ("execute, executemany, fetchone, fetchmany, fetchall, close, iteration, description, "
                 "rowcount, lastrowid and arraysize")


SQLITE_ATTACH = 24  # sqlite3.SQLITE_ATTACH: also what VACUUM INTO asks for
SQLITE_OK, SQLITE_DENY = 0, 1


def _no_other_files(action, *names):
    """The solution's SQL runs in the judge: it may use the task's database and nothing
    else. ATTACH (and VACUUM INTO) would make or fill a file of the solution's choosing on
    the judge's side, one that a later grading served by the same judge could read."""
    return SQLITE_DENY if action == SQLITE_ATTACH else SQLITE_OK


def _read_only(name):
    return property(lambda self: getattr(self._cursor, name), doc=f"the real cursor's {name}, read only")


class Cursor:
    """A DB-API cursor: execute, executemany, fetchone, fetchmany, fetchall, iteration,
    description, rowcount, lastrowid, arraysize (read only) and close. Rows are tuples.
    Anything else is refused with a message that names what is offered."""

    def __init__(self, cursor, before):
        self._cursor, self._before = cursor, before
        cursor.connection.set_authorizer(_no_other_files)

    def execute(self, sql, params=()):
        sql, params = statement_text(sql), parameters(params)
        self._before(sql, [params])
        self._cursor.execute(sql, params)
        return self

    def executemany(self, sql, seq_of_params):
        sql = statement_text(sql)
        params = [parameters(p) for p in seq_of_params]
        self._before(sql, params)
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

    description, rowcount, lastrowid, arraysize = (_read_only(name) for name in
                                                   ("description", "rowcount", "lastrowid", "arraysize"))

    def __iter__(self):
        return self

    def __next__(self):
        row = self._cursor.fetchone()
        if row is None:
            raise StopIteration
        return row

    def __getattr__(self, name):
        raise AttributeError(f"the cursor has no {name!r}: it offers {CURSOR_OFFERS}, nothing else")


def statement_text(sql):
    """The statement's text as a plain str (what arrived by value), so what a task records
    is exactly what SQLite is given."""
    if not isinstance(sql, str):
        raise TypeError(f"the SQL must be a str, not {type(sql).__name__}")
    return str(sql)


def parameters(params):
    """A dict (named parameters) or a tuple: what arrived by value from the solution, or
    the items of a handle it passed, read once here."""
    return dict(params) if isinstance(params, dict) else tuple(params)
