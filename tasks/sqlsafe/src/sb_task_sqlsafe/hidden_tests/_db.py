"""A users table, and a connection that records every statement it is given."""
import sqlite3


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
]


def make_db():
    conn = sqlite3.connect(":memory:", factory=RecordingConnection)
    conn.execute(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, "
        "country TEXT NOT NULL, age INTEGER NOT NULL, password_hash TEXT NOT NULL)"
    )
    conn.executemany(
        "INSERT INTO users (name, email, country, age, password_hash) VALUES (?, ?, ?, ?, ?)",
        [u + (f"$argon2id$secret{i:03d}",) for i, u in enumerate(USERS)],
    )
    conn.commit()
    conn.statements.clear()
    return conn


def snapshot(conn):
    tables = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    rows = conn.execute("SELECT * FROM users ORDER BY id").fetchall()
    return tables, rows


def all_users(conn):
    keys = ("id", "name", "email", "country", "age")
    return [dict(zip(keys, r)) for r in conn.execute(f"SELECT {', '.join(keys)} FROM users ORDER BY id")]
