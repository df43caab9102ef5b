-- pgmirror migration 3: the lag of the records that events named, for
-- `invoicing-mirror status`: one row per record a fetcher wrote because an
-- event named it, with how long after the delivery was received the row
-- was written. The fetchers delete the rows older than an hour.
CREATE TABLE mirror_event_lag (
    written_at  timestamptz      NOT NULL DEFAULT now(),
    resource    text             NOT NULL,
    lag_seconds double precision NOT NULL
);
-- Rows come in written_at order and go by age: a BRIN index serves both at
-- almost no cost to the fetchers.
CREATE INDEX mirror_event_lag_written_at ON mirror_event_lag USING brin (written_at);
