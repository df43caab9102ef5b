-- pgmirror migration 8: a change feed without a lock.
--
-- Writers took one schema-wide transaction lock and held it through
-- commit, so that seq grew in commit order: every business's writer waited
-- on every other's. Now a change's seq is its transaction's id shifted 20
-- bits left plus its ordinal in the transaction (see store.WriteChanges),
-- and readers read only the changes below the horizon: those of the
-- transactions older than the oldest one still running, which none can
-- join. The seqs written before stay as they are, all below the new ones.
ALTER TABLE mirror_changes ALTER COLUMN seq DROP DEFAULT;
DROP SEQUENCE mirror_changes_seq_seq;
