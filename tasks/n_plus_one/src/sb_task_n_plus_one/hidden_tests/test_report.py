import random

import pytest

from report import customer_report

from _shop import Shop, assert_same_report, random_rows, random_shop

MAX_STATEMENTS = 3


def checked(shop, customer_ids):
    """The report for `customer_ids`, after checking it against the brute force, its
    types, the number of statements it took, and that it left no object (table, index,
    view, trigger; main or temp) on the connection."""
    schema = shop.schema()
    got, statements = shop.run(customer_ids)
    assert len(statements) <= MAX_STATEMENTS, f"{len(statements)} statements, e.g. {statements[:4]}"
    assert shop.schema() == schema, (
        f"the call changed the schema: {schema} -> {shop.schema()}; statements: {statements[:4]}")
    assert_same_report(got, shop.expected(customer_ids))
    return got


SMALL_CUSTOMERS = [(1, "Ada"), (2, "Brook"), (3, "Cy"), (4, "Dee"), (5, "Eli")]
SMALL_ORDERS = [
    # Ada: three paid orders, two with the same total, one with no items.
    (10, 1, "paid", 1999), (11, 1, "paid", 1999), (12, 1, "paid", 500),
    # Brook: one paid order with three item lines.
    (20, 2, "paid", 4000),
    # Cy: only a cancelled and a refunded order.
    (30, 3, "cancelled", 700), (31, 3, "refunded", 900),
    # Dee: no orders at all.  Eli: a paid order and a cancelled one.
    (50, 5, "paid", 300), (51, 5, "cancelled", 300),
]
SMALL_ITEMS = [
    (1, 10, "A", 2), (2, 11, "B", 1),
    (3, 20, "A", 1), (4, 20, "B", 2), (5, 20, "C", 3),
    (6, 30, "A", 9), (7, 50, "C", 4), (8, 51, "C", 4),
]


def small_shop():
    return Shop(SMALL_CUSTOMERS, SMALL_ORDERS, SMALL_ITEMS)


def test_hand_computed_report():
    shop = small_shop()
    want = {
        1: {"name": "Ada", "paid_orders": 3, "revenue_cents": 1999 + 1999 + 500, "items": 3},
        2: {"name": "Brook", "paid_orders": 1, "revenue_cents": 4000, "items": 6},
        3: {"name": "Cy", "paid_orders": 0, "revenue_cents": 0, "items": 0},
        4: {"name": "Dee", "paid_orders": 0, "revenue_cents": 0, "items": 0},
        5: {"name": "Eli", "paid_orders": 1, "revenue_cents": 300, "items": 4},
    }
    assert_same_report(checked(shop, [1, 2, 3, 4, 5]), want)
    assert_same_report(customer_report(shop.conn, [1, 2, 3, 4, 5]), want)  # a plain call, uncounted


def test_customer_with_many_item_lines_is_not_double_counted():
    shop = small_shop()
    assert checked(shop, [2])[2] == {"name": "Brook", "paid_orders": 1, "revenue_cents": 4000, "items": 6}


def test_customers_without_paid_orders_are_present_with_zeros():
    shop = small_shop()
    assert checked(shop, [3, 4]) == {
        3: {"name": "Cy", "paid_orders": 0, "revenue_cents": 0, "items": 0},
        4: {"name": "Dee", "paid_orders": 0, "revenue_cents": 0, "items": 0},
    }


def test_only_requested_and_existing_customers():
    shop = small_shop()
    assert set(checked(shop, [5, 1, 999])) == {1, 5}
    assert checked(shop, []) == {}
    assert checked(shop, [999, 998]) == {}


def test_orders_left_behind_by_a_deleted_customer():
    """Customer 7 was deleted but its orders and items remain (SQLite does not enforce
    the foreign key by default): asking for 7 gives nothing, as the original code does."""
    orders = SMALL_ORDERS + [(70, 7, "paid", 1234), (71, 7, "paid", 99), (72, 7, "cancelled", 5)]
    items = SMALL_ITEMS + [(70, 70, "A", 3), (71, 71, "B", 1), (72, 72, "C", 2)]
    shop = Shop(SMALL_CUSTOMERS, orders, items)
    assert checked(shop, [7]) == {}
    assert set(checked(shop, [1, 7, 2])) == {1, 2}


def test_only_the_exact_paid_status_counts():
    customers = [(1, "Ada"), (2, "Brook")]
    orders = [(1, 1, "paid", 100), (2, 1, "PAID", 200), (3, 1, "Paid", 400), (4, 1, "paid ", 800),
              (5, 2, "pending", 1600), (6, 2, "paid", 3200), (7, 2, "unpaid", 6400)]
    items = [(i, i, "A", i) for i in range(1, 8)]
    shop = Shop(customers, orders, items)
    got = checked(shop, [1, 2])
    assert got[1]["revenue_cents"] == 100 and got[1]["items"] == 1
    assert got[2]["revenue_cents"] == 3200 and got[2]["items"] == 6


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_shop_matches_brute_force(seed):
    shop = random_shop(seed)
    checked(shop, list(range(1, 301)))


def test_subset_in_any_order_matches_brute_force():
    shop = random_shop(3)
    ids = list(range(7, 300, 7)) + [0, -4, 301, 10**6]
    random.Random(3).shuffle(ids)
    checked(shop, ids)


