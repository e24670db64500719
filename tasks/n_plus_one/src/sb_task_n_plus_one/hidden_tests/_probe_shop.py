"""Runs in the solution's process: the shop database there, and the statement count.

The test generates every row, keeps them, and computes every expected report from its
own copy; this file only builds the database, runs customer_report on it with SQLite's
trace callback recording, and reports what it saw. No expected value lives here.
"""

import os
import sqlite3
import tempfile

import report

SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     status TEXT NOT NULL, total_cents INTEGER NOT NULL);
CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
                          sku TEXT NOT NULL, quantity INTEGER NOT NULL);
CREATE INDEX orders_by_customer ON orders(customer_id);
CREATE INDEX items_by_order ON order_items(order_id);
"""
CANARY = "SELECT 'sb-trace-canary'"


def _fill(conn, customers, orders, items):
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO customers VALUES (?, ?)", [tuple(r) for r in customers])
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", [tuple(r) for r in orders])
    conn.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?)", [tuple(r) for r in items])
    conn.commit()


def build(customers, orders, items):
    conn = sqlite3.connect(":memory:")
    _fill(conn, customers, orders, items)
    return conn


def build_file_with_open_transaction(customers, orders, items, pending_orders):
    """A database file, and a connection to it on which the caller has inserted
    `pending_orders` without committing: the caller's transaction is still open."""
    path = os.path.join(tempfile.mkdtemp(prefix="shop-"), "shop.db")
    conn = sqlite3.connect(path)
    _fill(conn, customers, orders, items)
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", [tuple(r) for r in pending_orders])
    return conn, path


def counted_report(conn, customer_ids):
    """customer_report(conn, customer_ids) with every statement SQLite runs recorded.
    After it returns, one statement of ours checks the recorder is still in place."""
    seen = []
    conn.set_trace_callback(seen.append)
    try:
        result = report.customer_report(conn, list(customer_ids))
        during = len(seen)
        sqlite3.Cursor(conn).execute(CANARY).fetchall()
        canary_seen = CANARY in seen[during:]
    finally:
        conn.set_trace_callback(None)
    return {"report": result, "statements": seen[:during], "recorder_intact": canary_seen}


def snapshot(conn):
    """The main database's schema and every row of every table."""
    cur = sqlite3.Cursor(conn)
    tables = [list(r) for r in cur.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name")]
    rows = {t: [list(r) for r in sqlite3.Cursor(conn).execute(f"SELECT * FROM {t} ORDER BY id")]
            for t in ("customers", "orders", "order_items")}
    return [tables, rows]


def transaction_state(conn, path):
    other = sqlite3.connect(path)
    try:
        committed = [r[0] for r in other.execute("SELECT id FROM orders ORDER BY id")]
    finally:
        other.close()
    return {"in_transaction": conn.in_transaction, "committed_order_ids": committed}


def connection_state(conn):
    """What a caller would notice about the connection itself: the temporary schema
    (tables, indexes, views, triggers), the databases attached to it, and whether a
    transaction is open. (The temp schema is read first: reading it attaches 'temp'.)"""
    temp = [list(r) for r in sqlite3.Cursor(conn).execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_temp_master ORDER BY type, name")]
    databases = [[r[1], r[2]] for r in sqlite3.Cursor(conn).execute("PRAGMA database_list")]
    return {"temp_schema": temp, "databases": databases, "in_transaction": conn.in_transaction}
