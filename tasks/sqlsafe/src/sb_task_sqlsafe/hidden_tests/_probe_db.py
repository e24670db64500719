"""Runs in the solution's process: a real sqlite3 users table there, on a connection that
records the SQL text of every statement it is given, before any parameter is bound.

The test builds the rows, keeps its own copy of them and computes every expected answer
from that copy; this file only builds the database and reports what happened to it. No
expected value lives here.
"""

import os
import sqlite3
import tempfile

SCHEMA = ("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, "
          "country TEXT NOT NULL, age INTEGER NOT NULL, password_hash TEXT NOT NULL)")
INSERT = "INSERT INTO users (id, name, email, country, age, password_hash) VALUES (?, ?, ?, ?, ?, ?)"


class RecordingCursor(sqlite3.Cursor):
    def execute(self, sql, *args):
        self.connection.statements.append(sql)
        return super().execute(sql, *args)

    def executemany(self, sql, *args):
        self.connection.statements.append(sql)
        return super().executemany(sql, *args)

    def executescript(self, script):
        self.connection.statements.append(script)
        return super().executescript(script)


class RecordingConnection(sqlite3.Connection):
    """Sees the SQL text before parameters are bound, whichever way it is run."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.statements = []

    def cursor(self, factory=RecordingCursor):
        return super().cursor(factory)

    def execute(self, sql, *args):
        return self.cursor().execute(sql, *args)

    def executemany(self, sql, *args):
        return self.cursor().executemany(sql, *args)

    def executescript(self, script):
        return self.cursor().executescript(script)


def _fill(conn, rows):
    conn.execute(SCHEMA)
    conn.executemany(INSERT, [tuple(r) for r in rows])
    conn.commit()
    conn.statements.clear()


def make_db(rows):
    """An in-memory users table holding `rows` (id, name, email, country, age, hash)."""
    conn = sqlite3.connect(":memory:", factory=RecordingConnection)
    _fill(conn, rows)
    return conn


def statements(conn):
    """The SQL text of every statement run on `conn` since the last call; clears the record."""
    seen = list(conn.statements)
    conn.statements.clear()
    return seen


def snapshot(conn):
    """The schema and every row (read through a plain cursor, so nothing is recorded)."""
    tables = sqlite3.Cursor(conn).execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    rows = sqlite3.Cursor(conn).execute("SELECT * FROM users ORDER BY id").fetchall()
    return [[list(t) for t in tables], [list(r) for r in rows]]


def make_file_db_with_open_transaction(rows, pending):
    """A database file holding `rows`, and a connection to it on which the caller has
    inserted `pending` without committing: the caller's transaction is still open."""
    path = os.path.join(tempfile.mkdtemp(prefix="users-"), "users.db")
    conn = sqlite3.connect(path, factory=RecordingConnection)
    _fill(conn, rows)
    conn.executemany(INSERT, [tuple(r) for r in pending])
    conn.statements.clear()
    return conn, path


def transaction_state(conn, path):
    """Whether `conn` still has a transaction open, and the ids another connection sees."""
    other = sqlite3.connect(path)
    try:
        committed = [r[0] for r in other.execute("SELECT id FROM users ORDER BY id")]
    finally:
        other.close()
    return {"in_transaction": conn.in_transaction, "committed_ids": committed}


def roll_back(conn):
    conn.rollback()
    return [r[0] for r in sqlite3.Cursor(conn).execute("SELECT id FROM users ORDER BY id")]
