"""Hidden tests: the solver's query.sql runs against real SQLite databases (built and queried
in the solution's process by a probe) and is compared row for row, in order and with exact
value types, with the rows a plain-Python computation gives."""
import pytest

from _shop import COLUMNS, INDEXED, PLAIN, expected_rows, random_shop, run_query, typed

SMALL_CUSTOMERS = [(1, "Ana"), (2, "bob"), (3, "Cem"), (4, "Dee"), (5, "Ana"), (6, "Eve")]
SMALL_ORDERS = [
    (1, 1, "2024-03-01 10:00:00", "paid", 1000),
    (2, 1, "2024-12-31 23:59:59", "paid", 500),
    (3, 1, "2024-05-05 09:30:00", "refunded", 9999),
    (4, 1, "2023-12-31 23:59:59", "paid", 700),
    (5, 2, "2024-01-01 00:00:00", "paid", 1500),
    (6, 3, "2024-06-15 12:00:00", "paid", 1500),
    (7, 4, "2024-07-07 08:00:00", "paid", 2000),
    (8, 4, "2024-08-08 18:45:00", "paid", 0),
    (9, 5, "2025-01-01 00:00:00", "paid", 300),
    (10, 5, "2024-02-02 14:00:00", "pending", 200),
]
SMALL_EXPECTED = [
    (4, "Dee", 2, 2000),
    (1, "Ana", 2, 1500),
    (3, "Cem", 1, 1500),
    (2, "bob", 1, 1500),
    (5, "Ana", 0, 0),
    (6, "Eve", 0, 0),
]


def test_columns_are_named_as_specified():
    columns, _ = run_query(SMALL_CUSTOMERS, SMALL_ORDERS)
    assert columns == COLUMNS


def test_small_shop_rows_in_order():
    _, rows = run_query(SMALL_CUSTOMERS, SMALL_ORDERS)
    assert rows == SMALL_EXPECTED


def test_oracle_agrees_with_hand_computed_rows():
    """Guards the oracle itself, and checks the query on the same data."""
    assert expected_rows(SMALL_CUSTOMERS, SMALL_ORDERS) == SMALL_EXPECTED
    _, rows = run_query(SMALL_CUSTOMERS, SMALL_ORDERS)
    assert rows == SMALL_EXPECTED


def test_customers_without_qualifying_orders_show_zeros():
    customers = [(10, "Nia"), (11, "Oz"), (12, "Pat")]
    orders = [(1, 11, "2023-05-01 10:00:00", "paid", 400),
              (2, 12, "2024-05-01 10:00:00", "refunded", 400),
              (3, 12, "2024-05-02 10:00:00", "paid", 50)]
    _, rows = run_query(customers, orders)
    assert rows == [(12, "Pat", 1, 50), (10, "Nia", 0, 0), (11, "Oz", 0, 0)]


def test_year_boundaries():
    customers = [(1, "A"), (2, "B"), (3, "C"), (4, "D")]
    orders = [(1, 1, "2023-12-31 23:59:59", "paid", 100),
              (2, 2, "2024-01-01 00:00:00", "paid", 200),
              (3, 3, "2024-12-31 23:59:59", "paid", 300),
              (4, 4, "2025-01-01 00:00:00", "paid", 400)]
    _, rows = run_query(customers, orders)
    assert rows == [(3, "C", 1, 300), (2, "B", 1, 200), (1, "A", 0, 0), (4, "D", 0, 0)]


def test_only_paid_orders_count():
    customers = [(1, "Kim"), (2, "Lee")]
    orders = [(1, 1, "2024-03-03 03:03:03", "paid", 10),
              (2, 1, "2024-03-04 03:03:03", "pending", 1000),
              (3, 1, "2024-03-05 03:03:03", "refunded", 1000),
              (4, 2, "2024-03-06 03:03:03", "paid", 20)]
    _, rows = run_query(customers, orders)
    assert rows == [(2, "Lee", 1, 20), (1, "Kim", 1, 10)]


def test_ties_broken_by_case_sensitive_name_then_id():
    customers = [(9, "bea"), (3, "Bea"), (7, "Bea"), (1, "Abe"), (5, "al")]
    orders = [(i, cid, "2024-09-09 09:09:09", "paid", 100)
              for i, cid in enumerate([9, 3, 7, 1, 5], 1)]
    _, rows = run_query(customers, orders)
    assert rows == [(1, "Abe", 1, 100), (3, "Bea", 1, 100), (7, "Bea", 1, 100),
                    (5, "al", 1, 100), (9, "bea", 1, 100)]


@pytest.mark.parametrize("seed, setup", [(0, PLAIN), (1, PLAIN), (2, PLAIN), (3, INDEXED), (4, INDEXED)])
def test_random_shop_matches_python(seed, setup):
    customers, orders = random_shop(seed)
    _, rows = run_query(customers, orders, setup)
    assert typed(rows) == typed(expected_rows(customers, orders))


def test_counts_and_totals_are_integers():
    """SQLite's TOTAL() and a REAL zero compare equal to the integers in Python; the report's
    columns are integers, so the types are compared too."""
    _, rows = run_query(SMALL_CUSTOMERS, SMALL_ORDERS)
    assert typed(rows) == typed(SMALL_EXPECTED)


def test_large_totals_are_exact():
    big = 2**53 + 1  # the first integer a float cannot hold; the sums stay far below 2**63
    customers = [(1, "Big"), (2, "Small")]
    orders = [(1, 1, "2024-04-04 04:04:04", "paid", big), (2, 1, "2024-04-05 04:04:04", "paid", big),
              (3, 2, "2024-04-06 04:04:04", "paid", 1)]
    _, rows = run_query(customers, orders)
    assert typed(rows) == typed([(1, "Big", 2, 2 * big), (2, "Small", 1, 1)])


def test_non_ascii_names_tie_in_binary_order():
    """SQLite's default text comparison is binary over UTF-8, which is code point order:
    'Z' < 'a' < 'z' < 'É' < 'é' < 'Ω'. Python's own str order is the oracle."""
    names = ["\u00e9mile", "Zo\u00eb", "zoe", "\u00c9mile", "\u03a9", "a", "Zoe", "\u00e9mile"]
    customers = [(10 + i, name) for i, name in enumerate(names)]
    orders = [(i + 1, cid, "2024-10-10 10:10:10", "paid", 70) for i, (cid, _) in enumerate(customers)]
    _, rows = run_query(customers, orders, INDEXED)
    expected = sorted(((cid, name, 1, 70) for cid, name in customers), key=lambda r: (r[1], r[0]))
    assert rows == expected


def test_shared_names_stay_separate_customers():
    customers = [(4, "Sam"), (2, "Sam"), (9, "Sam")]
    orders = [(1, 4, "2024-01-02 00:00:00", "paid", 10), (2, 9, "2024-01-03 00:00:00", "paid", 10),
              (3, 9, "2024-01-04 00:00:00", "paid", 5)]
    _, rows = run_query(customers, orders, INDEXED)
    assert typed(rows) == typed([(9, "Sam", 2, 15), (4, "Sam", 1, 10), (2, "Sam", 0, 0)])
