-- pgmirror migration 10: the lines of a record marked deleted are marked
-- with it.
--
-- A reconciliation marks deleted (mirror_deleted_at) the records the
-- service no longer lists; their lines stayed unmarked, so that a sum over
-- a lines table alone still counted the lines of records the service no
-- longer has. The lines tables get the column; the lines of the records
-- marked so far are marked as their record is. Writing a record again
-- (listed again, or changed) writes its lines anew, unmarked.
ALTER TABLE invoice_lines ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE quote_lines ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE bill_lines ADD COLUMN mirror_deleted_at timestamptz;

UPDATE invoice_lines AS l SET mirror_deleted_at = p.mirror_deleted_at
FROM invoices AS p WHERE p.business = l.business AND p.id = l.invoice_id AND p.mirror_deleted_at IS NOT NULL;
UPDATE quote_lines AS l SET mirror_deleted_at = p.mirror_deleted_at
FROM quotes AS p WHERE p.business = l.business AND p.id = l.quote_id AND p.mirror_deleted_at IS NOT NULL;
UPDATE bill_lines AS l SET mirror_deleted_at = p.mirror_deleted_at
FROM bills AS p WHERE p.business = l.business AND p.id = l.bill_id AND p.mirror_deleted_at IS NOT NULL;