def test_pre_existing_rows_with_sparse_ids_and_large_amounts():
    """Ids far apart up to the 64-bit limit; totals whose sums pass 2**53 (exact only as
    integers), negative adjustments, zero quantities."""
    rng = random.Random(9)
    cids = rng.sample(range(1, 2**62), 60) + [2**63 - 1, 2**53 + 1]
    customers = [(cid, f"c{n}") for n, cid in enumerate(cids)]
    orders, items = [], []
    for cid, _ in customers:
        for _ in range(rng.choice([0, 1, 3, 6])):
            oid = rng.randrange(1, 2**62)
            orders.append((oid, cid, rng.choice(["paid", "paid", "cancelled"]),
                           rng.choice([2**52 + 1, 2**51 + 3, -7, 0, 1999])))
            for _ in range(rng.choice([0, 1, 3])):
                items.append((rng.randrange(1, 2**62), oid, "A", rng.choice([0, 1, 2**40 + 1])))
    shop = Shop(customers, orders, items)
    asked = cids[::2] + [cid + 1 for cid in cids[:5]]
    got = checked(shop, asked)
    assert any(row["revenue_cents"] > 2**53 for row in got.values())


@pytest.mark.parametrize("n_customers", [0, 1, 10, 300])
def test_statement_count_does_not_grow_with_customers(n_customers):
    shop = random_shop(4)
    checked(shop, list(range(1, n_customers + 1)))


def test_many_customers_in_one_call():
    """2,000 customers, more than some drivers allow as separate parameters."""
    shop = random_shop(5, n_customers=2000)
    checked(shop, list(range(1, 2001)))


def test_the_database_is_unchanged_and_a_second_call_agrees():
    shop = random_shop(6, n_customers=50)
    before = shop.snapshot()
    first = checked(shop, list(range(1, 51)))
    second = checked(shop, list(range(1, 51)))
    assert first == second
    checked(shop, list(range(20, 31)))
    assert shop.snapshot() == before


def test_the_callers_open_transaction_is_left_alone(tmp_path):
    """The application inserted an order on this connection and has not committed: the
    report (same connection) counts it, and afterwards the transaction is still open and
    the order still uncommitted, for the caller to commit or roll back."""
    customers, orders, items = random_rows(7, n_customers=20)
    pending = (len(orders) + 1, 3, "paid", 777)
    shop = Shop.with_open_transaction(customers, orders, items, [pending], tmp_path / "shop.db")
    checked(shop, list(range(1, 21)))
    assert shop.db.in_transaction is True, "the caller's transaction was ended (committed or rolled back)"
    assert shop.committed_order_ids() == sorted(o[0] for o in orders), "the caller's pending order was committed"
    assert pending in shop.db.execute("SELECT * FROM orders").fetchall(), "the caller's pending order was rolled back"


def test_the_connection_is_left_as_it_was_found(tmp_path):
    """No temporary table (or index, view, trigger) left on the connection, nothing
    attached, and no transaction left open: on a connection with no transaction open, and
    on one where the caller has a transaction open (which must stay open)."""
    shop = random_shop(8, n_customers=40)
    before = shop.connection_state()
    assert before["temp_schema"] == [] and before["in_transaction"] is False  # the test's own setup
    checked(shop, list(range(1, 41)))
    checked(shop, list(range(5, 16)))
    after = shop.connection_state()
    assert after["temp_schema"] == before["temp_schema"], (
        f"customer_report left temporary objects on the caller's connection: {after['temp_schema']}")
    assert after["databases"] == before["databases"], f"databases attached: {after['databases']}"
    assert after["in_transaction"] is False, "customer_report left a transaction open on the connection"

    customers, orders, items = random_rows(9, n_customers=20)
    pending = (len(orders) + 1, 4, "paid", 555)
    shop = Shop.with_open_transaction(customers, orders, items, [pending], tmp_path / "shop.db")
    before = shop.connection_state()
    assert before["temp_schema"] == [] and before["in_transaction"] is True  # the test's own setup
    checked(shop, list(range(1, 21)))
    after = shop.connection_state()
    assert after == before, f"the connection changed during the call: {before} -> {after}"


@pytest.mark.parametrize("caller_transaction", [False, True], ids=["no_transaction", "callers_transaction_open"])
@pytest.mark.parametrize("indexes", [False, True], ids=["the_prompts_tables_only", "with_indexes"])
def test_no_object_is_added_to_the_database(indexes, caller_transaction, tmp_path):
    """The database as the prompt shows it (its three tables, no index) and one with
    indexes, each with and without a transaction of the caller's open: after two calls
    its schema (the same objects, the same schema cookie, so nothing created and dropped
    again either), its header and every row are exactly as before. An index the solution
    adds because it finds none (CREATE INDEX IF NOT EXISTS) is an object left behind."""
    customers, orders, items = random_rows(10, n_customers=30)
    if caller_transaction:
        pending = (len(orders) + 1, 2, "paid", 321)
        shop = Shop.with_open_transaction(customers, orders, items, [pending], tmp_path / "shop.db",
                                          indexes=indexes)
    else:
        shop = Shop(customers, orders, items, indexes=indexes)
    before = shop.snapshot()
    assert any(kind == "index" for kind, *_ in before[0]["main"]) is indexes  # the test's own setup
    checked(shop, list(range(1, 31)))
    checked(shop, list(range(10, 21)))
    after = shop.snapshot()
    assert after[0] == before[0], f"the database's schema changed: {before[0]} -> {after[0]}"
    assert after == before, "the database's header or rows changed"
    assert shop.db.in_transaction is caller_transaction
