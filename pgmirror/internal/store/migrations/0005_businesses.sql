-- pgmirror migration 5: many businesses in one schema.
--
-- Every table of records, lines and the mirror's own state gains a
-- business column, first in its key: a record is (business, id). The rows
-- already there belong to the business Migrate names in the setting
-- pgmirror.business (Config.Business): a single-business mirror upgrades in
-- place, nothing dropped. mirror_businesses holds the businesses a mirror
-- serves when they are data (their API keys and webhook secrets sealed,
-- see pgmirror's Businesses), and mirror_budgets the request budget each
-- business shares between the replicas.

-- Lines first: their foreign keys name their parents' keys.
ALTER TABLE invoice_lines DROP CONSTRAINT invoice_lines_invoice_id_fkey, DROP CONSTRAINT invoice_lines_pkey;
ALTER TABLE quote_lines DROP CONSTRAINT quote_lines_quote_id_fkey, DROP CONSTRAINT quote_lines_pkey;
ALTER TABLE bill_lines DROP CONSTRAINT bill_lines_bill_id_fkey, DROP CONSTRAINT bill_lines_pkey;
ALTER TABLE invoices ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE invoices ALTER COLUMN business DROP DEFAULT;
ALTER TABLE quotes ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE quotes ALTER COLUMN business DROP DEFAULT;
ALTER TABLE items ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE items ALTER COLUMN business DROP DEFAULT;
ALTER TABLE clients ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE clients ALTER COLUMN business DROP DEFAULT;
ALTER TABLE suppliers ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE suppliers ALTER COLUMN business DROP DEFAULT;
ALTER TABLE bills ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE bills ALTER COLUMN business DROP DEFAULT;
ALTER TABLE accounts ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE accounts ALTER COLUMN business DROP DEFAULT;
ALTER TABLE tax_codes ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE tax_codes ALTER COLUMN business DROP DEFAULT;
ALTER TABLE bank_accounts ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE bank_accounts ALTER COLUMN business DROP DEFAULT;
ALTER TABLE bank_transactions ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE bank_transactions ALTER COLUMN business DROP DEFAULT;
ALTER TABLE invoice_lines ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE invoice_lines ALTER COLUMN business DROP DEFAULT;
ALTER TABLE quote_lines ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE quote_lines ALTER COLUMN business DROP DEFAULT;
ALTER TABLE bill_lines ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE bill_lines ALTER COLUMN business DROP DEFAULT;
ALTER TABLE invoices DROP CONSTRAINT invoices_pkey, ADD PRIMARY KEY (business, id);
ALTER TABLE quotes DROP CONSTRAINT quotes_pkey, ADD PRIMARY KEY (business, id);
ALTER TABLE items DROP CONSTRAINT items_pkey, ADD PRIMARY KEY (business, id);
ALTER TABLE clients DROP CONSTRAINT clients_pkey, ADD PRIMARY KEY (business, id);
ALTER TABLE suppliers DROP CONSTRAINT suppliers_pkey, ADD PRIMARY KEY (business, id);
ALTER TABLE bills DROP CONSTRAINT bills_pkey, ADD PRIMARY KEY (business, id);
ALTER TABLE accounts DROP CONSTRAINT accounts_pkey, ADD PRIMARY KEY (business, id);
ALTER TABLE tax_codes DROP CONSTRAINT tax_codes_pkey, ADD PRIMARY KEY (business, id);
ALTER TABLE bank_accounts DROP CONSTRAINT bank_accounts_pkey, ADD PRIMARY KEY (business, id);
ALTER TABLE bank_transactions DROP CONSTRAINT bank_transactions_pkey, ADD PRIMARY KEY (business, id);
ALTER TABLE invoice_lines ADD PRIMARY KEY (business, invoice_id, position),
    ADD FOREIGN KEY (business, invoice_id) REFERENCES invoices (business, id) ON DELETE CASCADE;
ALTER TABLE quote_lines ADD PRIMARY KEY (business, quote_id, position),
    ADD FOREIGN KEY (business, quote_id) REFERENCES quotes (business, id) ON DELETE CASCADE;
ALTER TABLE bill_lines ADD PRIMARY KEY (business, bill_id, position),
    ADD FOREIGN KEY (business, bill_id) REFERENCES bills (business, id) ON DELETE CASCADE;
DROP INDEX invoices_client_id;
CREATE INDEX invoices_client_id ON invoices (business, client_id);
DROP INDEX invoices_status;
CREATE INDEX invoices_status ON invoices (business, status);
DROP INDEX quotes_client_id;
CREATE INDEX quotes_client_id ON quotes (business, client_id);
DROP INDEX quotes_status;
CREATE INDEX quotes_status ON quotes (business, status);
DROP INDEX bills_supplier_id;
CREATE INDEX bills_supplier_id ON bills (business, supplier_id);
DROP INDEX bank_transactions_bank_account_id;
CREATE INDEX bank_transactions_bank_account_id ON bank_transactions (business, bank_account_id);

-- The mirror's own state, per business.
ALTER TABLE mirror_backfill ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE mirror_backfill ALTER COLUMN business DROP DEFAULT;
ALTER TABLE mirror_backfill DROP CONSTRAINT mirror_backfill_pkey, ADD PRIMARY KEY (business, resource);

ALTER TABLE mirror_pending_fetch ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE mirror_pending_fetch ALTER COLUMN business DROP DEFAULT;
ALTER TABLE mirror_pending_fetch DROP CONSTRAINT mirror_pending_fetch_pkey, ADD PRIMARY KEY (business, resource, id);
DROP INDEX mirror_pending_fetch_due;
-- The fetchers claim round-robin by business, each business's due requests
-- earliest first.
CREATE INDEX mirror_pending_fetch_due ON mirror_pending_fetch (business, due_at);

ALTER TABLE mirror_confirmed ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE mirror_confirmed ALTER COLUMN business DROP DEFAULT;
ALTER TABLE mirror_confirmed DROP CONSTRAINT mirror_confirmed_pkey, ADD PRIMARY KEY (business, resource, id);

-- One reconciliation state per business (it was one row for the schema).
ALTER TABLE mirror_reconcile ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE mirror_reconcile ALTER COLUMN business DROP DEFAULT;
ALTER TABLE mirror_reconcile DROP CONSTRAINT mirror_reconcile_pkey, DROP COLUMN singleton, ADD PRIMARY KEY (business);
-- Migration 1's placeholder row, in a mirror that never backfilled, is no
-- business's: each business gets its row when its backfill completes.
DELETE FROM mirror_reconcile WHERE last_started_at IS NULL AND last_finished_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM mirror_backfill);

