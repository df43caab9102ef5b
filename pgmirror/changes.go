package pgmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The change feed: every change of a record's content the mirror writes
// (a record inserted, updated, marked deleted or listed again) is one row
// of mirror_changes, written in the transaction of the change. Mirror.Changes
// and Mirror.FollowChanges read it.

// Causes of a change: what found it.
const (
	// CauseEvent is a fetch an event asked for.
	CauseEvent = "event"
	// CauseBackfill is the backfill's walk.
	CauseBackfill = "backfill"
	// CauseReconciliation is a reconciliation (its walk, or its deletion
	// marks).
	CauseReconciliation = "reconciliation"
)

// The unexported names the data path uses.
const (
	causeEvent          = CauseEvent
	causeBackfill       = CauseBackfill
	causeReconciliation = CauseReconciliation
)

// Operations of a change.
const (
	// OpInsert is a record the mirror did not hold, or held marked
	// deleted: New is the whole record, Old is nil.
	OpInsert = "insert"
	// OpUpdate is a change of a record's content: Old and New hold the
	// members of its JSON that changed, as they were and as they are (a
	// member added is only in New, one removed only in Old).
	OpUpdate = "update"
	// OpDelete is a deletion mark (the service no longer lists the record):
	// Old is the whole record as last seen, New is nil.
	OpDelete = "delete"
)

const (
	opInsert = OpInsert
	opUpdate = OpUpdate
	opDelete = OpDelete
)

// A Change is one change of a mirrored record, as the change feed holds it.
type Change struct {
	// Seq orders the changes: it grows with each change, in the order they
	// committed. Give the last Seq seen to Changes to go on after it.
	Seq int64 `json:"seq"`
	// At is when the transaction writing the change began.
	At time.Time `json:"at"`
	// Business is the name of the business the record belongs to (see
	// Config.Business and Businesses).
	Business string `json:"business"`
	// Resource is the resource's name (Invoices, Quotes, ...), ID the
	// record's id.
	Resource string `json:"resource"`
	ID       string `json:"id"`
	// Cause is what found the change: CauseEvent, CauseBackfill or
	// CauseReconciliation.
	Cause string `json:"cause"`
	// Op is OpInsert, OpUpdate or OpDelete; it says what Old and New hold.
	Op string `json:"op"`
	// Old and New are JSON objects of the record's members (as the service
	// sent them), nil where Op says there are none.
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
}

// ErrChangesPruned is the error Changes and FollowChanges yield when some
// of the changes after the position asked for were deleted by retention
// (Config.ChangeRetention): the reader would miss them. Its message says
// the last seq deleted; go on from there only if missing them is fine.
var ErrChangesPruned = errors.New("pgmirror: changes after this position were deleted by retention")

// changesPage is how many changes one query of a reader reads.
const changesPage = 1000

// Changes returns the changes after the seq after (0: from the first), in
// seq order, and ends with the last one committed. It is resumable: give the
// Seq of the last change handled to a later call. It reads in pages, each a
// query of its own on the Mirror's pool; stop ranging to stop reading. The
// iterator yields ErrChangesPruned (and ends) when retention deleted
// changes after after, and ends after yielding an error of the database or
// ctx's.
func (m *Mirror) Changes(ctx context.Context, after int64) iter.Seq2[Change, error] {
	return Changes(ctx, m.pool, m.cfg.Schema, after)
}

// FollowChanges is Changes that does not end at the last change: it waits,
// with LISTEN on the channel named as the schema (the mirror's writers
// NOTIFY it in each transaction that writes changes), for the next ones,
// until ctx ends (then it ends without an error) or the database fails (it
// yields the error and ends; call it again from the last Seq seen). It
// holds one connection of the Mirror's pool while it runs.
func (m *Mirror) FollowChanges(ctx context.Context, after int64) iter.Seq2[Change, error] {
	return FollowChanges(ctx, m.pool, m.cfg.Schema, after)
}

// Changes is Mirror.Changes for a reader that runs no Mirror: it reads the
// feed of the mirror in schema through db (any pool on the mirror's
// database).
func Changes(ctx context.Context, db *pgxpool.Pool, schema string, after int64) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) {
		readChanges(ctx, db, pgx.Identifier{schema}.Sanitize(), &after, yield)
	}
}

