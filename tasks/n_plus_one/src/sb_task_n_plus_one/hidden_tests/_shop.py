"""The shop's rows, generated here; the database built from them, also here (in the
judge); and the independent answer, computed here from the rows alone."""
import random
import sqlite3

from report import customer_report

from _connection import ShopConnection

# The tables exactly as the prompt shows them ...
TABLES = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     status TEXT NOT NULL, total_cents INTEGER NOT NULL);
CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
                          sku TEXT NOT NULL, quantity INTEGER NOT NULL);
"""
# ... and the indexes a real shop would have on them (the prompt shows none). A database
# with only TABLES is where a solution that adds an index it thinks is missing (CREATE
# INDEX IF NOT EXISTS under a name of its own) leaves an object behind: with these
# indexes present, one that happens to pick the same name creates nothing.
INDEXES = """
CREATE INDEX orders_by_customer ON orders(customer_id);
CREATE INDEX items_by_order ON order_items(order_id);
"""
SCHEMA = TABLES + INDEXES


class Shop:
    """The rows of one shop, the real database holding them (`db`, here in the judge), and
    the connection customer_report is given (`conn`, over `db`: the solution gets a handle)."""

    def __init__(self, customers, orders, items, path=":memory:", indexes=True):
        self.customers, self.orders, self.items = list(customers), list(orders), list(items)
        # The solution may call from threads of its own; the wire serves each such call on a
        # judge thread of its own, so the connection must not be tied to the thread that made
        # it. SQLite's serialized mode (sqlite3.threadsafety == 3) makes sharing it safe.
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.executescript(SCHEMA if indexes else TABLES)
        self.db.executemany("INSERT INTO customers VALUES (?, ?)", self.customers)
        self.db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", self.orders)
        self.db.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?)", self.items)
        self.db.commit()
        self.conn = ShopConnection(self.db)

    @classmethod
    def with_open_transaction(cls, customers, orders, items, pending_orders, path, indexes=True):
        """A database file, and a connection to it on which the caller has inserted
        `pending_orders` without committing: the caller's transaction is still open."""
        shop = cls(customers, orders, items, path=str(path), indexes=indexes)
        shop.db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", pending_orders)
        shop.orders += list(pending_orders)
        shop.path = str(path)
        return shop

    def expected(self, customer_ids):
        return brute_force_report(self.customers, self.orders, self.items, customer_ids)

    def run(self, customer_ids):
        """(report, statements) from one call: every statement SQLite ran on the database
        during it, recorded here, where the solution cannot reach the record."""
        return self.conn._count(lambda: customer_report(self.conn, list(customer_ids)))

    def schema(self):
        """Every object on the connection: the main database's schema (tables, indexes,
        views, triggers, SQLite's own sqlite_stat tables), the temporary schema, and the
        main schema's cookie, which SQLite bumps on every CREATE, DROP or ALTER there, so
        an object created and dropped again within the call still shows. (The temp schema
        is read first: reading it attaches 'temp', as connection_state says.)"""
        temp = self.db.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_temp_master ORDER BY type, name").fetchall()
        main = self.db.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
        cookie = self.db.execute("PRAGMA main.schema_version").fetchone()[0]
        return {"main": main, "temp": temp, "schema_version": cookie}

    def snapshot(self):
        """The whole main database: its schema (schema()), the header's user_version and
        application_id, and every row of every table in it, whatever its name."""
        schema = self.schema()
        header = [self.db.execute(f"PRAGMA main.{p}").fetchone()[0] for p in ("user_version", "application_id")]
        tables = [name for kind, name, _, _ in schema["main"] if kind == "table"]
        rows = {t: sorted(self.db.execute(f'SELECT * FROM main."{t}"').fetchall(), key=repr)
                for t in tables}
        return schema, header, rows

    def committed_order_ids(self):
        """The orders another connection to the file sees: what has been committed."""
        other = sqlite3.connect(self.path)
        try:
            return [r[0] for r in other.execute("SELECT id FROM orders ORDER BY id")]
        finally:
            other.close()

    def connection_state(self):
        """What a caller would notice about the connection itself: the temporary schema
        (tables, indexes, views, triggers), the databases attached to it, and whether a
        transaction is open. (The temp schema is read first: reading it attaches 'temp'.)"""
        temp = self.db.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_temp_master ORDER BY type, name").fetchall()
        databases = [(r[1], r[2]) for r in self.db.execute("PRAGMA database_list")]
        return {"temp_schema": temp, "databases": databases, "in_transaction": self.db.in_transaction}


def random_rows(seed, n_customers=300, first_id=1, id_step=1):
    rng = random.Random(seed)
    customers = [(first_id + k * id_step, f"customer {k + 1}") for k in range(n_customers)]
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
    return customers, orders, items


def random_shop(seed, n_customers=300, indexes=True):
    return Shop(*random_rows(seed, n_customers), indexes=indexes)


def brute_force_report(customers, orders, items, customer_ids):
    """Independent answer from plain Python loops over every row."""
    names = dict(customers)
    wanted = set(customer_ids)
    report = {cid: {"name": names[cid], "paid_orders": 0, "revenue_cents": 0, "items": 0}
              for cid in wanted if cid in names}
    paid_owner = {}
    for oid, cid, status, total in orders:
        if cid in report and status == "paid":
            report[cid]["paid_orders"] += 1
            report[cid]["revenue_cents"] += total
            paid_owner[oid] = cid
    for _, oid, _, quantity in items:
        if oid in paid_owner:
            report[paid_owner[oid]]["items"] += quantity
    return report


def assert_same_report(got, want):
    """Equal, and with the stated types: int keys, str names, int counts (4498.0 == 4498
    in Python, so equality alone would let a float through)."""
    assert got == want
    assert type(got) is dict
    for cid, row in got.items():
        assert type(cid) is int
        assert type(row) is dict and sorted(row) == ["items", "name", "paid_orders", "revenue_cents"]
        assert type(row["name"]) is str
        for key in ("paid_orders", "revenue_cents", "items"):
            assert type(row[key]) is int, f"{key} of customer {cid} is a {type(row[key]).__name__}, not an int"
