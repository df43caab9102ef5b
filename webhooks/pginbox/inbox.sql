-- The table of github.com/invoicing-api/invoicing-go/webhooks/pginbox: one
-- row per webhook delivery, stored before the delivery is acknowledged and
-- processed afterwards by the package's workers. Running this file again
-- changes nothing. Migrate applies it; a migration tool can run it as it is.

-- Replicas that start together apply it one at a time.
SELECT pg_advisory_xact_lock(hashtext('invoicing_webhook_inbox migration'));

CREATE TABLE IF NOT EXISTS invoicing_webhook_inbox (
    -- X-Service-Delivery: the delivery's id, the same on every retry,
    -- unique within its business (the primary key is business, delivery_id).
    delivery_id     text        NOT NULL,
    -- X-Service-Event: the event type, such as invoice.paid.
    event_type      text        NOT NULL,
    -- X-Service-Timestamp: when the service signed the stored copy.
    signed_at       timestamptz NOT NULL,
    -- The request body exactly as received and verified (or what the
    -- Handler's WithStoredBody kept of it).
    body            bytea       NOT NULL,
    -- When the first copy was stored; later copies are not stored.
    received_at     timestamptz NOT NULL DEFAULT now(),
    -- pending: to be processed (at next_attempt_at); processed: done;
    -- failed: parked after too many failures, for inspection.
    status          text        NOT NULL DEFAULT 'pending'
                                CHECK (status IN ('pending', 'processed', 'failed')),
    -- Runs of the callback whose outcome was recorded, and how many failed.
    attempts        integer     NOT NULL DEFAULT 0,
    failures        integer     NOT NULL DEFAULT 0,
    -- The error of the last failed run.
    last_error      text,
    -- A pending delivery is not claimed before this time (the retry backoff).
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    -- When the callback succeeded.
    processed_at    timestamptz,
    -- The business the delivery was addressed to, from the URL, when
    -- BusinessHandler stored it; '' when Handler did (one business).
    business        text        NOT NULL DEFAULT '',
    PRIMARY KEY (business, delivery_id)
);

-- Tables created before the business column get it, their rows the
-- business '', and their primary key becomes (business, delivery_id): the
-- same table as one created above. Adding the column rewrites nothing;
-- the new primary key's index is built under a lock that holds inserts
-- back meanwhile (6 s for 1,000,000 rows on a 2-core machine): delete old
-- processed rows first.
ALTER TABLE invoicing_webhook_inbox ADD COLUMN IF NOT EXISTS business text NOT NULL DEFAULT '';
DO $$
DECLARE
    old_key name;
BEGIN
    SELECT c.conname INTO old_key
    FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
    WHERE c.conrelid = 'invoicing_webhook_inbox'::regclass AND c.contype = 'p'
    GROUP BY c.conname
    HAVING array_agg(a.attname::text) = ARRAY['delivery_id'];
    IF old_key IS NOT NULL THEN
        EXECUTE format('ALTER TABLE invoicing_webhook_inbox DROP CONSTRAINT %I, ADD PRIMARY KEY (business, delivery_id)', old_key);
    END IF;
END
$$;

-- The workers' claim query reads pending rows in next_attempt_at order.
CREATE INDEX IF NOT EXISTS invoicing_webhook_inbox_pending
    ON invoicing_webhook_inbox (next_attempt_at) WHERE status = 'pending';

-- Inbox's listings read the deliveries newest first, all of them, a
-- business's, or the failed ones, a page at a time (received_at, then the
-- primary key, breaks ties). Building them on an existing table holds
-- inserts back meanwhile (about 3 s per 1,000,000 rows on a 2-core
-- machine); on a large table, create them first with CREATE INDEX
-- CONCURRENTLY under these names, and this file skips them.
CREATE INDEX IF NOT EXISTS invoicing_webhook_inbox_received
    ON invoicing_webhook_inbox (received_at, business, delivery_id);
CREATE INDEX IF NOT EXISTS invoicing_webhook_inbox_business_received
    ON invoicing_webhook_inbox (business, received_at, delivery_id);
CREATE INDEX IF NOT EXISTS invoicing_webhook_inbox_failed
    ON invoicing_webhook_inbox (received_at, business, delivery_id) WHERE status = 'failed';
