package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// The state of the mirror as its tables tell it, for its status and its
// metrics.

// queuesSQL reads the inbox (its pending rows, through the workers' partial
// index) and the pending fetches by resource.
const queuesSQL = `SELECT NULL::text, count(*), coalesce(extract(epoch FROM now() - min(received_at)), 0)::float8
FROM @.` + pginbox.TableName + ` WHERE status = 'pending'
UNION ALL
SELECT resource, count(*), extract(epoch FROM now() - min(requested_at))::float8
FROM @.mirror_pending_fetch GROUP BY resource`

// Queues is the work waiting in the database.
type Queues struct {
	InboxPending int64
	InboxOldest  time.Duration // 0 when none
	Fetches      map[string]Pending
}

// Pending are a resource's records waiting to be fetched.
type Pending struct {
	Count  int64
	Oldest time.Duration // since the first request of the oldest
}

// Queues reads the work waiting in the database.
func (s *Store) Queues(ctx context.Context) (Queues, error) { return readQueues(ctx, s, s.pool) }

func readQueues(ctx context.Context, s *Store, q querier) (Queues, error) {
	out := Queues{Fetches: map[string]Pending{}}
	type row struct {
		resource *string
		n        int64
		age      float64
	}
	rows, err := collect(ctx, q, "reading the queues", s.q(queuesSQL), nil, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.resource, &x.n, &x.age)
	})
	for _, x := range rows {
		d := time.Duration(x.age * float64(time.Second))
		if x.resource == nil {
			out.InboxPending, out.InboxOldest = x.n, d
		} else {
			out.Fetches[*x.resource] = Pending{Count: x.n, Oldest: d}
		}
	}
	return out, err
}

// Status is the state of the mirror as its tables tell it, read in one
// transaction (see ReadStatus).
type Status struct {
	At time.Time
	// Rows and Deleted are each table's rows and those marked deleted.
	Rows, Deleted map[string]int64
	// Backfills are each resource's backfill over the businesses: its
	// first start, and its last end once complete for every business.
	Backfills map[string]BackfillSpan
	// The last reconciliation: the latest start, the oldest end (nil when
	// some business never finished one), the corrections summed over the
	// businesses (a JSON object), and whether a replica reconciles now.
	ReconcileStarted, ReconcileFinished *time.Time
	Corrected                           []byte
	Reconciling                         bool
	Queues                              Queues
	// Lag is each resource's event lag over the window ("" for all).
	Lag        map[string]Lag
	Businesses []BusinessState
}

// A BackfillSpan is a resource's backfill, from its start to its end (nil
// while not complete).
type BackfillSpan struct {
	Started   time.Time
	Completed *time.Time
}

// A Lag is the event lag of the records written over a window.
type Lag struct {
	Count int64
	P99   time.Duration
}

// A BusinessState is one business's state.
type BusinessState struct {
	Name              string
	Backfilled        int
	ReconcileFinished *time.Time
	PausedUntil       *time.Time // nil unless paused
	PauseReason       string
	Removed           bool
	PendingFetches    int64
	Lag               Lag
}

const (
	backfillSpansSQL = `SELECT resource, min(started_at),
	CASE WHEN bool_and(completed_at IS NOT NULL) THEN max(completed_at) END FROM @.mirror_backfill GROUP BY resource`
	// reconcileStateSQL reads the last reconciliation; one runs while a
	// replica holds the advisory lock of a business's ($1 and the business).
	reconcileStateSQL = `SELECT now(), max(last_started_at), CASE WHEN bool_and(last_finished_at IS NOT NULL) THEN min(last_finished_at) END,
	(SELECT jsonb_object_agg(key, total) FROM (SELECT e.key, sum(e.value::int) AS total
		FROM @.mirror_reconcile AS r, jsonb_each_text(r.last_corrected) AS e GROUP BY e.key) AS c),
	EXISTS (SELECT 1 FROM pg_locks l, @.mirror_reconcile AS r,
			LATERAL (SELECT hashtextextended($1 || r.business, 0) AS k) AS key
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid = ((key.k >> 32) & 4294967295)::oid AND l.objid = (key.k & 4294967295)::oid)
FROM @.mirror_reconcile`
	lagByResourceSQL = `SELECT resource, count(*), percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_seconds)
FROM @.mirror_event_lag WHERE written_at > now() - $1::interval GROUP BY ROLLUP (resource)`
	businessStatesSQL = `WITH names AS (
	SELECT business AS name FROM @.mirror_backfill UNION SELECT name FROM @.mirror_businesses)
SELECT n.name,
	(SELECT count(*) FROM @.mirror_backfill AS f WHERE f.business = n.name AND f.completed_at IS NOT NULL),
	(SELECT last_finished_at FROM @.mirror_reconcile AS r WHERE r.business = n.name),
	(SELECT paused_until FROM @.mirror_budgets AS p WHERE p.business = n.name AND p.pause_reason IS NOT NULL),
	coalesce((SELECT pause_reason FROM @.mirror_budgets AS p WHERE p.business = n.name), ''),
	coalesce((SELECT removed_at IS NOT NULL FROM @.mirror_businesses AS b WHERE b.name = n.name), false),
	(SELECT count(*) FROM @.mirror_pending_fetch AS q WHERE q.business = n.name),
	(SELECT count(*) FROM @.mirror_event_lag AS l WHERE l.business = n.name AND l.written_at > now() - $1::interval),
	(SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_seconds) FROM @.mirror_event_lag AS l
		WHERE l.business = n.name AND l.written_at > now() - $1::interval)
FROM names AS n ORDER BY n.name`
)

