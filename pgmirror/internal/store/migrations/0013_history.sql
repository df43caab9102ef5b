-- pgmirror migration 13: history, and the books as they stood at any time.
--
-- Every version of every record is kept with the interval in which it was
-- the current one, [mirror_valid_from, mirror_valid_to):
--   - the current version stays in the record's table; mirror_valid_from
--     is when it began, and a deletion mark (mirror_deleted_at) ends it;
--   - a version a write replaces, or a marked one written again, moves to
--     <table>_history with its interval, and its lines to
--     <lines>_history with the same interval.
-- A version begins at the record's updated_at (created_at when never
-- updated) when the service moved it, or else when the mirror wrote it
-- (for a record with neither: an account, a tax code, a bank account or
-- transaction; and for a change the service made without moving
-- updated_at); never before the end of the version it follows. Rows written
-- before this migration have no mirror_valid_from: their version counts
-- from their mirror_version, or, without one, from mirror_changed_at.
--
-- <table>_as_of(business, at) and <lines>_as_of(business, at) return the
-- records and the lines of a business as they stood at the instant at,
-- each with its interval (mirror_valid_to NULL while current). Their
-- bodies name the tables with the schema (the prefix at-dot, which Migrate
-- replaces with it: a function's body runs with its caller's
-- search_path), and are strings, which hold no dependency on the tables:
-- partitioning rebuilds the tables under them. A migration that adds a
-- column to a record or lines table adds it to its history table and to
-- its function too (a test compares them).
ALTER TABLE clients ADD COLUMN mirror_valid_from timestamptz;
ALTER TABLE suppliers ADD COLUMN mirror_valid_from timestamptz;
ALTER TABLE accounts ADD COLUMN mirror_valid_from timestamptz;
ALTER TABLE tax_codes ADD COLUMN mirror_valid_from timestamptz;
ALTER TABLE items ADD COLUMN mirror_valid_from timestamptz;
ALTER TABLE bank_accounts ADD COLUMN mirror_valid_from timestamptz;
ALTER TABLE bank_transactions ADD COLUMN mirror_valid_from timestamptz;
ALTER TABLE bills ADD COLUMN mirror_valid_from timestamptz;
ALTER TABLE quotes ADD COLUMN mirror_valid_from timestamptz;
ALTER TABLE invoices ADD COLUMN mirror_valid_from timestamptz;

CREATE TABLE clients_history (LIKE clients, mirror_valid_to timestamptz NOT NULL);
ALTER TABLE clients_history ALTER COLUMN mirror_valid_from SET NOT NULL;
CREATE INDEX clients_history_id ON clients_history (business, id, mirror_valid_from);
CREATE INDEX clients_history_valid_to ON clients_history (business, mirror_valid_to);

CREATE TABLE suppliers_history (LIKE suppliers, mirror_valid_to timestamptz NOT NULL);
ALTER TABLE suppliers_history ALTER COLUMN mirror_valid_from SET NOT NULL;
CREATE INDEX suppliers_history_id ON suppliers_history (business, id, mirror_valid_from);
CREATE INDEX suppliers_history_valid_to ON suppliers_history (business, mirror_valid_to);

CREATE TABLE accounts_history (LIKE accounts, mirror_valid_to timestamptz NOT NULL);
ALTER TABLE accounts_history ALTER COLUMN mirror_valid_from SET NOT NULL;
CREATE INDEX accounts_history_id ON accounts_history (business, id, mirror_valid_from);
CREATE INDEX accounts_history_valid_to ON accounts_history (business, mirror_valid_to);

CREATE TABLE tax_codes_history (LIKE tax_codes, mirror_valid_to timestamptz NOT NULL);
ALTER TABLE tax_codes_history ALTER COLUMN mirror_valid_from SET NOT NULL;
CREATE INDEX tax_codes_history_id ON tax_codes_history (business, id, mirror_valid_from);
CREATE INDEX tax_codes_history_valid_to ON tax_codes_history (business, mirror_valid_to);

