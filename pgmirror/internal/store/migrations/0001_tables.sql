-- pgmirror migration 1: the mirror's tables. Migrate runs it once, in the
-- schema of the connection's search_path (Config.Schema), inside the
-- transaction that records it in mirror_migrations.
--
-- Every record table keeps the record's typed fields, its raw JSON (every
-- member the service sent, unknown ones included) and four columns of the
-- mirror's own:
--   mirror_version    the service's version of the record: coalesce(updated_at,
--                     created_at), or -infinity when the record has neither;
--   mirror_fetch_seq  the fetch that produced the row (mirror_fetch_seq, taken
--                     before the request was sent);
--   mirror_synced_at  when a fetch last confirmed the row;
--   mirror_changed_at when the row's content last changed.
-- A fetch is applied only when (mirror_version, mirror_fetch_seq) is not
-- older than the row's. Lines are replaced, in the same transaction, only
-- when their parent's content changed.

-- Numbers of fetches, taken before each request is sent. CACHE 1 (the
-- default) matters: numbers must follow the order sessions take them in.
CREATE SEQUENCE mirror_fetch_seq CACHE 1;

CREATE TABLE invoices (
    id                text        PRIMARY KEY,
    invoice_number    text,
    client_id         text,
    client_name       text,
    status            text,
    issue_date        date,
    due_date          date,
    subtotal          numeric,
    tax_total         numeric,
    total             numeric,
    amount_paid       numeric,
    amount_due        numeric,
    currency          text,
    notes             text,
    reference         text,
    created_at        timestamptz,
    updated_at        timestamptz,
    raw               jsonb       NOT NULL,
    mirror_version    timestamptz NOT NULL,
    mirror_fetch_seq  bigint      NOT NULL,
    mirror_synced_at  timestamptz NOT NULL,
    mirror_changed_at timestamptz NOT NULL
);
CREATE INDEX invoices_client_id ON invoices (client_id);
CREATE INDEX invoices_status ON invoices (status);

CREATE TABLE invoice_lines (
    invoice_id  text    NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    id          text,
    description text,
    quantity    numeric,
    unit_price  numeric,
    amount      numeric,
    tax_amount  numeric,
    account_id  text,
    tax_code_id text,
    PRIMARY KEY (invoice_id, position)
);

CREATE TABLE quotes (
    id                text        PRIMARY KEY,
    quote_number      text,
    title             text,
    client_id         text,
    client_name       text,
    status            text,
    issue_date        date,
    valid_until       date,
    subtotal          numeric,
    tax_total         numeric,
    total             numeric,
    currency          text,
    notes             text,
    created_at        timestamptz,
    updated_at        timestamptz,
    raw               jsonb       NOT NULL,
    mirror_version    timestamptz NOT NULL,
    mirror_fetch_seq  bigint      NOT NULL,
    mirror_synced_at  timestamptz NOT NULL,
    mirror_changed_at timestamptz NOT NULL
);
CREATE INDEX quotes_client_id ON quotes (client_id);
CREATE INDEX quotes_status ON quotes (status);

CREATE TABLE quote_lines (
    quote_id    text    NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    id          text,
    item_id     text,
    item_code   text,
    item_name   text,
    description text,
    quantity    numeric,
    unit_price  numeric,
    amount      numeric,
    tax_amount  numeric,
    PRIMARY KEY (quote_id, position)
);

CREATE TABLE items (
    id                text        PRIMARY KEY,
    item_code         text,
    name              text,
    description       text,
    item_type         text,
    unit_price        numeric,
    is_taxable        boolean,
    account_id        text,
    tax_code_id       text,
    is_active         boolean,
    created_at        timestamptz,
    updated_at        timestamptz,
    raw               jsonb       NOT NULL,
    mirror_version    timestamptz NOT NULL,
    mirror_fetch_seq  bigint      NOT NULL,
    mirror_synced_at  timestamptz NOT NULL,
    mirror_changed_at timestamptz NOT NULL
);

CREATE TABLE clients (
    id                text        PRIMARY KEY,
    name              text,
    email             text,
    phone             text,
    created_at        timestamptz,
    updated_at        timestamptz,
    raw               jsonb       NOT NULL,
    mirror_version    timestamptz NOT NULL,
    mirror_fetch_seq  bigint      NOT NULL,
    mirror_synced_at  timestamptz NOT NULL,
    mirror_changed_at timestamptz NOT NULL
);

CREATE TABLE suppliers (
    id                text        PRIMARY KEY,
    name              text,
    email             text,
    phone             text,
    created_at        timestamptz,
    updated_at        timestamptz,
    raw               jsonb       NOT NULL,
    mirror_version    timestamptz NOT NULL,
    mirror_fetch_seq  bigint      NOT NULL,
    mirror_synced_at  timestamptz NOT NULL,
    mirror_changed_at timestamptz NOT NULL
);

