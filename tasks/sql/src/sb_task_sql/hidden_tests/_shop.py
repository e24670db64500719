"""Build the shop database and run the solver's query.sql against it."""
import pathlib
import random
import sqlite3

SCHEMA = """
CREATE TABLE customers (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE orders (
    id           INTEGER PRIMARY KEY,
    customer_id  INTEGER NOT NULL REFERENCES customers(id),
    placed_at    TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('paid', 'pending', 'refunded')),
    amount_cents INTEGER NOT NULL CHECK (amount_cents >= 0)
);
"""
COLUMNS = ["customer_id", "name", "paid_orders", "total_cents"]


def build(customers, orders) -> sqlite3.Connection:
    """customers: [(id, name)]; orders: [(id, customer_id, placed_at, status, amount_cents)]."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO customers VALUES (?, ?)", customers)
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", orders)
    conn.commit()
    return conn


def solver_query() -> str:
    path = pathlib.Path.cwd() / "query.sql"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def run_query(conn: sqlite3.Connection):
    """Return (column names, rows) of the solver's query; a broken query is an assertion."""
    sql = solver_query()
    assert sql.strip(), "query.sql is missing or empty"
    try:
        cursor = conn.execute(sql)
        rows = cursor.fetchall()
    except (sqlite3.Error, sqlite3.Warning) as exc:
        raise AssertionError(f"query.sql failed to run: {exc}") from None
    assert cursor.description is not None, "query.sql returned no result set (no SELECT?)"
    return [d[0] for d in cursor.description], [tuple(r) for r in rows]


def expected_rows(customers, orders):
    """Independent oracle: plain Python loops over the same data."""
    totals = {cid: [0, 0] for cid, _ in customers}
    for _, cid, placed_at, status, amount in orders:
        if status == "paid" and placed_at[:4] == "2024":
            totals[cid][0] += 1
            totals[cid][1] += amount
    rows = [(cid, name, totals[cid][0], totals[cid][1]) for cid, name in customers]
    return sorted(rows, key=lambda r: (-r[3], r[1], r[0]))


def random_shop(seed: int):
    rng = random.Random(seed)
    names = ["Ana", "ana", "Bo", "bo", "Cy", "Dee", "Eve", "Zed", "al", "Al"]
    ids = rng.sample(range(1, 500), 40)
    customers = [(cid, rng.choice(names)) for cid in ids]
    boundary = ["2023-12-31 23:59:59", "2024-01-01 00:00:00", "2024-12-31 23:59:59",
                "2025-01-01 00:00:00"]
    orders = []
    for oid in range(1, 301):
        if rng.random() < 0.15:
            placed = rng.choice(boundary)
        else:
            placed = (f"{rng.choice([2023, 2024, 2024, 2025])}-{rng.randint(1, 12):02d}-"
                      f"{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00")
        status = rng.choice(["paid", "paid", "paid", "pending", "refunded"])
        amount = rng.choice([0, 100, 250, 999, 1500, rng.randint(1, 5000)])
        orders.append((oid, rng.choice(ids[:30]), placed, status, amount))
    return customers, orders
