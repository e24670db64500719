import random

import pytest
from sb.judge import probe

from paging import fetch_page

# Indexes an application may already have on the table. With one on `price`, SQLite
# answers `ORDER BY price DESC` by walking the index backwards, so rows tied on price
# come back in descending id order (with `(price, name)`, in descending name order):
# an ORDER BY that leaves ties to the engine is exposed.
INDEXES = {
    "no_index": [],
    "price": ["CREATE INDEX products_price ON products (price)"],
    "price_name": ["CREATE INDEX products_price_name ON products (price, name)"],
    "price_desc_id_desc": ["CREATE INDEX products_price_id ON products (price DESC, id DESC)"],
}


class Table:
    """The products table: a real sqlite3 database in the solution's process, mirrored
    here. Every change goes to both; every expected answer comes from the mirror."""

    def __init__(self, rows, statements=()):
        self.rows = {row_id: (name, price) for row_id, name, price in rows}
        assert len(self.rows) == len(rows)
        self.conn = probe("_probe_db.py").connect([list(r) for r in rows], list(statements))

    def insert(self, *rows):
        for row_id, name, price in rows:
            assert row_id not in self.rows
            self.rows[row_id] = (name, price)
        probe("_probe_db.py").insert(self.conn, [list(r) for r in rows])

    def delete(self, *ids):
        for row_id in ids:
            del self.rows[row_id]
        probe("_probe_db.py").delete(self.conn, list(ids))

    def ordered(self):
        """Every row, sorted here in Python: price descending, then id ascending."""
        rows = [{"id": i, "name": n, "price": p} for i, (n, p) in self.rows.items()]
        return sorted(rows, key=sort_key)


def sort_key(row):
    return (-row["price"], row["id"])


def make_table(prices, statements=(), names=None):
    names = names or [f"p{i + 1}" for i in range(len(prices))]
    return Table([(i + 1, names[i], p) for i, p in enumerate(prices)], statements)


def walk(table, limit, between_pages=None):
    """Every page, each checked as it arrives against the mirror as it is at that fetch:
    the first `limit` rows strictly after the last row read (deleted or not), and a
    cursor exactly when more rows follow."""
    pages, cursor, last_key = [], None, None
    while True:
        page, cursor = fetch_page(table.conn, limit, cursor)
        after = [r for r in table.ordered() if last_key is None or sort_key(r) > last_key]
        assert type(page) is list
        assert page == after[:limit], f"page {len(pages) + 1} is not the next {limit} rows"
        if cursor is None:
            assert len(after) <= limit, f"no cursor after page {len(pages) + 1}, but rows follow it"
        else:
            assert type(cursor) is str
            assert len(after) > limit, f"a cursor after page {len(pages) + 1}, but no row follows it"
        pages.append(page)
        assert len(pages) < 1000, "pagination never ends"
        if cursor is None:
            return pages
        last_key = sort_key(page[-1])
        if between_pages:
            between_pages(len(pages), page)


def flat(pages):
    return [row for page in pages for row in page]


def test_pages_cover_the_table_in_order():
    table = make_table([random.Random(0).randrange(1, 50) for _ in range(23)])
    original = table.ordered()
    pages = walk(table, 5)
    assert [len(p) for p in pages] == [5, 5, 5, 5, 3]
    assert flat(pages) == original


def test_exact_multiple_has_no_empty_last_page():
    table = make_table([random.Random(1).randrange(1, 50) for _ in range(20)])
    pages = walk(table, 5)
    assert [len(p) for p in pages] == [5, 5, 5, 5]
    assert flat(pages) == table.ordered()


def test_one_row_more_than_a_page():
    table = make_table([3, 1, 2, 2])
    page, cursor = fetch_page(table.conn, 3)
    assert [r["id"] for r in page] == [1, 3, 4]
    assert type(cursor) is str
    page, cursor = fetch_page(table.conn, 3, cursor)
    assert [r["id"] for r in page] == [2]
    assert cursor is None


def test_empty_table():
    table = make_table([])
    assert fetch_page(table.conn, 10) == ([], None)
    assert fetch_page(table.conn, 1) == ([], None)


def test_rows_have_the_stated_shape_and_types():
    table = Table([(7, "Zoë's \"best\" lamp", 1999), (3, "", 0), (12, "x; DROP TABLE products; --", -5)])
    page, cursor = fetch_page(table.conn, 10)
    assert cursor is None
    assert page == [
        {"id": 7, "name": "Zoë's \"best\" lamp", "price": 1999},
        {"id": 3, "name": "", "price": 0},
        {"id": 12, "name": "x; DROP TABLE products; --", "price": -5},
    ]
    for row in page:
        assert type(row) is dict
        assert sorted(row) == ["id", "name", "price"]
        assert type(row["id"]) is int and type(row["price"]) is int and type(row["name"]) is str