CREATE TABLE bills (
    id                text        PRIMARY KEY,
    bill_number       text,
    supplier_id       text,
    supplier_name     text,
    status            text,
    issue_date        date,
    due_date          date,
    currency          text,
    subtotal          numeric,
    tax_total         numeric,
    total             numeric,
    created_at        timestamptz,
    updated_at        timestamptz,
    raw               jsonb       NOT NULL,
    mirror_version    timestamptz NOT NULL,
    mirror_fetch_seq  bigint      NOT NULL,
    mirror_synced_at  timestamptz NOT NULL,
    mirror_changed_at timestamptz NOT NULL
);
CREATE INDEX bills_supplier_id ON bills (supplier_id);

CREATE TABLE bill_lines (
    bill_id     text    NOT NULL REFERENCES bills (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    id          text,
    description text,
    quantity    numeric,
    unit_price  numeric,
    amount      numeric,
    tax_amount  numeric,
    account_id  text,
    tax_code_id text,
    PRIMARY KEY (bill_id, position)
);

CREATE TABLE accounts (
    id                text        PRIMARY KEY,
    code              text,
    name              text,
    type              text,
    is_active         boolean,
    raw               jsonb       NOT NULL,
    mirror_version    timestamptz NOT NULL,
    mirror_fetch_seq  bigint      NOT NULL,
    mirror_synced_at  timestamptz NOT NULL,
    mirror_changed_at timestamptz NOT NULL
);

CREATE TABLE tax_codes (
    id                text        PRIMARY KEY,
    code              text,
    name              text,
    rate              numeric,
    region            text,
    raw               jsonb       NOT NULL,
    mirror_version    timestamptz NOT NULL,
    mirror_fetch_seq  bigint      NOT NULL,
    mirror_synced_at  timestamptz NOT NULL,
    mirror_changed_at timestamptz NOT NULL
);

CREATE TABLE bank_accounts (
    id                text        PRIMARY KEY,
    name              text,
    account_number    text,
    currency          text,
    balance           numeric,
    raw               jsonb       NOT NULL,
    mirror_version    timestamptz NOT NULL,
    mirror_fetch_seq  bigint      NOT NULL,
    mirror_synced_at  timestamptz NOT NULL,
    mirror_changed_at timestamptz NOT NULL
);

CREATE TABLE bank_transactions (
    id                text        PRIMARY KEY,
    bank_account_id   text,
    date              date,
    description       text,
    amount            numeric,
    reference         text,
    status            text,
    raw               jsonb       NOT NULL,
    mirror_version    timestamptz NOT NULL,
    mirror_fetch_seq  bigint      NOT NULL,
    mirror_synced_at  timestamptz NOT NULL,
    mirror_changed_at timestamptz NOT NULL
);
CREATE INDEX bank_transactions_bank_account_id ON bank_transactions (bank_account_id);

-- The backfill's checkpoint: one row per resource. next_page is the first
-- page the walk has not fully written; pass counts the walks: the first,
-- then the closing passes made while the table holds fewer records than
-- the service counts (tail: a pass from the last page; rows_at_start: the
-- table's rows when the pass began); listed counts the records the walks
-- wrote (a page read again counts again).
CREATE TABLE mirror_backfill (
    resource      text        PRIMARY KEY,
    pass          integer     NOT NULL DEFAULT 1,
    next_page     integer     NOT NULL DEFAULT 1,
    tail          boolean     NOT NULL DEFAULT false,
    rows_at_start bigint      NOT NULL DEFAULT 0,
    listed        bigint      NOT NULL DEFAULT 0,
    total         integer,
    started_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    completed_at  timestamptz
);

-- Records to fetch because an event named them. A burst of events for one
-- record is one row: due_at keeps the earliest request plus the coalescing
-- window, request_seq counts the requests. A fetcher leases a due row
-- (lease_until), fetches, and deletes the row only if request_seq did not
-- move meanwhile; an expired lease is taken by another fetcher.
CREATE TABLE mirror_pending_fetch (
    resource     text        NOT NULL,
    id           text        NOT NULL,
    due_at       timestamptz NOT NULL,
    request_seq  bigint      NOT NULL DEFAULT 1,
    requested_at timestamptz NOT NULL DEFAULT now(),
    lease_until  timestamptz,
    attempts     integer     NOT NULL DEFAULT 0,
    not_found    integer     NOT NULL DEFAULT 0,
    last_error   text,
    PRIMARY KEY (resource, id)
);
CREATE INDEX mirror_pending_fetch_due ON mirror_pending_fetch (due_at);

-- The reconciler's last run, shared by every replica so that together they
-- respect the interval.
CREATE TABLE mirror_reconcile (
    singleton        boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    last_started_at  timestamptz,
    last_finished_at timestamptz,
    last_corrected   jsonb
);
INSERT INTO mirror_reconcile DEFAULT VALUES;
