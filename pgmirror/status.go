package pgmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Phases of a resource in a Status.
const (
	// PhaseBackfilling: the resource's backfill is not complete.
	PhaseBackfilling = "backfilling"
	// PhaseBackfilled: the backfill is complete; events keep the table
	// current, and the reconciler re-lists it every ReconcileInterval.
	PhaseBackfilled = "backfilled"
	// PhaseReconciling: a reconciliation is walking the resource now.
	PhaseReconciling = "reconciling"
)

// ErrNotMigrated is returned by ReadStatus for a schema that does not hold
// a mirror migrated to this package's SchemaVersion.
var ErrNotMigrated = errors.New("pgmirror: not a mirror at this program's schema version")

// Status is the state of a mirror as its tables tell it, whether replicas
// run or not: what `invoicing-mirror status` prints. Times are the
// database's; a zero time means never.
type Status struct {
	// Schema is the mirror's schema.
	Schema string
	// At is when the status was read, by the database's clock.
	At time.Time
	// Resources are the mirrored resources, in the order the backfill and
	// the reconciler walk them.
	Resources []ResourceStatus
	// InboxPending is the number of webhook deliveries stored and not yet
	// processed; InboxOldest how long ago the oldest of them was received
	// (0 when none waits).
	InboxPending int64
	InboxOldest  time.Duration
	// ReconcileStarted and ReconcileFinished are the start and the end of
	// the last reconciliation; Reconciling is true while a replica
	// reconciles.
	ReconcileStarted, ReconcileFinished time.Time
	Reconciling                         bool
	// Lagged is the number of records written because an event named them
	// in the last hour, and LagP99 the 99th percentile of their event lag
	// (from the delivery's receipt to the row's commit); 0 when none.
	Lagged int64
	LagP99 time.Duration
	// Businesses are the businesses the mirror holds rows for or serves,
	// by name. The figures above are their sums (ReconcileFinished: the
	// oldest of theirs, ReconcileStarted the latest).
	Businesses []BusinessStatus
}

// BusinessStatus is the state of one business of a Status.
type BusinessStatus struct {
	Name string
	// Backfilled counts the resources whose backfill is complete (of
	// len(Resources())).
	Backfilled int
	// ReconcileFinished is the end of its last reconciliation (zero when
	// none finished).
	ReconcileFinished time.Time
	// Paused is true from the moment the service refused the business's
	// key or kept failing its calls until one of its calls succeeds again,
	// PauseReason why; no replica calls the service for it until
	// PausedUntil (then one call tries again).
	Paused      bool
	PausedUntil time.Time
	PauseReason string
	// Removed is true for a business removed from the mirror's businesses
	// (Businesses.Remove) whose rows are kept.
	Removed bool
	// PendingFetches is the number of its records waiting to be fetched.
	PendingFetches int64
	// Lagged and LagP99 are its share of Status.Lagged and Status.LagP99.
	Lagged int64
	LagP99 time.Duration
}

// ResourceStatus is the state of one resource of a Status.
type ResourceStatus struct {
	// Name is the resource's name, as Resources lists it.
	Name string
	// Phase is PhaseBackfilling, PhaseBackfilled or PhaseReconciling.
	Phase string
	// Rows is the number of rows of the resource's table; Deleted how many
	// of them are marked deleted (the service no longer lists them).
	Rows, Deleted int64
	// BackfillStarted and BackfillCompleted are the start and the end of
	// the resource's backfill (BackfillCompleted is zero while it runs).
	BackfillStarted, BackfillCompleted time.Time
	// Reconciled is the end of the last reconciliation that walked the
	// resource completely; Corrected the rows it inserted or corrected
	// (both zero when none did).
	Reconciled time.Time
	Corrected  int
	// PendingFetches is the number of records events named that wait to be
	// fetched; OldestPending how long ago the oldest was first asked for.
	PendingFetches int64
	OldestPending  time.Duration
	// Lagged and LagP99 are the resource's share of Status.Lagged and
	// Status.LagP99.
	Lagged int64
	LagP99 time.Duration
}