CREATE TABLE items_history (LIKE items, mirror_valid_to timestamptz NOT NULL);
ALTER TABLE items_history ALTER COLUMN mirror_valid_from SET NOT NULL;
CREATE INDEX items_history_id ON items_history (business, id, mirror_valid_from);
CREATE INDEX items_history_valid_to ON items_history (business, mirror_valid_to);

CREATE TABLE bank_accounts_history (LIKE bank_accounts, mirror_valid_to timestamptz NOT NULL);
ALTER TABLE bank_accounts_history ALTER COLUMN mirror_valid_from SET NOT NULL;
CREATE INDEX bank_accounts_history_id ON bank_accounts_history (business, id, mirror_valid_from);
CREATE INDEX bank_accounts_history_valid_to ON bank_accounts_history (business, mirror_valid_to);

CREATE TABLE bank_transactions_history (LIKE bank_transactions, mirror_valid_to timestamptz NOT NULL);
ALTER TABLE bank_transactions_history ALTER COLUMN mirror_valid_from SET NOT NULL;
CREATE INDEX bank_transactions_history_id ON bank_transactions_history (business, id, mirror_valid_from);
CREATE INDEX bank_transactions_history_valid_to ON bank_transactions_history (business, mirror_valid_to);

CREATE TABLE bills_history (LIKE bills, mirror_valid_to timestamptz NOT NULL);
ALTER TABLE bills_history ALTER COLUMN mirror_valid_from SET NOT NULL;
CREATE INDEX bills_history_id ON bills_history (business, id, mirror_valid_from);
CREATE INDEX bills_history_valid_to ON bills_history (business, mirror_valid_to);
CREATE TABLE bill_lines_history (LIKE bill_lines, mirror_valid_from timestamptz NOT NULL, mirror_valid_to timestamptz NOT NULL);
CREATE INDEX bill_lines_history_valid_to ON bill_lines_history (business, mirror_valid_to);

CREATE TABLE quotes_history (LIKE quotes, mirror_valid_to timestamptz NOT NULL);
ALTER TABLE quotes_history ALTER COLUMN mirror_valid_from SET NOT NULL;
CREATE INDEX quotes_history_id ON quotes_history (business, id, mirror_valid_from);
CREATE INDEX quotes_history_valid_to ON quotes_history (business, mirror_valid_to);
CREATE TABLE quote_lines_history (LIKE quote_lines, mirror_valid_from timestamptz NOT NULL, mirror_valid_to timestamptz NOT NULL);
CREATE INDEX quote_lines_history_valid_to ON quote_lines_history (business, mirror_valid_to);

CREATE TABLE invoices_history (LIKE invoices, mirror_valid_to timestamptz NOT NULL);
ALTER TABLE invoices_history ALTER COLUMN mirror_valid_from SET NOT NULL;
CREATE INDEX invoices_history_id ON invoices_history (business, id, mirror_valid_from);
CREATE INDEX invoices_history_valid_to ON invoices_history (business, mirror_valid_to);
CREATE TABLE invoice_lines_history (LIKE invoice_lines, mirror_valid_from timestamptz NOT NULL, mirror_valid_to timestamptz NOT NULL);
CREATE INDEX invoice_lines_history_valid_to ON invoice_lines_history (business, mirror_valid_to);

