-- The table of github.com/invoicing-api/invoicing-go/webhooks/pginbox: one
-- row per webhook delivery, stored before the delivery is acknowledged and
-- processed afterwards by the package's workers. Running this file again
-- changes nothing. Migrate applies it; a migration tool can run it as it is.

-- Replicas that start together apply it one at a time.
SELECT pg_advisory_xact_lock(hashtext('invoicing_webhook_inbox migration'));

CREATE TABLE IF NOT EXISTS invoicing_webhook_inbox (
    -- X-Service-Delivery: the delivery's id, the same on every retry.
    delivery_id     text        PRIMARY KEY,
    -- X-Service-Event: the event type, such as invoice.paid.
    event_type      text        NOT NULL,
    -- X-Service-Timestamp: when the service signed the stored copy.
    signed_at       timestamptz NOT NULL,
    -- The request body exactly as received and verified.
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
    processed_at    timestamptz
);

-- The workers' claim query reads pending rows in next_attempt_at order.
CREATE INDEX IF NOT EXISTS invoicing_webhook_inbox_pending
    ON invoicing_webhook_inbox (next_attempt_at) WHERE status = 'pending';
