import pytest

from report import customer_report

from _shop import StatementCounter, brute_force_report, build, random_shop

MAX_STATEMENTS = 3


def small_shop():
    customers = [(1, "Ada"), (2, "Brook"), (3, "Cy"), (4, "Dee"), (5, "Eli")]
    orders = [
        # Ada: three paid orders, two with the same total, one with no items.
        (10, 1, "paid", 1999), (11, 1, "paid", 1999), (12, 1, "paid", 500),
        # Brook: one paid order with three item lines.
        (20, 2, "paid", 4000),
        # Cy: only a cancelled and a refunded order.
        (30, 3, "cancelled", 700), (31, 3, "refunded", 900),
        # Dee: no orders at all.  Eli: a paid order and a cancelled one.
        (50, 5, "paid", 300), (51, 5, "cancelled", 300),
    ]
    items = [
        (1, 10, "A", 2), (2, 11, "B", 1),
        (3, 20, "A", 1), (4, 20, "B", 2), (5, 20, "C", 3),
        (6, 30, "A", 9), (7, 50, "C", 4), (8, 51, "C", 4),
    ]
    return build(customers, orders, items)


def test_hand_computed_report():
    conn = small_shop()
    assert customer_report(conn, [1, 2, 3, 4, 5]) == {
        1: {"name": "Ada", "paid_orders": 3, "revenue_cents": 1999 + 1999 + 500, "items": 3},
        2: {"name": "Brook", "paid_orders": 1, "revenue_cents": 4000, "items": 6},
        3: {"name": "Cy", "paid_orders": 0, "revenue_cents": 0, "items": 0},
        4: {"name": "Dee", "paid_orders": 0, "revenue_cents": 0, "items": 0},
        5: {"name": "Eli", "paid_orders": 1, "revenue_cents": 300, "items": 4},
    }


def test_customer_with_many_item_lines_is_not_double_counted():
    conn = small_shop()
    assert customer_report(conn, [2])[2] == {"name": "Brook", "paid_orders": 1, "revenue_cents": 4000, "items": 6}


def test_customers_without_paid_orders_are_present_with_zeros():
    conn = small_shop()
    report = customer_report(conn, [3, 4])
    assert report == {
        3: {"name": "Cy", "paid_orders": 0, "revenue_cents": 0, "items": 0},
        4: {"name": "Dee", "paid_orders": 0, "revenue_cents": 0, "items": 0},
    }


def test_only_requested_and_existing_customers():
    conn = small_shop()
    assert set(customer_report(conn, [5, 1, 999])) == {1, 5}
    assert customer_report(conn, []) == {}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_shop_matches_brute_force(seed):
    conn = random_shop(seed)
    ids = list(range(1, 301))
    assert customer_report(conn, ids) == brute_force_report(conn, ids)


def test_subset_matches_brute_force():
    conn = random_shop(3)
    ids = list(range(7, 300, 7))
    assert customer_report(conn, ids) == brute_force_report(conn, ids)


@pytest.mark.parametrize("n_customers", [1, 10, 300])
def test_statement_count_does_not_grow_with_customers(n_customers):
    conn = random_shop(4)
    ids = list(range(1, n_customers + 1))
    with StatementCounter(conn) as counter:
        report = customer_report(conn, ids)
    assert len(counter.statements) <= MAX_STATEMENTS, counter.statements[:5]
    assert report == brute_force_report(conn, ids)


def test_many_customers_in_one_call():
    """2,000 customers, more than some drivers allow as separate parameters."""
    conn = random_shop(5, n_customers=2000)
    ids = list(range(1, 2001))
    with StatementCounter(conn) as counter:
        report = customer_report(conn, ids)
    assert len(counter.statements) <= MAX_STATEMENTS
    assert report == brute_force_report(conn, ids)