CREATE FUNCTION clients_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	id text,
	name text,
	email text,
	phone text,
	created_at timestamp with time zone,
	updated_at timestamp with time zone,
	raw jsonb,
	mirror_version timestamp with time zone,
	mirror_fetch_seq bigint,
	mirror_synced_at timestamp with time zone,
	mirror_changed_at timestamp with time zone,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT t.business, t.id, t.name, t.email, t.phone, t.created_at, t.updated_at, t.raw, t.mirror_version, t.mirror_fetch_seq, t.mirror_synced_at, t.mirror_changed_at, t.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.clients AS t
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.id, h.name, h.email, h.phone, h.created_at, h.updated_at, h.raw, h.mirror_version, h.mirror_fetch_seq, h.mirror_synced_at, h.mirror_changed_at, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.clients_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION suppliers_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	id text,
	name text,
	email text,
	phone text,
	created_at timestamp with time zone,
	updated_at timestamp with time zone,
	raw jsonb,
	mirror_version timestamp with time zone,
	mirror_fetch_seq bigint,
	mirror_synced_at timestamp with time zone,
	mirror_changed_at timestamp with time zone,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT t.business, t.id, t.name, t.email, t.phone, t.created_at, t.updated_at, t.raw, t.mirror_version, t.mirror_fetch_seq, t.mirror_synced_at, t.mirror_changed_at, t.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.suppliers AS t
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.id, h.name, h.email, h.phone, h.created_at, h.updated_at, h.raw, h.mirror_version, h.mirror_fetch_seq, h.mirror_synced_at, h.mirror_changed_at, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.suppliers_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION accounts_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	id text,
	code text,
	name text,
	type text,
	is_active boolean,
	raw jsonb,
	mirror_version timestamp with time zone,
	mirror_fetch_seq bigint,
	mirror_synced_at timestamp with time zone,
	mirror_changed_at timestamp with time zone,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT t.business, t.id, t.code, t.name, t.type, t.is_active, t.raw, t.mirror_version, t.mirror_fetch_seq, t.mirror_synced_at, t.mirror_changed_at, t.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.accounts AS t
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.id, h.code, h.name, h.type, h.is_active, h.raw, h.mirror_version, h.mirror_fetch_seq, h.mirror_synced_at, h.mirror_changed_at, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.accounts_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION tax_codes_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	id text,
	code text,
	name text,
	rate numeric,
	region text,
	raw jsonb,
	mirror_version timestamp with time zone,
	mirror_fetch_seq bigint,
	mirror_synced_at timestamp with time zone,
	mirror_changed_at timestamp with time zone,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT t.business, t.id, t.code, t.name, t.rate, t.region, t.raw, t.mirror_version, t.mirror_fetch_seq, t.mirror_synced_at, t.mirror_changed_at, t.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.tax_codes AS t
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.id, h.code, h.name, h.rate, h.region, h.raw, h.mirror_version, h.mirror_fetch_seq, h.mirror_synced_at, h.mirror_changed_at, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.tax_codes_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION items_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	id text,
	item_code text,
	name text,
	description text,
	item_type text,
	unit_price numeric,
	is_taxable boolean,
	account_id text,
	tax_code_id text,
	is_active boolean,
	created_at timestamp with time zone,
	updated_at timestamp with time zone,
	raw jsonb,
	mirror_version timestamp with time zone,
	mirror_fetch_seq bigint,
	mirror_synced_at timestamp with time zone,
	mirror_changed_at timestamp with time zone,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT t.business, t.id, t.item_code, t.name, t.description, t.item_type, t.unit_price, t.is_taxable, t.account_id, t.tax_code_id, t.is_active, t.created_at, t.updated_at, t.raw, t.mirror_version, t.mirror_fetch_seq, t.mirror_synced_at, t.mirror_changed_at, t.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.items AS t
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.id, h.item_code, h.name, h.description, h.item_type, h.unit_price, h.is_taxable, h.account_id, h.tax_code_id, h.is_active, h.created_at, h.updated_at, h.raw, h.mirror_version, h.mirror_fetch_seq, h.mirror_synced_at, h.mirror_changed_at, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.items_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION bank_accounts_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	id text,
	name text,
	account_number text,
	currency text,
	balance numeric,
	raw jsonb,
	mirror_version timestamp with time zone,
	mirror_fetch_seq bigint,
	mirror_synced_at timestamp with time zone,
	mirror_changed_at timestamp with time zone,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT t.business, t.id, t.name, t.account_number, t.currency, t.balance, t.raw, t.mirror_version, t.mirror_fetch_seq, t.mirror_synced_at, t.mirror_changed_at, t.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.bank_accounts AS t
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.id, h.name, h.account_number, h.currency, h.balance, h.raw, h.mirror_version, h.mirror_fetch_seq, h.mirror_synced_at, h.mirror_changed_at, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.bank_accounts_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION bank_transactions_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	id text,
	bank_account_id text,
	date date,
	description text,
	amount numeric,
	reference text,
	status text,
	raw jsonb,
	mirror_version timestamp with time zone,
	mirror_fetch_seq bigint,
	mirror_synced_at timestamp with time zone,
	mirror_changed_at timestamp with time zone,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT t.business, t.id, t.bank_account_id, t.date, t.description, t.amount, t.reference, t.status, t.raw, t.mirror_version, t.mirror_fetch_seq, t.mirror_synced_at, t.mirror_changed_at, t.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.bank_transactions AS t
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.id, h.bank_account_id, h.date, h.description, h.amount, h.reference, h.status, h.raw, h.mirror_version, h.mirror_fetch_seq, h.mirror_synced_at, h.mirror_changed_at, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.bank_transactions_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION bills_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	id text,
	bill_number text,
	supplier_id text,
	supplier_name text,
	status text,
	issue_date date,
	due_date date,
	currency text,
	subtotal numeric,
	tax_total numeric,
	total numeric,
	created_at timestamp with time zone,
	updated_at timestamp with time zone,
	raw jsonb,
	mirror_version timestamp with time zone,
	mirror_fetch_seq bigint,
	mirror_synced_at timestamp with time zone,
	mirror_changed_at timestamp with time zone,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT t.business, t.id, t.bill_number, t.supplier_id, t.supplier_name, t.status, t.issue_date, t.due_date, t.currency, t.subtotal, t.tax_total, t.total, t.created_at, t.updated_at, t.raw, t.mirror_version, t.mirror_fetch_seq, t.mirror_synced_at, t.mirror_changed_at, t.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.bills AS t
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.id, h.bill_number, h.supplier_id, h.supplier_name, h.status, h.issue_date, h.due_date, h.currency, h.subtotal, h.tax_total, h.total, h.created_at, h.updated_at, h.raw, h.mirror_version, h.mirror_fetch_seq, h.mirror_synced_at, h.mirror_changed_at, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.bills_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION bill_lines_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	bill_id text,
	"position" integer,
	id text,
	description text,
	quantity numeric,
	unit_price numeric,
	amount numeric,
	tax_amount numeric,
	account_id text,
	tax_code_id text,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT l.business, l.bill_id, l.position, l.id, l.description, l.quantity, l.unit_price, l.amount, l.tax_amount, l.account_id, l.tax_code_id, l.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.bill_lines AS l JOIN @.bills AS t ON t.business = l.business AND t.id = l.bill_id
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.bill_id, h.position, h.id, h.description, h.quantity, h.unit_price, h.amount, h.tax_amount, h.account_id, h.tax_code_id, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.bill_lines_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION quotes_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	id text,
	quote_number text,
	title text,
	client_id text,
	client_name text,
	status text,
	issue_date date,
	valid_until date,
	subtotal numeric,
	tax_total numeric,
	total numeric,
	currency text,
	notes text,
	created_at timestamp with time zone,
	updated_at timestamp with time zone,
	raw jsonb,
	mirror_version timestamp with time zone,
	mirror_fetch_seq bigint,
	mirror_synced_at timestamp with time zone,
	mirror_changed_at timestamp with time zone,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT t.business, t.id, t.quote_number, t.title, t.client_id, t.client_name, t.status, t.issue_date, t.valid_until, t.subtotal, t.tax_total, t.total, t.currency, t.notes, t.created_at, t.updated_at, t.raw, t.mirror_version, t.mirror_fetch_seq, t.mirror_synced_at, t.mirror_changed_at, t.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.quotes AS t
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.id, h.quote_number, h.title, h.client_id, h.client_name, h.status, h.issue_date, h.valid_until, h.subtotal, h.tax_total, h.total, h.currency, h.notes, h.created_at, h.updated_at, h.raw, h.mirror_version, h.mirror_fetch_seq, h.mirror_synced_at, h.mirror_changed_at, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.quotes_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION quote_lines_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	quote_id text,
	"position" integer,
	id text,
	item_id text,
	item_code text,
	item_name text,
	description text,
	quantity numeric,
	unit_price numeric,
	amount numeric,
	tax_amount numeric,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT l.business, l.quote_id, l.position, l.id, l.item_id, l.item_code, l.item_name, l.description, l.quantity, l.unit_price, l.amount, l.tax_amount, l.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.quote_lines AS l JOIN @.quotes AS t ON t.business = l.business AND t.id = l.quote_id
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.quote_id, h.position, h.id, h.item_id, h.item_code, h.item_name, h.description, h.quantity, h.unit_price, h.amount, h.tax_amount, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.quote_lines_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION invoices_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	id text,
	invoice_number text,
	client_id text,
	client_name text,
	status text,
	issue_date date,
	due_date date,
	subtotal numeric,
	tax_total numeric,
	total numeric,
	amount_paid numeric,
	amount_due numeric,
	currency text,
	notes text,
	reference text,
	created_at timestamp with time zone,
	updated_at timestamp with time zone,
	raw jsonb,
	mirror_version timestamp with time zone,
	mirror_fetch_seq bigint,
	mirror_synced_at timestamp with time zone,
	mirror_changed_at timestamp with time zone,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT t.business, t.id, t.invoice_number, t.client_id, t.client_name, t.status, t.issue_date, t.due_date, t.subtotal, t.tax_total, t.total, t.amount_paid, t.amount_due, t.currency, t.notes, t.reference, t.created_at, t.updated_at, t.raw, t.mirror_version, t.mirror_fetch_seq, t.mirror_synced_at, t.mirror_changed_at, t.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.invoices AS t
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.id, h.invoice_number, h.client_id, h.client_name, h.status, h.issue_date, h.due_date, h.subtotal, h.tax_total, h.total, h.amount_paid, h.amount_due, h.currency, h.notes, h.reference, h.created_at, h.updated_at, h.raw, h.mirror_version, h.mirror_fetch_seq, h.mirror_synced_at, h.mirror_changed_at, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.invoices_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

