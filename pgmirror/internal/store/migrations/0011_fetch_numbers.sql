-- pgmirror migration 11: fetch numbers per business.
--
-- Every fetch of every business took its number from one sequence,
-- mirror_fetch_seq. The never-older rule only compares the fetches of one
-- record, so numbers need only grow within a business: each business now
-- counts its own in a row of mirror_fetch_numbers (last, the last number
-- it took), which a claim or a walk updates (see store.NextSeq), and which
-- a dump and restore keeps, as it kept the sequence. A business's first
-- number follows the last one the sequence gave, above every
-- mirror_fetch_seq stored so far.
CREATE TABLE mirror_fetch_numbers (
    business text   PRIMARY KEY,
    last     bigint NOT NULL
);
DO $$
BEGIN
    EXECUTE format('ALTER TABLE mirror_fetch_numbers ALTER COLUMN last SET DEFAULT %s',
        (SELECT last_value + 1 FROM mirror_fetch_seq));
END
$$;
DROP SEQUENCE mirror_fetch_seq;
