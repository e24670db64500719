"""The users the tests search; their database, built here in the judge (search_users gets
only a handle to a UsersConnection over it, see _connection.py); the judge's record of
every statement run on it; and the independent answers, computed here from the rows."""
import os
import sqlite3
import tempfile

from _connection import UsersConnection

USERS = [
    # (name, email, country, age)
    ("Ann", "ann@example.com", "GB", 34),
    ("ann", "ann2@example.com", "US", 19),
    ("ANN", "ANN@example.com", "FR", 61),
    ("O'Brien", "obrien@example.ie", "IE", 45),
    ("Robert'); DROP TABLE users;--", "bobby@tables.org", "US", 12),
    ("100% Real", "real@example.com", "GB", 28),
    ("snake_case", "snake@example.com", "DE", 33),
    ("Jo_hn", "john@example.com", "DE", 52),
    ("back\\slash", "slash@example.com", "NL", 40),
    ("Zoë", "zoe@example.fr", "FR", 23),
    ("🙂 smile", "smile@example.com", "JP", 37),
    ("Bobby Tables", "' OR '1'='1", "US", 44),
    ("admin", "admin@example.com", "US", 99),
    ("Mallory", "mallory@example.com", "' OR 1=1 --", 31),
    ("Eve", "eve@example.com", "GB", 34),
    ("Trent", "trent@example.com", "NL", 34),
    ("dash--dash", "dash@example.com", "SE", 47),
    ("semi;colon", "semi@example.com", "SE", 50),
    ("quote\"double", "dq@example.com", "SE", 18),
    ("percent%%twice", "pp@example.com", "IT", 66),
    ("star*glob?[x]", "glob@example.com", "gb", 34),
    ("zoë", "zoe2@example.fr", "FR", 0),
]

KEYS = ("id", "name", "email", "country", "age")

SCHEMA = ("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, "
          "country TEXT NOT NULL, age INTEGER NOT NULL, password_hash TEXT NOT NULL)")
INSERT = "INSERT INTO users (id, name, email, country, age, password_hash) VALUES (?, ?, ?, ?, ?, ?)"


def rows():
    """Every row as stored: ids 1.. in list order, and a password hash no query may return."""
    return [[i + 1, *u, f"$argon2id$secret{i:03d}"] for i, u in enumerate(USERS)]


def _fill(db, table_rows):
    db.execute(SCHEMA)
    db.executemany(INSERT, [tuple(r) for r in table_rows])
    db.commit()


def _connect(path):
    """The solution may call from threads of its own; the wire serves each such call on a
    judge thread of its own, so the connection must not be tied to the thread that made it.
    SQLite's serialized mode (sqlite3.threadsafety == 3) makes sharing it safe."""
    return sqlite3.connect(path, check_same_thread=False)


def make_db(table_rows=None):
    """A fresh in-memory users table here in the judge (the given rows, else rows()), and
    the connection search_users receives over it."""
    db = _connect(":memory:")
    _fill(db, rows() if table_rows is None else table_rows)
    return UsersConnection(db)


def recorded(conn):
    """(SQL text, bound parameters) of every statement run on `conn` since the last call,
    from the judge's own record; clears it."""
    return conn._take()


def statements(conn):
    """The SQL text of every statement run on `conn` since the last call; clears the record."""
    return [sql for sql, _ in recorded(conn)]


def snapshot(conn):
    """The schema and every row, read on the real connection (so nothing is recorded)."""
    tables = conn._db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    table_rows = conn._db.execute("SELECT * FROM users ORDER BY id").fetchall()
    return [[list(t) for t in tables], [list(r) for r in table_rows]]


def make_file_db_with_open_transaction(table_rows, pending):
    """A database file holding `table_rows`, and a connection to it on which the caller has
    inserted `pending` without committing: the caller's transaction is still open."""
    path = os.path.join(tempfile.mkdtemp(prefix="users-"), "users.db")
    db = _connect(path)
    _fill(db, table_rows)
    db.executemany(INSERT, [tuple(r) for r in pending])
    return UsersConnection(db), path


def transaction_state(conn, path):
    """Whether `conn` still has a transaction open, and the ids another connection sees."""
    other = sqlite3.connect(path)
    try:
        committed = [r[0] for r in other.execute("SELECT id FROM users ORDER BY id")]
    finally:
        other.close()
    return {"in_transaction": conn._db.in_transaction, "committed_ids": committed}


def roll_back(conn):
    conn._db.rollback()
    return [r[0] for r in conn._db.execute("SELECT id FROM users ORDER BY id")]


def all_users():
    """Every user as search_users returns it, in id order (computed here, never read back)."""
    return [dict(zip(KEYS, (i + 1, *u))) for i, u in enumerate(USERS)]
