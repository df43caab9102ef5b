-- pgmirror migration 4: what fetches confirmed without writing.
--
-- A fetch that finds a record's content unchanged writes nothing to its
-- row; its fetch number must still count against an older fetch whose
-- answer is still on its way (the never-older rule compares a fetch with
-- the row's (mirror_version, fetch number), the number being the highest
-- of the row's mirror_fetch_seq and of these confirmations):
--   mirror_backfill.walk_seq  the fetch number of the last walk of the
--                             resource (a backfill pass or a reconciliation)
--                             that began: it stands for every row, the walk
--                             listing them all;
--   mirror_confirmed          a fetch of one record (an event's) that found
--                             it unchanged; a later walk's number covers it,
--                             so each walk deletes the older ones.
ALTER TABLE mirror_backfill ADD COLUMN walk_seq bigint NOT NULL DEFAULT 0;

CREATE TABLE mirror_confirmed (
    resource text   NOT NULL,
    id       text   NOT NULL,
    seq      bigint NOT NULL,
    PRIMARY KEY (resource, id)
);