// ReadStatus reads the state of the mirror in schema from db (a pool on
// the mirror's database; its search_path does not matter), in one
// read-only transaction, without the API. It returns an error wrapping
// ErrNotMigrated when the schema holds no mirror at SchemaVersion (run the
// mirror of this version first: it migrates), and the database's error
// when it does not answer. It counts every table's rows: on tables of
// millions of rows that takes a while, so give ctx a deadline to suit.
func ReadStatus(ctx context.Context, db *pgxpool.Pool, schema string) (*Status, error) {
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("pgmirror: schema name %q: use letters, digits and underscores", schema)
	}
	s := &Status{Schema: schema}
	err := pgx.BeginTxFunc(ctx, db, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true)`, pgx.Identifier{schema}.Sanitize()); err != nil {
			return err
		}
		if err := checkVersion(ctx, tx, schema); err != nil {
			return err
		}
		for _, read := range []func(context.Context, pgx.Tx) error{s.readResources, s.readReconcile, s.readQueues, s.readLag, s.readBusinesses} {
			if err := read(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotMigrated) {
			return nil, err
		}
		return nil, fmt.Errorf("pgmirror: reading the status of schema %s: %w", schema, err)
	}
	return s, nil
}

// checkVersion returns an error wrapping ErrNotMigrated unless the schema
// is at SchemaVersion.
func checkVersion(ctx context.Context, tx pgx.Tx, schema string) error {
	var version int
	err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM mirror_migrations`).Scan(&version)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table: no schema, or not a mirror's
		return fmt.Errorf("%w: schema %s has no mirror_migrations table (has invoicing-mirror run with --schema %s?)", ErrNotMigrated, schema, schema)
	}
	if err != nil {
		return err
	}
	if version != SchemaVersion() {
		return fmt.Errorf("%w: schema %s is at version %d, this program's is %d (a replica of this version migrates it)",
			ErrNotMigrated, schema, version, SchemaVersion())
	}
	return nil
}

// readResources reads each resource's rows and backfill.
func (s *Status) readResources(ctx context.Context, tx pgx.Tx) error {
	var q strings.Builder
	for i, res := range allResources {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&q, `SELECT %d, count(*), count(*) FILTER (WHERE mirror_deleted_at IS NOT NULL) FROM %s`,
			i, pgx.Identifier{res.table.name}.Sanitize())
	}
	s.Resources = make([]ResourceStatus, len(allResources))
	for i, res := range allResources {
		s.Resources[i] = ResourceStatus{Name: res.name, Phase: PhaseBackfilling}
	}
	rows, err := tx.Query(ctx, q.String())
	if err != nil {
		return err
	}
	var i int
	var n, deleted int64
	if _, err := pgx.ForEachRow(rows, []any{&i, &n, &deleted}, func() error {
		s.Resources[i].Rows, s.Resources[i].Deleted = n, deleted
		return nil
	}); err != nil {
		return err
	}

	// A resource is backfilled once it is for every business.
	rows, err = tx.Query(ctx, `SELECT resource, min(started_at),
		CASE WHEN bool_and(completed_at IS NOT NULL) THEN max(completed_at) END FROM mirror_backfill GROUP BY resource`)
	if err != nil {
		return err
	}
	var name string
	var started time.Time
	var completed *time.Time
	_, err = pgx.ForEachRow(rows, []any{&name, &started, &completed}, func() error {
		if r := s.resource(name); r != nil {
			r.BackfillStarted = started
			if completed != nil {
				r.BackfillCompleted, r.Phase = *completed, PhaseBackfilled
			}
		}
		return nil
	})
	return err
}