def test_all_prices_tied():
    table = make_table([700] * 17)
    assert [row["id"] for row in flat(walk(table, 4))] == list(range(1, 18))


def test_ties_straddling_a_page_boundary():
    # ids 1..8; prices sorted: 9(id 4), 5(ids 1,3,6,7), 2(ids 2,5,8)
    table = make_table([5, 2, 5, 9, 2, 5, 5, 2])
    pages = walk(table, 3)
    assert [[row["id"] for row in page] for page in pages] == [[4, 1, 3], [6, 7, 2], [5, 8]]


@pytest.mark.parametrize("limit", [1, 2, 7, 100])
def test_heavy_ties_any_page_size(limit):
    rng = random.Random(limit)
    table = make_table([rng.choice([10, 20, 30]) for _ in range(40)])
    assert flat(walk(table, limit)) == table.ordered()


@pytest.mark.parametrize("index", sorted(INDEXES))
@pytest.mark.parametrize("limit", [1, 3, 8])
def test_an_existing_index_does_not_change_the_order(index, limit):
    """The application created an index before paging: tied rows still come in id order."""
    rng = random.Random(limit)
    names = [rng.choice("qwertyuiopasdfgh") + str(rng.randrange(100)) for _ in range(30)]
    table = make_table([rng.choice([5, 10, 15]) for _ in range(30)], INDEXES[index], names)
    pages = walk(table, limit)
    assert flat(pages) == table.ordered()


def test_pre_existing_rows_with_sparse_ids_and_extreme_prices():
    """Rows the table already held: ids far apart, up to the 64-bit limit, inserted out of
    order; prices negative, zero and beyond 2**53 (exact only as integers)."""
    rng = random.Random(7)
    ids = rng.sample(range(1, 2**63 - 1), 40) + [2**63 - 1, 2**53 + 1, 2**53]
    prices = [0, -1, 1, 2**62, -(2**62), 2**53 + 1, 2**53, -7]
    rows = [(i, f"r{n}", rng.choice(prices)) for n, i in enumerate(ids)]
    for index in ("no_index", "price"):
        table = Table(rows, INDEXES[index])
        for limit in (1, 4, 9):
            assert flat(walk(table, limit)) == table.ordered()


def test_rows_inserted_before_the_cursor_do_not_shift_the_next_page():
    table = make_table([100 - i for i in range(30)])  # id 1 is the most expensive
    original = table.ordered()

    def insert_expensive(n_pages, page):
        table.insert((1000 + n_pages, f"new{n_pages}", 1000 + n_pages))

    assert flat(walk(table, 4, insert_expensive)) == original, "rows sorting before the cursor are behind us"


def test_rows_deleted_before_the_cursor_do_not_cause_gaps():
    table = make_table([100 - i for i in range(30)])
    original = table.ordered()

    def delete_first_row_read(n_pages, page):
        table.delete(page[0]["id"])

    assert flat(walk(table, 4, delete_first_row_read)) == original


def test_cursor_row_itself_deleted():
    table = make_table([50, 40, 40, 40, 30, 30, 20, 10])
    original = table.ordered()

    def delete_last_row_read(n_pages, page):
        table.delete(page[-1]["id"])

    assert flat(walk(table, 3, delete_last_row_read)) == original


def test_rows_inserted_ahead_of_the_cursor_are_included():
    table = make_table([90, 80, 70, 60, 50, 40, 30, 20])

    def insert_cheap(n_pages, page):
        if n_pages == 1:
            table.insert((100, "late", 35), (99, "tie", 80))

    ids = [row["id"] for row in flat(walk(table, 3, insert_cheap))]
    # 99 (price 80) sorts before the cursor (price 70, id 3): already behind us.
    assert ids == [1, 2, 3, 4, 5, 6, 100, 7, 8]


@pytest.mark.parametrize("index", ["no_index", "price"])
def test_rows_inserted_with_the_cursor_rows_price(index):
    """A new row tied with the last row read belongs after it only if its id is larger."""
    table = Table([(i * 10, f"p{i}", 50 if i < 6 else 40) for i in range(1, 11)], INDEXES[index])

    def insert_ties(n_pages, page):
        if n_pages == 1:  # the last row read is id 30, price 50
            table.insert((25, "tie before", 50), (35, "tie after", 50), (31, "just after", 50), (29, "before", 50))

    ids = [row["id"] for row in flat(walk(table, 3, insert_ties))]
    assert ids == [10, 20, 30, 31, 35, 40, 50, 60, 70, 80, 90, 100]


