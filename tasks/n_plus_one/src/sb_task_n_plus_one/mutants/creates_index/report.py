"""Per-customer sales report in a constant number of queries."""
import json

# Each aggregate is computed in its own query, grouped at the level it belongs to:
# joining orders to items and summing order totals in the same query would count
# every order once per item.
_ORDERS = """
SELECT c.id, c.name, COUNT(o.id), COALESCE(SUM(o.total_cents), 0)
FROM customers AS c
LEFT JOIN orders AS o ON o.customer_id = c.id AND o.status = 'paid'
WHERE c.id IN (SELECT value FROM json_each(?))
GROUP BY c.id
"""

_ITEMS = """
SELECT o.customer_id, SUM(i.quantity)
FROM orders AS o
JOIN order_items AS i ON i.order_id = o.id
WHERE o.status = 'paid' AND o.customer_id IN (SELECT value FROM json_each(?))
GROUP BY o.customer_id
"""


_INDEX = "CREATE INDEX IF NOT EXISTS orders_by_customer ON orders (customer_id, status)"


def customer_report(conn, customer_ids):
    ids = json.dumps([int(i) for i in customer_ids])
    # Without an index on orders.customer_id both aggregates scan the whole table.
    conn.execute(_INDEX)
    report = {
        cid: {"name": name, "paid_orders": count, "revenue_cents": revenue, "items": 0}
        for cid, name, count, revenue in conn.execute(_ORDERS, (ids,)).fetchall()
    }
    for cid, quantity in conn.execute(_ITEMS, (ids,)).fetchall():
        if cid in report:  # orders can outlive their customer: SQLite does not enforce the key
            report[cid]["items"] = quantity
    return report
