"""The users the tests search, their database (in the solution's process, built by
_probe_db.py) and the independent answers, computed here from the rows themselves."""
from sb.judge import probe

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


def rows():
    """Every row as stored: ids 1.. in list order, and a password hash no query may return."""
    return [[i + 1, *u, f"$argon2id$secret{i:03d}"] for i, u in enumerate(USERS)]


def db():
    return probe("_probe_db.py")


def make_db():
    """A fresh table in the solution's process; the handle is what search_users receives."""
    return db().make_db(rows())


def statements(conn):
    return db().statements(conn)


def snapshot(conn):
    return db().snapshot(conn)


def all_users():
    """Every user as search_users returns it, in id order (computed here, never read back)."""
    return [dict(zip(KEYS, (i + 1, *u))) for i, u in enumerate(USERS)]