def test_every_row_after_the_cursor_deleted():
    table = make_table([5, 4, 3, 2, 1])
    page, cursor = fetch_page(table.conn, 2)
    assert [r["id"] for r in page] == [1, 2] and type(cursor) is str
    table.delete(3, 4, 5)
    assert fetch_page(table.conn, 2, cursor) == ([], None)


@pytest.mark.parametrize("index", ["no_index", "price", "price_name"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_random_churn_never_duplicates_or_skips(seed, index):
    """Inserts (new ids above and below the cursor's, prices tied with it or not) and
    deletes (the cursor row included) between fetches; `walk` checks every page against
    the mirror. Rows present from start to end appear exactly once, in order."""
    rng = random.Random(seed)
    names = [rng.choice("abcxyz") for _ in range(60)]
    table = Table([(3 * i, names[i - 1], rng.randrange(1, 12)) for i in range(1, 61)], INDEXES[index])
    deleted = set()

    def churn(n_pages, page):
        for _ in range(rng.randrange(0, 4)):
            new_id = rng.randrange(1, 400)
            if new_id not in table.rows and new_id not in deleted:
                table.insert((new_id, rng.choice("abcxyz"), rng.choice([page[-1]["price"], rng.randrange(1, 12)])))
        victims = rng.sample(sorted(table.rows), min(len(table.rows), rng.randrange(0, 3)))
        if rng.random() < 0.3 and page[-1]["id"] in table.rows:
            victims = sorted(set(victims) | {page[-1]["id"]})
        table.delete(*victims)
        deleted.update(victims)

    start = table.ordered()
    seen = flat(walk(table, 5, churn))
    keys = [sort_key(r) for r in seen]
    assert keys == sorted(set(keys)), "rows out of order or repeated"
    seen_ids = {r["id"] for r in seen}
    assert [r["id"] for r in start if r["id"] not in deleted and r["id"] not in seen_ids] == [], "rows skipped"


BAD_CURSORS = ["garbage", "", "%%%", "\x00", "null", "[]", "{}", "[1]", "bnVsbA==", "W10=", "WzFd", "e30="]


@pytest.mark.parametrize("bad", BAD_CURSORS)
def test_invalid_cursor_is_a_value_error(bad):
    table = make_table([1, 2, 3])
    with pytest.raises(ValueError):
        fetch_page(table.conn, 2, bad)


@pytest.mark.parametrize("index", ["no_index", "price"])
def test_a_cursor_works_in_another_process(index):
    """Pages alternate between this worker process and fresh processes, each with its own
    connection to one database file, while another connection inserts and deletes rows:
    a cursor must carry the walk's position itself. Every page is checked against the
    mirror as it is at that fetch."""
    rng = random.Random(11)
    rows = [(2 * i, rng.choice("abc"), rng.choice([7, 8, 9])) for i in range(1, 31)]
    mirror = {row_id: (name, price) for row_id, name, price in rows}
    shared = probe("_probe_processes.py")
    shared.create([list(r) for r in rows], INDEXES[index])

    def ordered():
        return sorted(({"id": i, "name": n, "price": p} for i, (n, p) in mirror.items()), key=sort_key)

    start, cursor, last_key, seen = ordered(), None, None, []
    for n_pages in range(1, 100):
        fetched = shared.fetch_here(4, cursor) if n_pages % 2 else shared.fetch_in_new_process(4, cursor)
        assert isinstance(fetched, list), f"page {n_pages} failed in a fresh process: {fetched}"
        page, cursor = fetched
        after = [r for r in ordered() if last_key is None or sort_key(r) > last_key]
        assert page == after[:4], f"page {n_pages} is not the next 4 rows"
        assert (cursor is None) == (len(after) <= 4)
        seen += page
        if cursor is None:
            break
        last_key = sort_key(page[-1])
        new_id = 2 * rng.randrange(1, 40) + 1  # odd: never an id the table held
        inserts = [] if new_id in mirror else [(new_id, "new", rng.choice([7, 8, 9]))]
        deletes = rng.sample(sorted(mirror), 1)
        for row_id, name, price in inserts:
            mirror[row_id] = (name, price)
        for row_id in deletes:
            del mirror[row_id]
        shared.change([list(r) for r in inserts], deletes)
    assert cursor is None
    assert [r for r in start if r["id"] in mirror and r not in seen] == []
