SELECT c.id AS customer_id,
       c.name AS name,
       COUNT(o.id) AS paid_orders,
       COALESCE(SUM(o.amount_cents), 0) AS total_cents
FROM customers AS c
LEFT JOIN orders AS o
       ON o.customer_id = c.id
      AND o.status = 'paid'
      AND o.placed_at >= '2024-01-01 00:00:00'
      AND o.placed_at < '2025-01-01 00:00:00'
GROUP BY c.name
ORDER BY total_cents DESC, c.name ASC, c.id ASC;
