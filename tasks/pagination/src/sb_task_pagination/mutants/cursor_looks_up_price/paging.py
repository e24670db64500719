"""Keyset pagination over products, most expensive first."""
import base64
import binascii
import json


def _encode(price, product_id):
    raw = json.dumps([price, product_id]).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode(cursor):
    try:
        price, product_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (binascii.Error, ValueError, TypeError, UnicodeError) as exc:
        raise ValueError(f"invalid cursor: {cursor!r}") from exc
    if not (type(price) is int and type(product_id) is int):
        raise ValueError(f"invalid cursor: {cursor!r}")
    return price, product_id


def fetch_page(conn, limit, cursor=None):
    if limit < 1:
        raise ValueError("limit must be at least 1")
    sql = "SELECT id, name, price FROM products"
    params = []
    if cursor is not None:
        _, product_id = _decode(cursor)
        sql += (" WHERE price < (SELECT price FROM products WHERE id = ?)"
                " OR (price = (SELECT price FROM products WHERE id = ?) AND id > ?)")
        params = [product_id, product_id, product_id]
    sql += " ORDER BY price DESC, id ASC LIMIT ?"
    params.append(limit + 1)  # one extra row says whether a next page exists
    rows = conn.execute(sql, params).fetchall()
    page = [{"id": r[0], "name": r[1], "price": r[2]} for r in rows[:limit]]
    if len(rows) <= limit:
        return page, None
    last = page[-1]
    return page, _encode(last["price"], last["id"])
