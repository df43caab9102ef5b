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
FROM @.` + pginbox.TableName + ` WHERE status = 'pending' AND ($1 = '' OR business = $1)
UNION ALL
SELECT resource, count(*), extract(epoch FROM now() - min(requested_at))::float8
FROM @.mirror_pending_fetch WHERE $1 = '' OR business = $1 GROUP BY resource`

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
func (s *Store) Queues(ctx context.Context) (Queues, error) { return readQueues(ctx, s, s.pool, "") }

// readQueues reads the work waiting, of business ("": of every business).
func readQueues(ctx context.Context, s *Store, q querier, business string) (Queues, error) {
	out := Queues{Fetches: map[string]Pending{}}
	type row struct {
		resource *string
		n        int64
		age      float64
	}
	rows, err := collect(ctx, q, "reading the queues", s.q(queuesSQL), []any{business}, func(r pgx.CollectableRow) (row, error) {
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

// A BusinessState is one business's state: a row of the view
// mirror_status (migrations/0006).
type BusinessState struct {
	Name                                string
	Phase                               string
	Rows, Deleted                       int64
	Backfilled                          int
	BackfillListed, BackfillTotal       int64
	ReadyAt                             *time.Time
	ReconcileStarted, ReconcileFinished *time.Time
	Corrected                           []byte // a JSON object, by resource
	ResyncAt                            *time.Time
	Lag                                 Lag
	PendingFetches                      int64
	OldestPending                       time.Duration
	PausedUntil                         *time.Time // nil unless paused
	PauseReason                         *string
	RemovedAt                           *time.Time
}

const (
	backfillSpansSQL = `SELECT resource, min(started_at),
	CASE WHEN bool_and(completed_at IS NOT NULL) THEN max(completed_at) END FROM @.mirror_backfill
WHERE $1 = '' OR business = $1 GROUP BY resource`
	// reconcileStateSQL reads the reconciliations (of business $1, ""
	// for all) from the view: the latest start, the oldest end, the
	// corrections summed by resource, whether one runs.
	reconcileStateSQL = `SELECT now(), max(reconcile_started_at),
	CASE WHEN bool_and(reconcile_finished_at IS NOT NULL) THEN min(reconcile_finished_at) END,
	(SELECT jsonb_object_agg(key, total) FROM (SELECT e.key, sum(e.value::int) AS total
		FROM @.mirror_status AS r, jsonb_each_text(r.reconcile_corrected) AS e WHERE $1 = '' OR r.business = $1 GROUP BY e.key) AS c),
	coalesce(bool_or(phase = 'reconciling'), false)
FROM @.mirror_status WHERE (reconcile_started_at IS NOT NULL OR reconcile_finished_at IS NOT NULL) AND ($1 = '' OR business = $1)`
	lagByResourceSQL = `SELECT resource, count(*), percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_seconds)
FROM @.mirror_event_lag WHERE written_at > now() - $1::interval AND ($2 = '' OR business = $2) GROUP BY ROLLUP (resource)`
	businessStatesSQL = `SELECT business, phase, rows, deleted, backfilled_resources, backfill_listed, backfill_total, ready_at,
	reconcile_started_at, reconcile_finished_at, reconcile_corrected, resync_at, lagged, lag_p99_seconds, pending_fetches,
	coalesce(oldest_pending_seconds, 0), paused_until, pause_reason, removed_at
FROM @.mirror_status WHERE $1 = '' OR business = $1 ORDER BY business`
)

// ReadStatus reads the state of the mirror, whose record tables are
// tables, of business ("": of every business), in one read-only
// transaction; the event lag over lagWindow. It returns an error wrapping
// ErrNotMigrated when the schema holds no mirror at Version.
func (s *Store) ReadStatus(ctx context.Context, tables []string, lagWindow time.Duration, business string) (*Status, error) {
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
			fmt.Fprintf(&q, `SELECT %d, count(*), count(*) FILTER (WHERE mirror_deleted_at IS NOT NULL) FROM @.%s WHERE $1 = '' OR business = $1`, i, t)
		}
		type count struct {
			i          int
			n, deleted int64
		}
		counts, err := collect(ctx, tx, op, s.q(q.String()), []any{business}, func(r pgx.CollectableRow) (count, error) {
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
		spans, err := collect(ctx, tx, op, s.q(backfillSpansSQL), []any{business}, func(r pgx.CollectableRow) (span, error) {
			var x span
			return x, r.Scan(&x.resource, &x.Started, &x.Completed)
		})
		if err != nil {
			return err
		}
		for _, x := range spans {
			st.Backfills[x.resource] = x.BackfillSpan
		}
		if err := scan(ctx, tx, op, s.q(reconcileStateSQL), []any{business},
			&st.At, &st.ReconcileStarted, &st.ReconcileFinished, &st.Corrected, &st.Reconciling); err != nil {
			return err
		}
		if st.Queues, err = readQueues(ctx, s, tx, business); err != nil {
			return err
		}
		type lag struct {
			resource *string
			Lag
		}
		lags, err := collect(ctx, tx, op, s.q(lagByResourceSQL), []any{lagWindow, business}, func(r pgx.CollectableRow) (lag, error) {
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
		st.Businesses, err = collect(ctx, tx, op, s.q(businessStatesSQL), []any{business}, func(r pgx.CollectableRow) (BusinessState, error) {
			var b BusinessState
			var p99 *float64
			var oldest float64
			err := r.Scan(&b.Name, &b.Phase, &b.Rows, &b.Deleted, &b.Backfilled, &b.BackfillListed, &b.BackfillTotal, &b.ReadyAt,
				&b.ReconcileStarted, &b.ReconcileFinished, &b.Corrected, &b.ResyncAt, &b.Lag.Count, &p99, &b.PendingFetches, &oldest,
				&b.PausedUntil, &b.PauseReason, &b.RemovedAt)
			if p99 != nil {
				b.Lag.P99 = time.Duration(*p99 * float64(time.Second))
			}
			b.OldestPending = time.Duration(oldest * float64(time.Second))
			return b, err
		})
		return err
	})
	if errors.Is(err, ErrNotMigrated) {
		return nil, err
	}
	return st, fail(op, err)
}
