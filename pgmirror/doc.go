// Package pgmirror keeps a PostgreSQL schema equal to a business's data on
// the Invoicing Service, for reporting and for joins with your own tables:
// invoices and their lines, quotes and their lines, items, clients,
// suppliers, bills and their lines, accounts, tax codes, bank accounts and
// bank transactions. The command invoicing-mirror (cmd/invoicing-mirror)
// runs it; this package is for embedding it.
//
//	m, err := pgmirror.Open(ctx, os.Getenv("DATABASE_URL"), pgmirror.Config{Client: client})
//	...
//	if err := m.Migrate(ctx); err != nil { ... }
//	http.Handle("/webhooks", m.Handler(verifier)) // from the first second: deliveries are stored durably
//	err = m.Run(ctx) // workers, fetchers, backfill, then the reconciler, until ctx ends
//
// Every replica runs the same code against one database; they share the
// work through it (advisory locks and SELECT ... FOR UPDATE SKIP LOCKED),
// with no leader of their own.
//
// # The tables
//
// Migrate creates, in Config.Schema (default invoicing_mirror), one table
// per resource named as Resources lists them, plus invoice_lines,
// quote_lines and bill_lines (parent id, position, the line's fields). Each
// record table has a column per documented field, named as the API names it
// (money numeric, at the scale the service sent; civil dates date;
// datetimes timestamptz), the record's JSON as the service sent it, unknown
// members included, in raw (jsonb), and four columns of the mirror's own:
// mirror_version (the service's updated_at, else created_at, else
// -infinity), mirror_fetch_seq, mirror_synced_at (when a fetch last
// confirmed the row) and mirror_changed_at (when its content last changed).
// For the resources the API documents only in outline, a column whose field
// the service did not send, or sent in another shape, is NULL (the member
// is in raw as sent). The webhook inbox (webhooks/pginbox) lives in the
// same schema (each reconciliation deletes the deliveries processed more
// than Config.InboxRetention ago), and so do the mirror's own tables: mirror_migrations,
// mirror_backfill (the checkpoints), mirror_pending_fetch and
// mirror_reconcile. Migrations are versioned, run under an advisory lock,
// and only ever add.
//
// # How the copy stays exact
//
// Fetch, never trust a payload: an event only names the records to fetch
// (the invoice for invoice and payment events; the quote, and the invoice
// it converted into, for quote events; the bill; the client or supplier),
// and the mirror fetches them with the SDK's Get.
//
// Never older: every fetch (a Get, or a walk of a list) takes a number from
// a PostgreSQL sequence before its request is sent. A record is written
// only when its (version, fetch number) is not older than the row's,
// compared as a pair: a newer updated_at always wins, and an equal one (two
// changes in the same second) goes to the later fetch, which was sent after
// the earlier one and so cannot have seen an older state. A fetch that
// finds the content unchanged still moves the row's pair forward. Lines are
// replaced in the same transaction, only when their parent's content
// changed. Out-of-order, duplicate and late deliveries, and late answers,
// therefore never roll a row back.
//
// Coalescing: the Workers record each delivery's fetches in
// mirror_pending_fetch in the delivery's own transaction (exactly-once hand
// off). A record already waiting keeps its earlier due time, the first
// request plus Config.CoalesceWindow, so a burst of events is one fetch. A
// fetcher leases due requests, fetches, writes, and removes the request
// only if no other request came in meanwhile; otherwise the record is
// fetched again. A lease of a fetcher that died expires (Config.FetchLease).
//
// The backfill walks every list with WithPrefetch, writing batches in
// transactions that also move the resource's checkpoint, so it resumes
// where it stopped; it proves the table complete against the service's
// total, with closing passes when page drift or late creations leave it
// short (see Backfill). The reconciler re-lists everything every
// Config.ReconcileInterval with the same rule, correcting what raises no
// event (see Reconcile), and reports its corrections through the log and
// Config.OnReconciled.
//
// # Assumptions
//
// Where the API documentation is silent, the mirror assumes that the
// service deletes nothing (none of its endpoints delete), that a record's
// updated_at never goes back, and that its lists hold every record exactly
// once when nothing changes during a walk. A change that raises no event
// (an invoice becoming overdue, a quote declined, a bill paid, a bank
// balance) reaches the mirror with the first reconciliation that starts
// after it.
package pgmirror