// ReadStatus reads the state of the mirror, whose record tables are
// tables, in one read-only transaction; the event lag over lagWindow. It
// returns an error wrapping ErrNotMigrated when the schema holds no mirror
// at Version.
func (s *Store) ReadStatus(ctx context.Context, tables []string, lagWindow time.Duration) (*Status, error) {
	st := &Status{Rows: map[string]int64{}, Deleted: map[string]int64{}, Backfills: map[string]BackfillSpan{}, Lag: map[string]Lag{}}
	const op = "reading the status"
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := s.checkVersion(ctx, tx); err != nil {
			return err
		}
		var q strings.Builder
		for i, t := range tables {
			if i > 0 {
				q.WriteString(" UNION ALL ")
			}
			fmt.Fprintf(&q, `SELECT %d, count(*), count(*) FILTER (WHERE mirror_deleted_at IS NOT NULL) FROM @.%s`, i, t)
		}
		type count struct {
			i          int
			n, deleted int64
		}
		counts, err := collect(ctx, tx, op, s.q(q.String()), nil, func(r pgx.CollectableRow) (count, error) {
			var c count
			return c, r.Scan(&c.i, &c.n, &c.deleted)
		})
		if err != nil {
			return err
		}
		for _, c := range counts {
			st.Rows[tables[c.i]], st.Deleted[tables[c.i]] = c.n, c.deleted
		}
		type span struct {
			resource string
			BackfillSpan
		}
		spans, err := collect(ctx, tx, op, s.q(backfillSpansSQL), nil, func(r pgx.CollectableRow) (span, error) {
			var x span
			return x, r.Scan(&x.resource, &x.Started, &x.Completed)
		})
		if err != nil {
			return err
		}
		for _, x := range spans {
			st.Backfills[x.resource] = x.BackfillSpan
		}
		if err := scan(ctx, tx, op, s.q(reconcileStateSQL), []any{LockKey(s.schema, "reconcile:")},
			&st.At, &st.ReconcileStarted, &st.ReconcileFinished, &st.Corrected, &st.Reconciling); err != nil {
			return err
		}
		if st.Queues, err = readQueues(ctx, s, tx); err != nil {
			return err
		}
		type lag struct {
			resource *string
			Lag
		}
		lags, err := collect(ctx, tx, op, s.q(lagByResourceSQL), []any{lagWindow}, func(r pgx.CollectableRow) (lag, error) {
			var x lag
			var p99 *float64
			err := r.Scan(&x.resource, &x.Count, &p99)
			if p99 != nil {
				x.P99 = time.Duration(*p99 * float64(time.Second))
			}
			return x, err
		})
		if err != nil {
			return err
		}
		for _, x := range lags {
			name := ""
			if x.resource != nil {
				name = *x.resource
			}
			st.Lag[name] = x.Lag
		}
		st.Businesses, err = collect(ctx, tx, op, s.q(businessStatesSQL), []any{lagWindow}, func(r pgx.CollectableRow) (BusinessState, error) {
			var b BusinessState
			var p99 *float64
			err := r.Scan(&b.Name, &b.Backfilled, &b.ReconcileFinished, &b.PausedUntil, &b.PauseReason, &b.Removed, &b.PendingFetches, &b.Lag.Count, &p99)
			if p99 != nil {
				b.Lag.P99 = time.Duration(*p99 * float64(time.Second))
			}
			return b, err
		})
		return err
	})
	if errors.Is(err, ErrNotMigrated) {
		return nil, err
	}
	return st, fail(op, err)
}
