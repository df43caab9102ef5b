-- pgmirror migration 9: the ids a reconciliation's walk listed, in the
-- database.
--
-- A reconciliation marks deleted the rows its walk did not list. It kept
-- every id listed in memory, and read the ids of the rows written before
-- it in one array: a business of a million invoices held both. Now each
-- page's transaction records the ids it listed here, and the rows to mark
-- are read a page at a time, with an anti-join; the walk's ids are deleted
-- when it ends (and when the next one of the resource begins, after a
-- crash).
CREATE TABLE mirror_walk_listed (
    business text NOT NULL,
    resource text NOT NULL,
    id       text NOT NULL,
    PRIMARY KEY (business, resource, id)
);
