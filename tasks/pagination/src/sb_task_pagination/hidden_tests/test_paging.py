import random
import sqlite3

import pytest

from paging import fetch_page


def make_db(prices):
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price INTEGER NOT NULL)")
    conn.executemany(
        "INSERT INTO products (id, name, price) VALUES (?, ?, ?)",
        [(i + 1, f"p{i + 1}", p) for i, p in enumerate(prices)],
    )
    conn.commit()
    return conn


def sort_key(row):
    return (-row["price"], row["id"])


def expected_order(conn):
    """Independent answer: every row, sorted in Python."""
    rows = [{"id": i, "name": n, "price": p} for i, n, p in conn.execute("SELECT id, name, price FROM products")]
    return sorted(rows, key=sort_key)


def walk(conn, limit, between_pages=None):
    pages, cursor = [], None
    while True:
        page, cursor = fetch_page(conn, limit, cursor)
        pages.append(page)
        assert len(pages) < 1000, "pagination never ends"
        if cursor is None:
            return pages
        assert isinstance(cursor, str)
        if between_pages:
            between_pages(len(pages), page)


def flat(pages):
    return [row for page in pages for row in page]


def test_pages_cover_the_table_in_order():
    conn = make_db([random.Random(0).randrange(1, 50) for _ in range(23)])
    pages = walk(conn, 5)
    assert [len(p) for p in pages] == [5, 5, 5, 5, 3]
    assert flat(pages) == expected_order(conn)


def test_exact_multiple_has_no_empty_last_page():
    conn = make_db([random.Random(1).randrange(1, 50) for _ in range(20)])
    pages = walk(conn, 5)
    assert [len(p) for p in pages] == [5, 5, 5, 5]
    assert flat(pages) == expected_order(conn)


def test_empty_table():
    conn = make_db([])
    assert fetch_page(conn, 10) == ([], None)


def test_all_prices_tied():
    conn = make_db([700] * 17)
    pages = walk(conn, 4)
    assert [row["id"] for row in flat(pages)] == list(range(1, 18))


def test_ties_straddling_a_page_boundary():
    # ids 1..8; prices sorted: 9(id 4), 5(ids 1,3,6,7), 2(ids 2,5,8)
    conn = make_db([5, 2, 5, 9, 2, 5, 5, 2])
    pages = walk(conn, 3)
    assert [[row["id"] for row in page] for page in pages] == [[4, 1, 3], [6, 7, 2], [5, 8]]


@pytest.mark.parametrize("limit", [1, 2, 7, 100])
def test_heavy_ties_any_page_size(limit):
    rng = random.Random(limit)
    conn = make_db([rng.choice([10, 20, 30]) for _ in range(40)])
    assert flat(walk(conn, limit)) == expected_order(conn)


def test_rows_inserted_before_the_cursor_do_not_shift_the_next_page():
    conn = make_db([100 - i for i in range(30)])  # id 1 is the most expensive
    original = expected_order(conn)

    def insert_expensive(n_pages, page):
        conn.execute("INSERT INTO products (name, price) VALUES (?, ?)", (f"new{n_pages}", 1000 + n_pages))

    seen = flat(walk(conn, 4, insert_expensive))
    assert seen == original, "rows sorting before the cursor belong to pages already read"


def test_rows_deleted_before_the_cursor_do_not_cause_gaps():
    conn = make_db([100 - i for i in range(30)])
    original = expected_order(conn)

    def delete_first_row_read(n_pages, page):
        conn.execute("DELETE FROM products WHERE id = ?", (page[0]["id"],))

    assert flat(walk(conn, 4, delete_first_row_read)) == original


def test_cursor_row_itself_deleted():
    conn = make_db([50, 40, 40, 40, 30, 30, 20, 10])
    original = expected_order(conn)

    def delete_last_row_read(n_pages, page):
        conn.execute("DELETE FROM products WHERE id = ?", (page[-1]["id"],))

    assert flat(walk(conn, 3, delete_last_row_read)) == original


def test_rows_inserted_ahead_of_the_cursor_are_included():
    conn = make_db([90, 80, 70, 60, 50, 40, 30, 20])

    def insert_cheap(n_pages, page):
        if n_pages == 1:
            conn.execute("INSERT INTO products (id, name, price) VALUES (100, 'late', 35)")
            conn.execute("INSERT INTO products (id, name, price) VALUES (99, 'tie', 80)")

    ids = [row["id"] for row in flat(walk(conn, 3, insert_cheap))]
    # 99 (price 80) sorts before the cursor (price 70, id 3): already behind us.
    assert ids == [1, 2, 3, 4, 5, 6, 100, 7, 8]


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_random_churn_never_duplicates_or_skips(seed):
    """Rows present from start to end appear exactly once; everything returned is in
    strictly increasing sort order (so no row twice); new rows behind the cursor
    never appear."""
    rng = random.Random(seed)
    conn = make_db([rng.randrange(1, 12) for _ in range(60)])
    deleted = set()

    def churn(n_pages, page):
        for _ in range(rng.randrange(0, 4)):
            conn.execute("INSERT INTO products (name, price) VALUES ('churn', ?)", (rng.randrange(1, 12),))
        ids = [r[0] for r in conn.execute("SELECT id FROM products")]
        for victim in rng.sample(ids, min(len(ids), rng.randrange(0, 3))):
            conn.execute("DELETE FROM products WHERE id = ?", (victim,))
            deleted.add(victim)

    start = expected_order(conn)
    seen = flat(walk(conn, 5, churn))
    keys = [sort_key(r) for r in seen]
    assert keys == sorted(set(keys)), "rows out of order or repeated"
    survivors = [r for r in start if r["id"] not in deleted]
    seen_ids = {r["id"] for r in seen}
    assert [r["id"] for r in survivors if r["id"] not in seen_ids] == [], "rows skipped"
    # The walk ended only when nothing sorted after its last row.
    tail_now = [r for r in expected_order(conn) if sort_key(r) > keys[-1]]
    assert tail_now == []


@pytest.mark.parametrize("bad", ["garbage", "", "%%%"])
def test_invalid_cursor_is_a_value_error(bad):
    conn = make_db([1, 2, 3])
    with pytest.raises(ValueError):
        fetch_page(conn, 2, bad)