CREATE FUNCTION invoice_lines_as_of(p_business text, p_at timestamptz) RETURNS TABLE (
	business text,
	invoice_id text,
	"position" integer,
	id text,
	description text,
	quantity numeric,
	unit_price numeric,
	amount numeric,
	tax_amount numeric,
	account_id text,
	tax_code_id text,
	mirror_deleted_at timestamp with time zone,
	mirror_valid_from timestamp with time zone,
	mirror_valid_to timestamp with time zone)
LANGUAGE sql STABLE AS $$
SELECT l.business, l.invoice_id, l.position, l.id, l.description, l.quantity, l.unit_price, l.amount, l.tax_amount, l.account_id, l.tax_code_id, l.mirror_deleted_at,
	coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at), t.mirror_deleted_at
FROM @.invoice_lines AS l JOIN @.invoices AS t ON t.business = l.business AND t.id = l.invoice_id
WHERE t.business = p_business AND coalesce(t.mirror_valid_from, nullif(t.mirror_version, '-infinity'), t.mirror_changed_at) <= p_at
	AND (t.mirror_deleted_at IS NULL OR p_at < t.mirror_deleted_at)
UNION ALL
SELECT h.business, h.invoice_id, h.position, h.id, h.description, h.quantity, h.unit_price, h.amount, h.tax_amount, h.account_id, h.tax_code_id, h.mirror_deleted_at,
	h.mirror_valid_from, h.mirror_valid_to
FROM @.invoice_lines_history AS h
WHERE h.business = p_business AND h.mirror_valid_from <= p_at AND p_at < h.mirror_valid_to
$$;

