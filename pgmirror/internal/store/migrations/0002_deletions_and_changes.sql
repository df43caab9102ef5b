-- pgmirror migration 2: deletion marks and the change feed.
--
-- mirror_deleted_at is NULL while the service lists the record; the
-- reconciler (and a backfill's complete walk) sets it when the service no
-- longer lists the record, and clears it when the record reappears. The row
-- and its lines are kept, as last seen.
ALTER TABLE invoices ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE quotes ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE items ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE clients ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE suppliers ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE bills ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE accounts ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE tax_codes ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE bank_accounts ADD COLUMN mirror_deleted_at timestamptz;
ALTER TABLE bank_transactions ADD COLUMN mirror_deleted_at timestamptz;

-- The change feed: one row per change of a record's content, written in the
-- transaction that changes the record. seq orders the changes as they
-- committed (writers take a transaction lock before their changes, so a
-- reader that has seen seq N will never see a lower one appear later).
--   cause       what found the change: event, backfill or reconciliation;
--   op          insert (new, or listed again after a deletion mark),
--               update, or delete (the deletion mark);
--   old_values  update: the members of the record's JSON that changed, as
--               they were (a member absent before is absent here);
--               delete: the whole record as last seen; insert: NULL;
--   new_values  update: the same members as they are now (a member removed
--               is absent here); insert: the whole record; delete: NULL.
CREATE TABLE mirror_changes (
    seq        bigserial   PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT now(),
    resource   text        NOT NULL,
    id         text        NOT NULL,
    cause      text        NOT NULL CHECK (cause IN ('event', 'backfill', 'reconciliation')),
    op         text        NOT NULL CHECK (op IN ('insert', 'update', 'delete')),
    old_values jsonb,
    new_values jsonb
);
-- Retention deletes by age; at grows with seq, which a BRIN index serves
-- at almost no cost to the writers.
CREATE INDEX mirror_changes_at ON mirror_changes USING brin (at);

-- The highest seq retention has deleted: a reader asking for changes after
-- an older one would miss some, and is told so.
ALTER TABLE mirror_reconcile ADD COLUMN changes_pruned_through bigint NOT NULL DEFAULT 0;