// readReconcile reads the last reconciliation and whether one runs now: a
// replica holds its advisory lock (see lockKey).
func (s *Status) readReconcile(ctx context.Context, tx pgx.Tx) error {
	var started, finished *time.Time
	var corrected []byte
	// The corrections are summed over the businesses; a reconciliation
	// runs while a replica holds the advisory lock of a business's.
	err := tx.QueryRow(ctx, `SELECT now(), max(last_started_at), CASE WHEN bool_and(last_finished_at IS NOT NULL) THEN min(last_finished_at) END,
		(SELECT jsonb_object_agg(key, total) FROM (SELECT e.key, sum(e.value::int) AS total
			FROM mirror_reconcile AS r, jsonb_each_text(r.last_corrected) AS e GROUP BY e.key) AS c),
		EXISTS (SELECT 1 FROM pg_locks l, mirror_reconcile AS r,
				LATERAL (SELECT hashtextextended($1 || r.business, 0) AS k) AS key
			WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND l.classid = ((key.k >> 32) & 4294967295)::oid AND l.objid = (key.k & 4294967295)::oid)
		FROM mirror_reconcile`, lockKeyOf(s.Schema, "reconcile:")).
		Scan(&s.At, &started, &finished, &corrected, &s.Reconciling)
	if err != nil {
		return err
	}
	if started != nil {
		s.ReconcileStarted = *started
	}
	if finished != nil {
		s.ReconcileFinished = *finished
	}
	var byResource map[string]int
	if corrected != nil {
		if err := json.Unmarshal(corrected, &byResource); err != nil {
			return fmt.Errorf("reading mirror_reconcile.last_corrected: %w", err)
		}
	}
	for i := range s.Resources {
		r := &s.Resources[i]
		if n, ok := byResource[r.Name]; ok && finished != nil {
			r.Reconciled, r.Corrected = *finished, n
		}
		if s.Reconciling && r.Phase == PhaseBackfilled {
			r.Phase = PhaseReconciling
		}
	}
	return nil
}

// readQueues reads the inbox and the pending fetches.
func (s *Status) readQueues(ctx context.Context, tx pgx.Tx) error {
	q, err := queuesOf(ctx, tx)
	if err != nil {
		return err
	}
	s.InboxPending, s.InboxOldest = q.inboxPending, q.inboxOldest
	for name, f := range q.fetches {
		if r := s.resource(name); r != nil {
			r.PendingFetches, r.OldestPending = f.count, f.oldest
		}
	}
	return nil
}

