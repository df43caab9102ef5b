-- pgmirror migration 14: what the mirror keeps of each business
-- (pgmirror.Selection: the members it leaves out, those it hashes).
--
-- mirror_businesses.selection is the Selection a business is added with
-- ({} for everything); mirror_selections records the one the mirror
-- applies to a business's data, and the id of the key of Config.Keys its
-- hashes are made with (NULL when it hashes nothing): a business whose
-- Selection changed while the mirror holds some of its data is not served.
ALTER TABLE mirror_businesses ADD COLUMN selection jsonb NOT NULL DEFAULT '{}';

CREATE TABLE mirror_selections (
    business   text        PRIMARY KEY,
    selection  jsonb       NOT NULL,
    hash_key   text,
    applied_at timestamptz NOT NULL DEFAULT now()
);