// FollowChanges is Mirror.FollowChanges for a reader that runs no Mirror
// (see Changes). It holds one connection of db while it runs.
func FollowChanges(ctx context.Context, db *pgxpool.Pool, schema string, after int64) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) {
		conn, err := db.Acquire(ctx)
		if err != nil {
			if ctx.Err() == nil {
				yield(Change{}, fmt.Errorf("pgmirror: following changes: %w", err))
			}
			return
		}
		defer unlisten(conn)
		schemaIdent := pgx.Identifier{schema}.Sanitize()
		if _, err := conn.Exec(ctx, "LISTEN "+schemaIdent); err != nil {
			if ctx.Err() == nil {
				yield(Change{}, fmt.Errorf("pgmirror: following changes: %w", err))
			}
			return
		}
		// The end of ctx ends the iterator without an error.
		quiet := func(c Change, err error) bool { return (err != nil && ctx.Err() != nil) || yield(c, err) }
		for {
			if !readChanges(ctx, conn, schemaIdent, &after, quiet) || ctx.Err() != nil {
				return
			}
			// Caught up: wait for a NOTIFY, or look again after a while in
			// case one was missed (a NOTIFY is not sent for a rolled back
			// transaction, and none can be lost otherwise; the timeout is a
			// safety net only).
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			_, err := conn.Conn().WaitForNotification(wctx)
			cancel()
			switch {
			case ctx.Err() != nil:
				return
			case err != nil && !errors.Is(err, context.DeadlineExceeded):
				yield(Change{}, fmt.Errorf("pgmirror: following changes: %w", err))
				return
			}
		}
	}
}

// unlisten gives back a connection that listened, or closes it when it
// cannot stop listening.
func unlisten(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	if _, err := conn.Exec(ctx, "UNLISTEN *"); err != nil {
		_ = conn.Hijack().Close(ctx)
		return
	}
	conn.Release()
}

// querier is a pool or a connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readChanges yields the changes after *after to the last one committed
// in the schema schemaIdent (quoted), moving *after on, and reports
// whether the caller may go on (the consumer wants more and no error was
// yielded).
func readChanges(ctx context.Context, db querier, schemaIdent string, after *int64, yield func(Change, error) bool) bool {
	fail := func(err error) bool {
		yield(Change{}, fmt.Errorf("pgmirror: reading changes: %w", err))
		return false
	}
	for {
		var pruned int64
		if err := db.QueryRow(ctx, `SELECT coalesce(max(changes_pruned_through), 0) FROM `+schemaIdent+`.mirror_reconcile`).Scan(&pruned); err != nil {
			return fail(err)
		}
		if *after < pruned {
			yield(Change{}, fmt.Errorf("%w (asked for those after %d; deleted through %d)", ErrChangesPruned, *after, pruned))
			return false
		}
		rows, err := db.Query(ctx, `SELECT seq, at, business, resource, id, cause, op, old_values, new_values
			FROM `+schemaIdent+`.mirror_changes WHERE seq > $1 ORDER BY seq LIMIT $2`, *after, changesPage)
		if err != nil {
			return fail(err)
		}
		page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Change, error) {
			var c Change
			var old, new []byte
			err := r.Scan(&c.Seq, &c.At, &c.Business, &c.Resource, &c.ID, &c.Cause, &c.Op, &old, &new)
			c.Old, c.New = old, new
			return c, err
		})
		if err != nil {
			return fail(err)
		}
		for _, c := range page {
			*after = c.Seq
			if !yield(c, nil) {
				return false
			}
		}
		if len(page) < changesPage {
			return true
		}
	}
}

// A writeTx is a transaction of writeIn: it knows what caused its record
// writes and collects the changes they make, for writeChanges.
type writeTx struct {
	pgx.Tx
	cause    string
	business string
	changes  []change
}

// change is a change to write. old is the record's JSON before an update,
// "" otherwise: the rest is the row as the transaction leaves it.
type change struct {
	res    *resource
	id, op string
	old    string
}