// readLag reads the event lag's 99th percentile over lagWindow, by
// resource and in all.
func (s *Status) readLag(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT resource, count(*), percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_seconds)
		FROM mirror_event_lag WHERE written_at > now() - $1::interval GROUP BY ROLLUP (resource)`, lagWindow)
	if err != nil {
		return err
	}
	var name *string
	var n int64
	var p99 *float64
	_, err = pgx.ForEachRow(rows, []any{&name, &n, &p99}, func() error {
		if p99 == nil {
			return nil
		}
		d := time.Duration(*p99 * float64(time.Second))
		if name == nil {
			s.Lagged, s.LagP99 = n, d
		} else if r := s.resource(*name); r != nil {
			r.Lagged, r.LagP99 = n, d
		}
		return nil
	})
	return err
}

// readBusinesses reads each business's state: those the mirror holds
// state for, and those of mirror_businesses.
func (s *Status) readBusinesses(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `WITH names AS (
			SELECT business AS name FROM mirror_backfill UNION SELECT name FROM mirror_businesses)
		SELECT n.name,
			(SELECT count(*) FROM mirror_backfill AS f WHERE f.business = n.name AND f.completed_at IS NOT NULL),
			(SELECT last_finished_at FROM mirror_reconcile AS r WHERE r.business = n.name),
			(SELECT paused_until FROM mirror_budgets AS p WHERE p.business = n.name AND p.pause_reason IS NOT NULL),
			coalesce((SELECT pause_reason FROM mirror_budgets AS p WHERE p.business = n.name), ''),
			coalesce((SELECT removed_at IS NOT NULL FROM mirror_businesses AS b WHERE b.name = n.name), false),
			(SELECT count(*) FROM mirror_pending_fetch AS q WHERE q.business = n.name),
			(SELECT count(*) FROM mirror_event_lag AS l WHERE l.business = n.name AND l.written_at > now() - $1::interval),
			(SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_seconds) FROM mirror_event_lag AS l
				WHERE l.business = n.name AND l.written_at > now() - $1::interval)
		FROM names AS n ORDER BY n.name`, lagWindow)
	if err != nil {
		return err
	}
	s.Businesses, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (BusinessStatus, error) {
		var b BusinessStatus
		var finished, paused *time.Time
		var p99 *float64
		err := r.Scan(&b.Name, &b.Backfilled, &finished, &paused, &b.PauseReason, &b.Removed, &b.PendingFetches, &b.Lagged, &p99)
		if finished != nil {
			b.ReconcileFinished = *finished
		}
		if paused != nil {
			b.Paused, b.PausedUntil = true, *paused
		}
		if p99 != nil {
			b.LagP99 = time.Duration(*p99 * float64(time.Second))
		}
		return b, err
	})
	return err
}

// resource returns the status of the resource named name, or nil.
func (s *Status) resource(name string) *ResourceStatus {
	for i := range s.Resources {
		if s.Resources[i].Name == name {
			return &s.Resources[i]
		}
	}
	return nil
}

// Problems returns what makes the mirror degraded, one sentence each, or
// nil when it is healthy. The mirror is degraded when
//   - a resource's backfill is not complete (the tables are not whole yet);
//   - no reconciliation has finished in the last two reconcileIntervals
//     (counted from the backfill's end when none ever did), so changes that
//     raise no event may be missing;
//   - the oldest delivery waiting in the inbox, or the oldest record
//     waiting to be fetched, has waited longer than maxLag;
//   - the event lag's 99th percentile over the last hour exceeds maxLag;
//   - a business is paused (the service refuses its key, or keeps failing
//     its calls).
//
// Deliveries parked as failed do not count: the reconciler corrects what
// their events changed.
func (s *Status) Problems(maxLag, reconcileInterval time.Duration) []string {
	var out, backfilling []string
	var backfilled time.Time
	for _, r := range s.Resources {
		if r.Phase == PhaseBackfilling {
			backfilling = append(backfilling, r.Name)
		}
		if r.BackfillCompleted.After(backfilled) {
			backfilled = r.BackfillCompleted
		}
		if r.OldestPending > maxLag {
			out = append(out, fmt.Sprintf("%d %s wait to be fetched, the oldest for %v (more than %v)",
				r.PendingFetches, r.Name, r.OldestPending.Round(time.Second), maxLag))
		}
	}
	if len(backfilling) > 0 {
		out = append([]string{"the backfill is not complete: " + strings.Join(backfilling, ", ")}, out...)
	} else if since := later(s.ReconcileFinished, backfilled); s.At.Sub(since) > 2*reconcileInterval {
		out = append(out, fmt.Sprintf("no reconciliation has finished for %v (the interval is %v)",
			s.At.Sub(since).Round(time.Second), reconcileInterval))
	}
	if s.InboxOldest > maxLag {
		out = append(out, fmt.Sprintf("%d webhook deliveries wait in the inbox, the oldest for %v (more than %v)",
			s.InboxPending, s.InboxOldest.Round(time.Second), maxLag))
	}
	for _, b := range s.Businesses {
		if b.Paused && !b.Removed {
			out = append(out, fmt.Sprintf("business %s is paused (next try %s): %s", b.Name, b.PausedUntil.UTC().Format(time.RFC3339), b.PauseReason))
		}
	}
	if s.LagP99 > maxLag {
		out = append(out, fmt.Sprintf("the event lag's 99th percentile over the last hour is %v (more than %v)",
			s.LagP99.Round(time.Millisecond), maxLag))
	}
	return out
}
