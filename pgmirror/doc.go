// Package pgmirror keeps a PostgreSQL schema equal to a business's data on
// the Invoicing Service (or many businesses', see Many businesses), for reporting and for joins with your own tables:
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
// members included, in raw (jsonb), and five columns of the mirror's own:
// mirror_version (the service's updated_at, else created_at, else
// -infinity), mirror_fetch_seq, mirror_synced_at (when a write last
// confirmed the content), mirror_changed_at (when its content last
// changed), mirror_deleted_at (NULL while the service lists the record;
// see Deletions below) and mirror_valid_from (when its version began; see
// History below). For the resources the API documents only in
// outline, a column whose field the service did not send, or sent in
// another shape, is NULL (the member is in raw as sent).
//
// The webhook inbox (webhooks/pginbox) lives in the same schema (the
// deliveries processed more than Config.InboxRetention ago are deleted),
// and so do the mirror's own tables:
// mirror_migrations (the migrations applied), mirror_backfill (each
// resource's backfill checkpoint, and the number of its last walk),
// mirror_pending_fetch (the records events named, waiting to be fetched),
// mirror_reconcile (the last reconciliation's start, end and corrections),
// mirror_confirmed (single fetches that found a record unchanged; see
// below), mirror_changes (the change feed) and mirror_event_lag (the event
// lag of the records written in the last hour, for the status) and
// mirror_fetch_numbers (each business's last fetch number). Migrations are versioned, run under an
// advisory lock, and only ever add.
//
// # How the copy stays exact
//
// Fetch, never trust a payload: an event only names the records to fetch
// (the invoice for invoice and payment events; the quote, and the invoice
// it converted into, for quote events; the bill; the client or supplier),
// and the mirror fetches them with the SDK's Get.
//
// Never older: every fetch (a Get, or a walk of a list) takes a number of
// its business (a counter row of mirror_fetch_numbers, which a fetch of
// another business never waits on) before its request is sent. A record is written
// only when its (version, fetch number) is not older than the row's,
// compared as a pair: a newer updated_at always wins, and an equal one (two
// changes in the same second) goes to the later fetch, which was sent after
// the earlier one and so cannot have seen an older state. Lines are
// replaced in the same transaction, only when their parent's content
// changed. Out-of-order, duplicate and late deliveries, and late answers,
// therefore never roll a row back.
//
// Unchanged means untouched: a fetch that finds a record's content
// unchanged writes nothing to its row or its lines (it compares before it
// writes, and locks nothing), so an hourly reconciliation of an unchanged
// mirror adds no dead tuple and no change downstream; mirror_synced_at is
// when a write last confirmed the content. Its fetch number still counts:
// the row's number in the pair is the highest of the fetch that wrote it,
// of the last walk of its resource that began (mirror_backfill.walk_seq: a
// walk lists every row, so its number stands for all of them), and of a
// single fetch (an event's) that found it unchanged (mirror_confirmed, kept
// until the next walk begins, whose number then covers it). The version
// needs no such care: it is read from the content (updated_at, else
// created_at), so an unchanged content has an unchanged version. Hence a
// late answer is refused whenever a fetch that wrote or saw the row's
// content is newer, as when every confirming fetch rewrote the row. (A
// walk's number also covers the rows it has not reached yet: an older
// answer for one of them is refused, and the walk's own, newer, copy
// follows.)
//
// Deletions: the API deletes nothing it documents, but a record can stop
// being listed. After a complete walk, a reconciliation marks deleted
// (mirror_deleted_at, NULL while listed) the rows it did not list and that
// no fetch wrote since it began, once a Get answers 404 for each (where the
// resource has one), and only when the walk listed as many records as the
// service counts; the rows are kept as last seen, their lines marked with
// them (the lines tables have mirror_deleted_at too: filter on it when
// summing lines alone), counted in the log ("pgmirror: marked deleted"),
// and unmarked by the next fetch that shows the record (which writes its
// lines anew). When the service no longer lists more than half of a table
// of at least MassDeletionMinRows rows, a different business behind the API
// key is likelier than mass deletion: the reconciliation writes and marks
// nothing and fails with ErrMassDeletion, and RunReconciler returns it, so
// the mirror stops until the operator says otherwise
// (Config.AllowMassDeletion, invoicing-mirror --allow-mass-deletion). It
// checks before it writes: it fetches a few rows of each such table at
// random, and lists the table's ids when most of them are gone. Run makes
// the same check at startup when the backfill is already complete, before
// its fetchers write anything, so that the events of another business are
// not merged in until the first reconciliation: it returns ErrMassDeletion
// at once. The backfill marks nothing: it counts only the rows not marked
// in its closing proof, and the first reconciliation marks what it must.
//
// The change feed: every write that changes a row (an insert, an update,
// a deletion mark, an unmark) writes one row to mirror_changes in its own
// transaction: resource, id, cause (event, backfill or reconciliation), op
// (insert, update, delete; an unmark is an insert) and the members of the
// record's JSON that changed, old and new (the whole record for an insert
// or a delete). A fetch that finds the content unchanged writes none. No
// lock is taken by every writer: a change's seq is its transaction's id shifted
// left 20 bits plus its ordinal in the transaction, and a transaction
// takes its id only once it holds the locks of the records it writes
// (transaction-scoped advisory locks: its resource's shared and one per
// bucket of record ids, or a walk's page its resource's exclusive), so
// that the transactions writing a record take their ids, and so their
// seqs, in the order they write it; readers read only
// below the horizon, the changes of the transactions older than the
// oldest one still running (pg_current_snapshot), so that a reader that
// saw seq N never sees a lower one appear later, and resuming after N
// misses nothing. (A long transaction that writes, anywhere in the
// database, delays the readers until it ends; never the writers.) Once
// such a transaction has committed, its process NOTIFYs the channel named
// as the schema, in a statement of its own (a NOTIFY inside the
// transactions would serialise them all at commit), one at a time per
// process; followers also look every second. Mirror.Changes and Mirror.FollowChanges read
// the feed as iterators, resumable after any seq (the functions Changes
// and FollowChanges do the same for a reader that runs no Mirror;
// invoicing-mirror changes --follow prints it as JSON lines); each
// replica deletes, every minute, the changes older than
// Config.ChangeRetention, and a reader resuming before them gets
// ErrChangesPruned.
// Config.DisableChangeFeed writes none. Replaying the feed from empty
// rebuilds the tables exactly (the proof tests check it after their
// faults).
//
// History: every version of every record is kept with the interval in
// which it was the current one, [mirror_valid_from, mirror_valid_to). The
// current version is the row of the record's table; a write that replaces
// it (or writes again a record marked deleted) moves the old one, in the
// same statement, to <table>_history with its interval, and its lines to
// <lines>_history with the same interval; a deletion mark ends the current
// version at mirror_deleted_at. A version begins at the record's
// updated_at (created_at when never updated) when the service moved it,
// else at the mirror's clock when it wrote the version (Config.Clock): for
// the resources without timestamps (accounts, tax codes, bank accounts and
// transactions), and for a change the service made without moving
// updated_at (an invoice falling overdue); never before the version it
// follows ended. A deletion mark is stamped by the mirror's clock too. So
// the history knows a change when the mirror saw it: an instant between
// two settled states is answered as the mirror then had it (an event's lag
// late, a change that raises no event a reconciliation late).
// <table>_as_of(business, at) and <lines>_as_of(business, at), one per
// record and lines table, return a business's records and lines as they
// stood at the instant at, each with its interval (mirror_valid_to NULL
// while current). Versions are kept forever by default;
// Config.HistoryRetention deletes those that ended longer ago, and
// Config.DisableHistory keeps none. Rows written before the history began
// (schema version 13) count from their mirror_version, or without one from
// mirror_changed_at.
//
// Leaving data out: a business's Selection (Config.Selection, or
// BusinessConfig.Selection for the businesses of the database) names the
// resources the mirror copies (the others are never walked, their events
// not followed), the members of its records it never stores, and those it
// stores as a keyed hash. Each row is selected as it comes from the service, before
// anything compares or writes it, so that the tables, the lines, the
// change feed and the history never see the values; the webhook inbox
// keeps of such a business's deliveries only the ids and instants the
// mirror reads (pginbox.WithStoredBody). A changed Selection is applied
// by the first replica that loads it, in one transaction that takes every
// lock of the business's writes (see the change feed), and rewrites what is held: the
// members now left out or hashed, in the rows, lines, history, change
// feed and inbox; the resources no longer mirrored, deleted; those kept
// again, walked again. Each row fetched carries when the Selection that
// shaped it was applied (mirror_selections.applied_at), and a writer
// checks it against the one recorded once it holds its locks: a replica
// that fetched under the Selection before writes nothing and fetches
// again.
//
// Coalescing: the Workers record each delivery's fetches in
// mirror_pending_fetch in the delivery's own transaction (exactly-once hand
// off). A record already waiting keeps its earlier due time, the first
// request plus Config.CoalesceWindow, so a burst of events is one fetch. A
// fetcher leases due requests, fetches, writes, and removes the request
// only if no other request came in meanwhile; otherwise the record is
// fetched again. The records of one resource of a business leased
// together are fetched at once and written in one transaction (at most 8),
// so that a business's burst costs fewer transactions than events. A lease
// of a fetcher that died expires (Config.FetchLease).
//
// The backfill walks every list with WithPrefetch, writing batches in
// transactions that also move the resource's checkpoint, so it resumes
// where it stopped; it proves the table complete against the service's
// total, with closing passes when page drift or late creations leave it
// short (see Backfill). The reconciler re-lists everything every
// Config.ReconcileInterval with the same rule, correcting what raises no
// event (see Reconcile), and reports its corrections through the log,
// Config.OnReconciled and the metrics.
//
// # Many businesses
//
// One mirror serves one business (Config.Client's key, named
// Config.Business) or, with Config.Keys, every business recorded in its
// schema's mirror_businesses table (Businesses): an accounting practice's
// clients, a platform's customers. Every table carries a business column,
// first in its key, so that a record is (business, id) and SQL across
// businesses is plain (GROUP BY business). Each business has its own API
// key (sent with invoicing.WithAPIKey on the one Client), its own webhook
// URL on BusinessHandler (verified with its own secrets only), its own
// budget, and its own state: backfill checkpoints, reconciliation times,
// pending fetches, change feed rows, pause.
//
// Isolation first, then fairness: a business's requests, summed over the
// replicas, stay within its budget (a token bucket in mirror_budgets, taken
// a twentieth of a second's worth at a time: one statement a request at 20
// a second or less; event fetches are served before walks, which leave a
// reserve, so that a business's events are fetched at once while its
// backfill uses the rest). The fetchers claim due records round-robin
// across businesses (a business alone has them all; among others a half, a
// third, a quarter at most); each replica walks
// (backfills, then reconciles) Config.Walkers businesses at once, taking
// them in turns, one walk of a business at a time; the first
// reconciliations of businesses backfilled together are spread over
// ReconcileInterval by their names. A business whose key the service
// refuses, or that keeps answering 429 or failing, is paused (recorded in
// mirror_budgets, so every replica skips it; one call tries again when the
// pause ends, with backoff, and a success or a new key ends it) and shows
// in Status and the metrics; the others go on. Events come first: a
// business whose events alone use its whole budget backfills only when
// they leave room.
//
// Keys and secrets are sealed with AES-256-GCM under the Keyring's current
// key, bound to the business and the field (a value copied elsewhere does
// not open); rotate by putting a new key first, Businesses.Reseal, then
// dropping the old key. A single-business mirror of an earlier version
// upgrades in place (migration 5): its rows become Config.Business's.
//
// # Operating it
//
// Faults: every loop of the mirror (the Workers, the fetchers, the walks,
// the watch of the businesses, the pruning) is a step run by one
// supervisor, and every failure goes to one decision. The database away
// makes the loops wait, a second, doubling, at most about 30 seconds, and
// the mirror logs one line when it goes away and one when it is back,
// whatever its loops meet meanwhile. The service failing a business's
// calls (a 429 storm, 5xx, a network failure) pauses the business with
// the same backoff, or what a Retry-After asks (recorded in mirror_budgets:
// no replica calls the service for it meanwhile; one call tries again when
// the pause ends, and a success ends it), logged the same way by the
// business's API; a record whose own fetch keeps failing waits up to 5
// minutes between attempts. The service refusing a business's key, or most
// of its records vanishing (ErrMassDeletion), stops the mirror for the
// business of Config.Client, and pauses a business of the database (15
// minutes; 24 hours for a mass deletion; Businesses.Add ends it), logged
// at Error. A failure that is no dependency's (a statement that fails) is
// logged each time, and tried again after the backoff. Run checks the API
// key and base URL of Config.Client with one request before it creates
// any schema (CheckAPI), waits for the database, and logs "pgmirror:
// backfill complete" once every business is backfilled. Every minute, each
// replica deletes what is past its retention (Config.InboxRetention,
// Config.ChangeRetention, and the event lags of the status).
//
// The code: api.go is the only file that calls the service, and classifies
// each failure where it enters; internal/store holds every SQL statement,
// behind typed methods, and returns the database's failures typed; the
// mirrored tables' columns, row functions and resources are generated
// (tables_gen.go) from the SDK's records, by recordgen, from their
// //mirror:table lines; the migrations are hand-written
// (internal/store/migrations), and a test compares them.
//
// Metrics: Config.Metrics (NewMetrics; give its Middleware to the Client
// and register it) receives the mirror's Prometheus metrics, and
// InboxMetrics returns the webhook inbox's collector; see Metrics for the
// list.
//
// Status: ReadStatus reads, from the tables alone, each resource's phase,
// rows, deletion marks, backfill, last reconciliation and corrections,
// pending fetches and event lag, and Status.Problems says whether the
// mirror is degraded (invoicing-mirror status prints both, with an exit
// status for a health probe; the command also serves /healthz, and /readyz,
// which answers 200 once the backfill is complete).
//
// # Assumptions
//
// Where the API documentation is silent, the mirror assumes that a record
// the service stops listing (and answers 404 for, where it has a Get) was
// deleted: none of its documented endpoints delete, so such a row is kept
// and marked deleted (mirror_deleted_at, see Deletions), never removed. It
// also assumes that a record's updated_at never goes back, and that its
// lists hold every record exactly once when nothing changes during a walk.
// A change that raises no event (an invoice becoming overdue, a quote
// declined, a bill paid, a bank balance) reaches the mirror with the first
// reconciliation that starts after it.
package pgmirror
