"""The shop's rows, generated here; the database built from them in the solution's process
(by _probe_shop.py); and the independent answer, computed here from the rows alone."""
import random

from sb.judge import probe


class Shop:
    """The rows of one shop, and a handle to the real database holding them."""

    def __init__(self, customers, orders, items):
        self.customers, self.orders, self.items = list(customers), list(orders), list(items)
        self.conn = shop_probe().build(*self._lists())

    def _lists(self):
        return [[list(r) for r in rows] for rows in (self.customers, self.orders, self.items)]

    def expected(self, customer_ids):
        return brute_force_report(self.customers, self.orders, self.items, customer_ids)

    def run(self, customer_ids):
        """(report, statements) from one call, counted by SQLite's trace callback."""
        seen = shop_probe().counted_report(self.conn, list(customer_ids))
        assert seen["recorder_intact"], "the trace callback was replaced or removed during the call"
        return seen["report"], seen["statements"]


def shop_probe():
    return probe("_probe_shop.py")


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


def random_shop(seed, n_customers=300):
    return Shop(*random_rows(seed, n_customers))


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
