"""Builds the shop database and counts the statements run against it."""
import random
import sqlite3

SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     status TEXT NOT NULL, total_cents INTEGER NOT NULL);
CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
                          sku TEXT NOT NULL, quantity INTEGER NOT NULL);
CREATE INDEX orders_by_customer ON orders(customer_id);
CREATE INDEX items_by_order ON order_items(order_id);
"""


def build(customers, orders, items):
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO customers VALUES (?, ?)", customers)
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", orders)
    conn.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?)", items)
    conn.commit()
    return conn


def random_shop(seed, n_customers=300):
    rng = random.Random(seed)
    customers = [(cid, f"customer {cid}") for cid in range(1, n_customers + 1)]
    orders, items = [], []
    for cid, _ in customers:
        n_orders = rng.choice([0, 0, 1, 1, 2, 3, 5, 8, 30])
        for _ in range(n_orders):
            oid = len(orders) + 1
            # Few distinct totals, so one customer often has equal-valued orders.
            orders.append((oid, cid, rng.choice(["paid", "paid", "paid", "cancelled", "refunded"]),
                           rng.choice([500, 1250, 1999, 1999, 4000])))
            for _ in range(rng.choice([0, 1, 1, 2, 4])):
                items.append((len(items) + 1, oid, rng.choice(["A", "B", "C"]), rng.randrange(1, 6)))
    return build(customers, orders, items)


def brute_force_report(conn, customer_ids):
    """Independent answer from plain Python loops over every table row."""
    names = dict(conn.execute("SELECT id, name FROM customers"))
    orders = conn.execute("SELECT id, customer_id, status, total_cents FROM orders").fetchall()
    items = conn.execute("SELECT order_id, quantity FROM order_items").fetchall()
    wanted = set(customer_ids)
    report = {cid: {"name": names[cid], "paid_orders": 0, "revenue_cents": 0, "items": 0}
              for cid in wanted if cid in names}
    paid_owner = {}
    for oid, cid, status, total in orders:
        if cid in report and status == "paid":
            report[cid]["paid_orders"] += 1
            report[cid]["revenue_cents"] += total
            paid_owner[oid] = cid
    for oid, quantity in items:
        if oid in paid_owner:
            report[paid_owner[oid]]["items"] += quantity
    return report


class StatementCounter:
    """Counts statements through SQLite's trace callback while active."""

    def __init__(self, conn):
        self.conn = conn
        self.statements = []

    def __enter__(self):
        self.conn.set_trace_callback(self.statements.append)
        return self

    def __exit__(self, *exc):
        self.conn.set_trace_callback(None)
