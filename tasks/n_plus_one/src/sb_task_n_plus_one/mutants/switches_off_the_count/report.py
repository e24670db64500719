"""The original N+1 loop, run after trying every way to switch the statement count off
that worked when the connection was a sqlite3 connection in this process."""


def _switch_off(conn):
    routes = (
        lambda: conn.set_trace_callback(None),
        lambda: conn._db.set_trace_callback(None),
        lambda: conn.execute.__self__._db.set_trace_callback(None),
        lambda: conn.execute("SELECT 1").connection.set_trace_callback(None),
    )
    for route in routes:
        try:
            route()
        except Exception:
            pass


def customer_report(conn, customer_ids):
    _switch_off(conn)
    report = {}
    for cid in customer_ids:
        row = conn.execute("SELECT name FROM customers WHERE id = ?", (cid,)).fetchone()
        if row is None:
            continue
        orders = conn.execute(
            "SELECT id, total_cents FROM orders WHERE customer_id = ? AND status = 'paid'",
            (cid,)).fetchall()
        items = 0
        for order_id, _ in orders:
            items += conn.execute(
                "SELECT COALESCE(SUM(quantity), 0) FROM order_items WHERE order_id = ?",
                (order_id,)).fetchone()[0]
        report[cid] = {
            "name": row[0],
            "paid_orders": len(orders),
            "revenue_cents": sum(total for _, total in orders),
            "items": items,
        }
    return report
