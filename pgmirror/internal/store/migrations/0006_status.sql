-- pgmirror migration 6: each business's state in SQL, its first complete
-- copy, and the resyncs asked for.
--
-- mirror_reconcile.ready_at is when the business's first complete copy
-- ended (its backfill, every resource); resync_at and resync_resources are
-- a resync asked for (invoicing-mirror resync): a walk of those resources
-- (NULL: every one) as soon as a replica can, then cleared.
ALTER TABLE mirror_reconcile ADD COLUMN ready_at timestamptz;
ALTER TABLE mirror_reconcile ADD COLUMN resync_at timestamptz;
ALTER TABLE mirror_reconcile ADD COLUMN resync_resources text[];

-- A business backfilled before this migration (its ten resources) was
-- ready when its last resource's backfill ended.
UPDATE mirror_reconcile AS r SET ready_at = (SELECT max(completed_at) FROM mirror_backfill AS f WHERE f.business = r.business)
WHERE (SELECT count(*) FROM mirror_backfill AS f WHERE f.business = r.business AND f.completed_at IS NOT NULL) = 10;

-- mirror_status: a row per business the mirror holds state for or serves,
-- as `invoicing-mirror status` prints it. phase is removed, paused,
-- backfilling (no complete copy yet), reconciling (a replica holds its
-- reconciliation's advisory lock) or ready. Durations are in seconds; the
-- event lag is over the last hour. The lock key names the schema, baked in
-- here (the view's own schema).
DO $migration$
BEGIN
EXECUTE format($view$
CREATE VIEW mirror_status AS
WITH names AS (
	SELECT business AS name FROM mirror_backfill
	UNION SELECT name FROM mirror_businesses
	UNION SELECT business FROM mirror_reconcile),
rows AS (
	SELECT business, count(*) FILTER (WHERE mirror_deleted_at IS NULL) AS live, count(*) FILTER (WHERE mirror_deleted_at IS NOT NULL) AS deleted
	FROM (SELECT business, mirror_deleted_at FROM invoices UNION ALL SELECT business, mirror_deleted_at FROM quotes
		UNION ALL SELECT business, mirror_deleted_at FROM items UNION ALL SELECT business, mirror_deleted_at FROM clients
		UNION ALL SELECT business, mirror_deleted_at FROM suppliers UNION ALL SELECT business, mirror_deleted_at FROM bills
		UNION ALL SELECT business, mirror_deleted_at FROM accounts UNION ALL SELECT business, mirror_deleted_at FROM tax_codes
		UNION ALL SELECT business, mirror_deleted_at FROM bank_accounts UNION ALL SELECT business, mirror_deleted_at FROM bank_transactions) AS t
	GROUP BY business),
backfills AS (
	SELECT business, count(*) FILTER (WHERE completed_at IS NOT NULL) AS backfilled, sum(listed)::bigint AS listed,
		sum(coalesce(total, 0))::bigint AS total
	FROM mirror_backfill GROUP BY business),
lags AS (
	SELECT business, count(*) AS lagged, percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_seconds) AS p99
	FROM mirror_event_lag WHERE written_at > now() - interval '1 hour' GROUP BY business),
fetches AS (
	SELECT business, count(*) AS pending, extract(epoch FROM now() - min(requested_at))::float8 AS oldest
	FROM mirror_pending_fetch GROUP BY business),
reconciling AS (
	SELECT r.business FROM mirror_reconcile AS r,
		LATERAL (SELECT hashtextextended(%L || r.business, 0) AS k) AS key
	WHERE EXISTS (SELECT 1 FROM pg_locks AS l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid = ((key.k >> 32) & 4294967295)::oid AND l.objid = (key.k & 4294967295)::oid))
SELECT n.name AS business,
	CASE WHEN b.removed_at IS NOT NULL THEN 'removed'
		WHEN p.pause_reason IS NOT NULL THEN 'paused'
		WHEN r.ready_at IS NULL THEN 'backfilling'
		WHEN n.name IN (SELECT business FROM reconciling) THEN 'reconciling'
		ELSE 'ready' END AS phase,
	coalesce(w.live, 0) AS rows,
	coalesce(w.deleted, 0) AS deleted,
	coalesce(f.backfilled, 0) AS backfilled_resources,
	coalesce(f.listed, 0) AS backfill_listed,
	coalesce(f.total, 0) AS backfill_total,
	r.ready_at,
	r.last_started_at AS reconcile_started_at,
	r.last_finished_at AS reconcile_finished_at,
	r.last_corrected AS reconcile_corrected,
	r.resync_at,
	coalesce(l.lagged, 0) AS lagged,
	l.p99 AS lag_p99_seconds,
	coalesce(q.pending, 0) AS pending_fetches,
	q.oldest AS oldest_pending_seconds,
	CASE WHEN p.pause_reason IS NOT NULL THEN p.paused_until END AS paused_until,
	p.pause_reason,
	b.removed_at
FROM names AS n
LEFT JOIN mirror_businesses AS b ON b.name = n.name
LEFT JOIN mirror_budgets AS p ON p.business = n.name
LEFT JOIN mirror_reconcile AS r ON r.business = n.name
LEFT JOIN rows AS w ON w.business = n.name
LEFT JOIN backfills AS f ON f.business = n.name
LEFT JOIN lags AS l ON l.business = n.name
LEFT JOIN fetches AS q ON q.business = n.name
$view$, 'pgmirror:' || current_schema() || ':reconcile:');
END
$migration$;
