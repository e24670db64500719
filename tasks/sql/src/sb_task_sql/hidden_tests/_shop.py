"""The shop data, the oracle, and the probe call that runs the solver's query.sql in the
solution's process (the judge never executes the query itself)."""
import random

from sb.judge import probe, solution_source

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


# Statements run on the fresh database before the rows go in: they change how SQLite may
# plan and return the query, never what a correct query returns.
PLAIN = ()
INDEXED = ("CREATE INDEX customers_by_name ON customers(name DESC, id DESC)",
           "CREATE INDEX orders_by_customer ON orders(customer_id, status, placed_at)")


def solver_query() -> str:
    return solution_source("query.sql")


def run_query(customers, orders, setup=PLAIN):
    """Return (column names, rows) of the solver's query, run in the solution's process on a
    database built there from these rows; a broken query is an assertion."""
    sql = solver_query()
    assert sql.strip(), "query.sql is missing or empty"
    got = probe("_probe_sqlite.py").run(SCHEMA, list(setup), customers, orders, sql)
    assert "error" not in got, f"query.sql failed to run: {got.get('error')}"
    assert got["columns"] is not None, "query.sql returned no result set (no SELECT?)"
    assert got["changes"] == 0 and got["counts"] == [len(customers), len(orders)], \
        f"query.sql changed the database ({got['changes']} rows changed)"
    return got["columns"], got["rows"]


def typed(rows):
    """Rows with each value's exact type beside it: (1, 'A', 2, 30) and (1, 'A', 2, 30.0)
    are equal in Python, and the report promises integers."""
    return [tuple((type(v).__name__, v) for v in row) for row in rows]


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
