"""Probe: runs the solver's query in the worker, against a database built from the rows the
judge sends. It holds no expected value: it returns what SQLite returned (column names, rows
with their Python types, and how many rows the statement changed)."""
import sqlite3


def run(schema, setup, customers, orders, query):
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(schema)
        for statement in setup:
            conn.execute(statement)
        conn.executemany("INSERT INTO customers VALUES (?, ?)", customers)
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", orders)
        conn.commit()
        before = conn.total_changes
        try:
            cursor = conn.execute(query)
            rows = [tuple(row) for row in cursor.fetchall()]
        except (sqlite3.Error, sqlite3.Warning) as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}
        columns = None if cursor.description is None else [d[0] for d in cursor.description]
        changes = conn.total_changes - before
        counts = [conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in ("customers", "orders")]
        return {"columns": columns, "rows": rows, "changes": changes, "counts": counts}
    finally:
        conn.close()
