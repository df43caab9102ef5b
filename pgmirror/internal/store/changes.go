package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// mirror_changes: the change feed. Every write that changes a record's row
// writes one change in its own transaction.

// insertChangesSQL writes changes of the records of a table, given as
// arrays ($3 ids, $4 ops, $5 the JSON texts before an update, NULL
// otherwise; $1 the resource, $2 the cause, $7 the business), in their
// order, and notifies the channel $6 with the last seq written. What a
// change holds is read from the row as the transaction leaves it: the whole
// record for an insert or a delete (a deletion mark leaves the content as
// it was), and for an update the members that differ from the JSON before
// it. A record changes at most once in a transaction.
const insertChangesSQL = `WITH written AS (
	INSERT INTO @.mirror_changes (business, resource, id, cause, op, old_values, new_values)
	SELECT $7, $1, u.id, $2, u.op,
		CASE u.op WHEN 'update' THEN (SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(u.old) AS e
		                               WHERE t.raw -> e.key IS DISTINCT FROM e.value)
		          WHEN 'delete' THEN t.raw END,
		CASE u.op WHEN 'update' THEN (SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(t.raw) AS e
		                               WHERE u.old -> e.key IS DISTINCT FROM e.value)
		          WHEN 'insert' THEN t.raw END
	FROM (SELECT id, op, old::jsonb AS old, n
	      FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(id, op, old, n)) AS u
	JOIN @.%s AS t ON t.business = $7 AND t.id = u.id
	ORDER BY u.n
	RETURNING seq)
SELECT pg_notify($6, max(seq)::text) FROM written`

const (
	changesLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`
	prunedSQL      = `SELECT coalesce(max(changes_pruned_through), 0) FROM @.mirror_reconcile`
	readChangesSQL = `SELECT seq, at, business, resource, id, cause, op, old_values, new_values
FROM @.mirror_changes WHERE seq > $1 ORDER BY seq LIMIT $2`
	pruneChangesSQL = `WITH last AS (
	SELECT max(seq) AS seq FROM @.mirror_changes WHERE at < now() - $1::interval
), deleted AS (
	DELETE FROM @.mirror_changes WHERE seq <= (SELECT seq FROM last) RETURNING seq
), moved AS (
	UPDATE @.mirror_reconcile SET changes_pruned_through = greatest(changes_pruned_through, (SELECT seq FROM last))
	WHERE (SELECT seq FROM last) IS NOT NULL
)
SELECT count(*) FROM deleted`
	pruneInboxSQL = `DELETE FROM @.` + pginbox.TableName + ` WHERE status = $1 AND processed_at < now() - $2::interval`
)

// Changes are the changes a transaction made to the records of one table.
type Changes struct {
	Table    string // the records' table
	Resource string
	IDs, Ops []string
	Olds     []*string // the JSON before an update; nil for the other ops
}

// WriteChanges writes the changes of cause to records of business to the
// feed, in tx. It first takes the feed's transaction lock, which it holds
// until tx commits: writers commit their changes one at a time, in seq
// order, so that a reader that has seen seq N never sees a lower one
// appear later. Take it last, once the records are written, so that it is
// held only while the changes are inserted and tx commits. Each
// transaction notifies the channel named as the schema.
func (tx *Tx) WriteChanges(ctx context.Context, cause, business string, changes []Changes) error {
	b := &pgx.Batch{}
	b.Queue(changesLockSQL, LockKey(tx.s.schema, "changes"))
	for _, c := range changes {
		b.Queue(tx.s.q(fmt.Sprintf(insertChangesSQL, c.Table)), c.Resource, cause, c.IDs, c.Ops, c.Olds, tx.s.schema, business)
	}
	return fail("writing the change feed", tx.tx.SendBatch(ctx, b).Close())
}

// A Change is a row of the change feed.
type Change struct {
	Seq                    int64
	At                     time.Time
	Business, Resource, ID string
	Cause, Op              string
	Old, New               []byte
}

// ReadChanges returns up to limit changes after seq after, in seq order,
// and the last seq retention deleted.
func (s *Store) ReadChanges(ctx context.Context, after int64, limit int) (changes []Change, pruned int64, err error) {
	return readChanges(ctx, s, s.pool, after, limit)
}

// ReadChanges is Store.ReadChanges through the listening connection.
func (l *Listener) ReadChanges(ctx context.Context, after int64, limit int) (changes []Change, pruned int64, err error) {
	return readChanges(ctx, l.s, l.conn, after, limit)
}

func readChanges(ctx context.Context, s *Store, q querier, after int64, limit int) ([]Change, int64, error) {
	const op = "reading changes"
	var pruned int64
	if err := scan(ctx, q, op, s.q(prunedSQL), nil, &pruned); err != nil || after < pruned {
		return nil, pruned, err
	}
	out, err := collect(ctx, q, op, s.q(readChangesSQL), []any{after, limit}, func(r pgx.CollectableRow) (Change, error) {
		var c Change
		return c, r.Scan(&c.Seq, &c.At, &c.Business, &c.Resource, &c.ID, &c.Cause, &c.Op, &c.Old, &c.New)
	})
	return out, pruned, err
}

// PruneChanges deletes the changes older than retention (every change
// through the last one older: a prefix of the feed), records the last seq
// deleted for the readers, and returns how many it deleted.
func (s *Store) PruneChanges(ctx context.Context, retention time.Duration) (int64, error) {
	var n int64
	err := scan(ctx, s.pool, "deleting old changes", s.q(pruneChangesSQL), []any{retention}, &n)
	return n, err
}

// PruneInbox deletes the deliveries processed more than retention ago, and
// returns how many.
func (s *Store) PruneInbox(ctx context.Context, retention time.Duration) (int64, error) {
	return exec(ctx, s.pool, "deleting old deliveries", s.q(pruneInboxSQL), pginbox.StatusProcessed, retention)
}
