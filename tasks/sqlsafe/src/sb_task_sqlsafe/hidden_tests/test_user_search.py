import sqlite3

import pytest

from user_search import search_users

from _db import USERS, all_users, make_db, snapshot

ADVERSARIAL = [
    "' OR '1'='1",
    "' OR 1=1 --",
    "'; DROP TABLE users; --",
    "Robert'); DROP TABLE users;--",
    '" OR ""="',
    "1; DELETE FROM users",
    "' UNION SELECT password_hash, 1, 1, 1, 1 FROM users --",
    "'||(SELECT password_hash FROM users LIMIT 1)||'",
    "admin'--",
    "') OR ('1'='1",
    "' OR 'a' LIKE 'a",
    "'; ATTACH DATABASE 'x.db' AS x; --",
    "1' AND sleep(5)#",
    "\n' OR 1=1 --",
    "%",
    "_",
    "%%",
    "a%",
    "_dmin",
    "\\",
    "\\%",
    "*",
    "?",
    ":name",
    "@p",
    "$1",
    "[a-z]",
    "O'Brien",
    "'",
    "''",
    "--",
    "/*",
    "*/",
    ";",
    "Zoë",
    "🙂",
    "ann",
    "",
    " ",
    "\u02bc OR 1=1",
]


def test_corpus_is_large_enough():
    # The brief requires at least 30 adversarial strings; keep the corpus honest.
    assert len(set(ADVERSARIAL)) >= 30
    conn = make_db()
    assert search_users(conn, {"name_contains": "Ann"}) == [u for u in all_users(conn) if "Ann" in u["name"]]


def test_no_filters_returns_everything_by_id():
    conn = make_db()
    assert search_users(conn) == all_users(conn)


@pytest.mark.parametrize("text", ADVERSARIAL, ids=[f"s{i}" for i in range(len(ADVERSARIAL))])
def test_name_contains_is_a_literal_case_sensitive_substring(text):
    conn = make_db()
    before = snapshot(conn)
    got = search_users(conn, {"name_contains": text})
    assert got == [u for u in all_users(conn) if text in u["name"]]
    assert snapshot(conn) == before


@pytest.mark.parametrize("text", ADVERSARIAL, ids=[f"s{i}" for i in range(len(ADVERSARIAL))])
def test_email_and_country_filters_match_exactly(text):
    conn = make_db()
    before = snapshot(conn)
    users = all_users(conn)
    assert search_users(conn, {"email": text}) == [u for u in users if u["email"] == text]
    got = search_users(conn, {"country_in": [text, "GB"]})
    assert got == [u for u in users if u["country"] in (text, "GB")]
    assert snapshot(conn) == before


def test_filters_combine_with_and():
    conn = make_db()
    got = search_users(conn, {"name_contains": "n", "country_in": ["US", "GB", "DE"], "min_age": 30})
    want = [u for u in all_users(conn) if "n" in u["name"] and u["country"] in ("US", "GB", "DE") and u["age"] >= 30]
    assert got == want and len(want) >= 3


def test_empty_country_list_matches_nothing():
    conn = make_db()
    assert search_users(conn, {"country_in": []}) == []


def test_values_are_bound_never_written_into_the_sql():
    conn = make_db()
    search_users(
        conn,
        {"name_contains": "Zq7Marker", "email": "Zq7Mail", "country_in": ["Zq7Land", "Zq7Other"], "min_age": 73519},
    )
    text = "\n".join(conn.statements)
    assert conn.statements, "the query must go through conn.execute or a cursor from conn"
    for value in ("Zq7Marker", "Zq7Mail", "Zq7Land", "Zq7Other", "73519"):
        assert value not in text, f"{value!r} was written into the SQL text"


@pytest.mark.parametrize("sort", ["id", "name", "email", "country", "age"])
@pytest.mark.parametrize("direction", ["asc", "desc"])
def test_sorting_with_id_as_tiebreaker(sort, direction):
    conn = make_db()
    users = all_users(conn)
    # Independent answer: Python's stable sort (reverse=True keeps equal items in
    # their existing, ascending-id order). SQLite's BINARY collation orders UTF-8
    # text by code point, as Python's str comparison does.
    want = sorted(users, key=lambda u: u["id"])
    want = sorted(want, key=lambda u: u[sort], reverse=(direction == "desc"))
    assert search_users(conn, sort=sort, direction=direction) == want


def test_limit():
    conn = make_db()
    assert search_users(conn, sort="age", direction="desc", limit=3) == sorted(
        all_users(conn), key=lambda u: (-u["age"], u["id"])
    )[:3]


BAD_SORTS = [
    "password_hash",
    "name; DROP TABLE users",
    "name DESC",
    "(SELECT password_hash FROM users)",
    "1",
    "Name",
    "random()",
    "",
    "id--",
    "age, password_hash",
]


@pytest.mark.parametrize("sort", BAD_SORTS, ids=[f"sort{i}" for i in range(len(BAD_SORTS))])
def test_sort_column_outside_the_allow_list_is_rejected(sort):
    conn = make_db()
    before = snapshot(conn)
    with pytest.raises(ValueError):
        search_users(conn, sort=sort)
    assert snapshot(conn) == before


BAD_DIRECTIONS = ["ASC; DROP TABLE users", "descending", "", "desc, password_hash", "DESC"]


@pytest.mark.parametrize("direction", BAD_DIRECTIONS, ids=[f"dir{i}" for i in range(len(BAD_DIRECTIONS))])
def test_direction_outside_the_allow_list_is_rejected(direction):
    conn = make_db()
    with pytest.raises(ValueError):
        search_users(conn, direction=direction)


@pytest.mark.parametrize("key", ["password_hash", "name", "1=1 OR name_contains", "NAME_CONTAINS"])
def test_unknown_filter_is_rejected(key):
    conn = make_db()
    with pytest.raises(ValueError):
        search_users(conn, {key: "x"})


@pytest.mark.parametrize("value", ["18 OR 1=1", "18", 18.5, True, None])
def test_min_age_must_be_an_int(value):
    conn = make_db()
    with pytest.raises(ValueError):
        search_users(conn, {"min_age": value})


@pytest.mark.parametrize("limit", [0, -1, 501, "10; DROP TABLE users", 2.5])
def test_limit_outside_range_is_rejected(limit):
    conn = make_db()
    with pytest.raises(ValueError):
        search_users(conn, limit=limit)


def test_password_hash_never_returned():
    conn = make_db()
    for row in search_users(conn, {"name_contains": ""}, limit=500):
        assert set(row) == {"id", "name", "email", "country", "age"}
    assert len(USERS) == len(search_users(conn, limit=500))
