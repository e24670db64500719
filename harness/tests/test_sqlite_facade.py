"""sb.sqlite_facade: the judge-side cursor the SQL tasks hand their solutions."""

from __future__ import annotations

import sqlite3

import pytest

from sb.grading import JUDGE_HELPERS
from sb.sqlite_facade import Cursor, parameters, statement_text


@pytest.fixture
def db():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (a INTEGER, b TEXT)")
    yield conn
    conn.close()


def facade(db, seen):
    return Cursor(db.cursor(), lambda sql, sets: seen.append((sql, list(sets))))


def test_every_statement_is_noted_before_sqlite_runs_it(db):
    seen = []
    cursor = facade(db, seen)
    cursor.executemany("INSERT INTO t VALUES (?, ?)", [[1, "x"], (2, "y")])
    with pytest.raises(sqlite3.OperationalError):
        cursor.execute("SELECT nope FROM t WHERE a = :a", {"a": 1})
    assert seen == [("INSERT INTO t VALUES (?, ?)", [(1, "x"), (2, "y")]),
                    ("SELECT nope FROM t WHERE a = :a", [{"a": 1}])]  # noted though it failed


def test_it_reads_like_a_dbapi_cursor(db):
    db.executemany("INSERT INTO t VALUES (?, ?)", [(i, str(i)) for i in range(5)])
    cursor = facade(db, [])
    assert cursor.execute("SELECT a FROM t ORDER BY a") is cursor
    assert cursor.fetchone() == (0,)
    assert cursor.fetchmany(2) == [(1,), (2,)]
    assert list(cursor) == [(3,), (4,)]
    assert cursor.description[0][0] == "a"
    cursor.execute("INSERT INTO t VALUES (?, ?)", (9, "9"))
    assert (cursor.rowcount, cursor.lastrowid, cursor.arraysize) == (1, 6, 1)
    cursor.close()
    with pytest.raises(sqlite3.ProgrammingError):
        cursor.fetchall()


@pytest.mark.parametrize("statement", ["ATTACH DATABASE '{path}' AS carried", "VACUUM INTO '{path}'"])
def test_no_statement_makes_or_fills_a_file_beside_the_tasks_database(db, tmp_path, statement):
    """A red team carried a solution's source from one grading to the next through a file
    that ATTACH made on the judge's side, where a warm judge's later gradings could read it."""
    path = tmp_path / "carried.db"
    with pytest.raises(sqlite3.DatabaseError, match="not authorized|authorization denied"):
        facade(db, []).execute(statement.format(path=path))
    assert not path.exists()
    assert facade(db, []).execute("SELECT count(*) FROM t").fetchone() == (0,)  # the task's own still works


def test_anything_else_is_refused_by_name(db):
    cursor = facade(db, [])
    with pytest.raises(AttributeError, match="has no 'connection'.*it offers execute"):
        _ = cursor.connection


def test_only_text_is_a_statement_and_parameters_are_read_once():
    with pytest.raises(TypeError, match="must be a str, not bytes"):
        statement_text(b"SELECT 1")
    assert type(statement_text(type("S", (str,), {})("SELECT 1"))) is str
    assert parameters(iter([1, 2])) == (1, 2)
    assert parameters({"a": 1}) == {"a": 1}


def test_the_grader_lays_it_beside_sb_judge():
    assert "sqlite_facade.py" in JUDGE_HELPERS