// changed records a change of the record id of res.
func (w *writeTx) changed(res *resource, id, op, old string) {
	w.changes = append(w.changes, change{res, id, op, old})
}

// counts are the transaction's changes by resource and cause.
func (w *writeTx) counts() map[changeKey]int64 {
	out := map[changeKey]int64{}
	for _, c := range w.changes {
		out[changeKey{c.res.name, w.cause}]++
	}
	return out
}

// insertChangesSQL writes changes of the records of table, given as arrays
// ($3 ids, $4 ops, $5 the JSON texts before an update, NULL otherwise; $1
// the resource, $2 the cause, $7 the business), in their order, and notifies the channel $6
// with the last seq written. What a change holds is read from the row as
// the transaction leaves it: the whole record for an insert or a delete
// (a deletion mark leaves the content as it was), and for an update the
// members that differ from the JSON before it. A record changes at most
// once in a transaction.
func insertChangesSQL(table string) string {
	return `WITH written AS (
	INSERT INTO mirror_changes (business, resource, id, cause, op, old_values, new_values)
	SELECT $7, $1, u.id, $2, u.op,
		CASE u.op WHEN 'update' THEN (SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(u.old) AS e
		                               WHERE t.raw -> e.key IS DISTINCT FROM e.value)
		          WHEN 'delete' THEN t.raw END,
		CASE u.op WHEN 'update' THEN (SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(t.raw) AS e
		                               WHERE u.old -> e.key IS DISTINCT FROM e.value)
		          WHEN 'insert' THEN t.raw END
	FROM (SELECT id, op, old::jsonb AS old, n
	      FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(id, op, old, n)) AS u
	JOIN ` + table + ` AS t ON t.business = $7 AND t.id = u.id
	ORDER BY u.n
	RETURNING seq)
SELECT pg_notify($6, max(seq)::text) FROM written`
}

// writeChanges writes w's changes to mirror_changes, unless the feed is
// disabled. It first takes the feed's transaction lock, which it holds
// until w commits: writers commit their changes one at a time, in seq
// order, so a reader that has seen seq N never sees a lower one appear
// later. The lock is taken last, once the records are written, so it is
// held only while the changes are inserted and w commits.
func (m *Mirror) writeChanges(ctx context.Context, w *writeTx) error {
	if len(w.changes) == 0 || m.cfg.DisableChangeFeed {
		return nil
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, m.lockKey("changes"))
	pending := slices.Clone(w.changes)
	for len(pending) > 0 {
		res := pending[0].res
		var ids, ops []string
		var olds []*string
		for _, c := range pending {
			if c.res == res {
				ids, ops, olds = append(ids, c.id), append(ops, c.op), append(olds, strOrNull(c.old))
			}
		}
		b.Queue(insertChangesSQL(res.table.name), res.name, w.cause, ids, ops, olds, m.cfg.Schema, w.business)
		pending = slices.DeleteFunc(pending, func(c change) bool { return c.res == res })
	}
	if err := w.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("writing the change feed: %w", err)
	}
	return nil
}

// pruneChanges deletes the changes older than ChangeRetention (every
// change through the last one older: a prefix of the feed), and records
// the last seq deleted for the readers.
func (m *Mirror) pruneChanges(ctx context.Context) error {
	if m.cfg.ChangeRetention < 0 {
		return nil
	}
	var n int64
	err := m.pool.QueryRow(ctx, `WITH last AS (
		SELECT max(seq) AS seq FROM mirror_changes WHERE at < now() - $1::interval
	), deleted AS (
		DELETE FROM mirror_changes WHERE seq <= (SELECT seq FROM last) RETURNING seq
	), moved AS (
		UPDATE mirror_reconcile SET changes_pruned_through = greatest(changes_pruned_through, (SELECT seq FROM last))
		WHERE (SELECT seq FROM last) IS NOT NULL
	)
	SELECT count(*) FROM deleted`, m.cfg.ChangeRetention).Scan(&n)
	if err != nil {
		return fmt.Errorf("deleting old changes: %w", err)
	}
	if n > 0 {
		m.log.InfoContext(ctx, "pgmirror: deleted changes past their retention", "changes", n,
			"retention", m.cfg.ChangeRetention.String())
	}
	return nil
}
