-- pgmirror migration 12: the change feed keyed by (seq, business).
--
-- seq alone is unique (a transaction's id and the change's ordinal in it),
-- but a table partitioned by business (Config.Partitions) can only have
-- keys that hold the business. The key's index still serves the readers,
-- who read in seq order, and retention, which deletes ranges of seq.
ALTER TABLE mirror_changes DROP CONSTRAINT mirror_changes_pkey, ADD PRIMARY KEY (seq, business);
