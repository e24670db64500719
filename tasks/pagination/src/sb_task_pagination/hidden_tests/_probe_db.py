"""Runs in the solution's process: a real sqlite3 database there, for fetch_page to use.

The test keeps its own copy of every row and computes every expected page from it; this
file only builds the database and applies the changes the test asks for. No expected
value lives here.
"""

import sqlite3

SCHEMA = "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price INTEGER NOT NULL)"


def connect(rows, statements=()):
    """A fresh in-memory database holding `rows` (id, name, price), after running
    `statements` (indexes the application created before any row was paged)."""
    conn = sqlite3.connect(":memory:")
    conn.execute(SCHEMA)
    for statement in statements:
        conn.execute(statement)
    conn.executemany("INSERT INTO products (id, name, price) VALUES (?, ?, ?)", [tuple(r) for r in rows])
    conn.commit()
    return conn


def insert(conn, rows):
    conn.executemany("INSERT INTO products (id, name, price) VALUES (?, ?, ?)", [tuple(r) for r in rows])
    conn.commit()


def delete(conn, ids):
    conn.executemany("DELETE FROM products WHERE id = ?", [(i,) for i in ids])
    conn.commit()