ALTER TABLE mirror_changes ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE mirror_changes ALTER COLUMN business DROP DEFAULT;

ALTER TABLE mirror_event_lag ADD COLUMN business text NOT NULL DEFAULT current_setting('pgmirror.business');
ALTER TABLE mirror_event_lag ALTER COLUMN business DROP DEFAULT;

-- The businesses a mirror serves when they are data (Config.Keys): the API
-- key and the webhook secrets (a JSON array of strings, the current one
-- first) are sealed with AES-256-GCM under a key from the environment, the
-- sealing key's id inside each value; budget is in requests per second.
-- A removed business keeps its row (removed_at set) and its records until
-- it is dropped.
CREATE TABLE mirror_businesses (
    name            text             PRIMARY KEY,
    api_key         bytea            NOT NULL,
    webhook_secrets bytea            NOT NULL,
    budget          double precision NOT NULL CHECK (budget > 0),
    added_at        timestamptz      NOT NULL DEFAULT now(),
    updated_at      timestamptz      NOT NULL DEFAULT now(),
    removed_at      timestamptz
);

-- Each business's request budget, a token bucket shared by every replica:
-- tokens at the time at; refilled at the business's budget per second up
-- to burst. paused_until and pause_reason: the business answers 401 or
-- keeps answering 429, and no replica calls the service for it meanwhile.
CREATE TABLE mirror_budgets (
    business     text             PRIMARY KEY,
    tokens       double precision NOT NULL,
    at           timestamptz      NOT NULL DEFAULT clock_timestamp(),
    paused_until timestamptz,
    pause_reason text
);
