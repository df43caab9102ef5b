package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// mirror_backfill: each resource's backfill checkpoint per business, and
// the number of its last walk (walk_seq).

// A Backfill is a resource's row of mirror_backfill.
type Backfill struct {
	Pass, NextPage int
	Tail           bool  // the pass is a closing pass from the last page
	RowsAtStart    int64 // the table's rows when the pass began
	Listed         int64
	Completed      bool
}

const (
	createBackfillSQL = `INSERT INTO @.mirror_backfill (business, resource) VALUES ($1, $2) ON CONFLICT DO NOTHING`
	loadBackfillSQL   = `SELECT pass, next_page, tail, rows_at_start, listed, completed_at IS NOT NULL
FROM @.mirror_backfill WHERE business = $1 AND resource = $2`
	passSQL = `UPDATE @.mirror_backfill SET pass = $3, next_page = $4, tail = $5, rows_at_start = $6, updated_at = now()
WHERE business = $1 AND resource = $2`
	checkpointSQL = `UPDATE @.mirror_backfill SET next_page = $3, listed = listed + $4, updated_at = now()
WHERE business = $1 AND resource = $2 RETURNING listed`
	completeBackfillSQL = `UPDATE @.mirror_backfill SET completed_at = now(), updated_at = now(), total = $3
WHERE business = $1 AND resource = $2`
	backfilledSQL = `SELECT count(*) FROM @.mirror_backfill WHERE business = $1 AND completed_at IS NOT NULL`
	// beginWalkSQL records that a walk numbered $3 begins: its number stands
	// for every row of the resource for the never-older rule (it lists them
	// all; see migrations/0004), and the confirmations of single fetches
	// older than it are no longer needed.
	beginWalkSQL = `WITH walk AS (
	UPDATE @.mirror_backfill SET walk_seq = greatest(walk_seq, $3) WHERE business = $1 AND resource = $2
)
DELETE FROM @.mirror_confirmed WHERE business = $1 AND resource = $2 AND seq < $3`
	backfillProgressSQL = `SELECT resource, sum(listed)::bigint, sum(coalesce(total, 0))::bigint, bool_and(completed_at IS NOT NULL)
FROM @.mirror_backfill GROUP BY resource`
)

// LoadBackfill returns the checkpoint of resource, creating it when its
// backfill never started.
func (s *Store) LoadBackfill(ctx context.Context, business, resource string) (Backfill, error) {
	var b Backfill
	op := "reading the backfill checkpoint of " + resource
	if _, err := exec(ctx, s.pool, op, s.q(createBackfillSQL), business, resource); err != nil {
		return b, err
	}
	err := scan(ctx, s.pool, op, s.q(loadBackfillSQL), []any{business, resource},
		&b.Pass, &b.NextPage, &b.Tail, &b.RowsAtStart, &b.Listed, &b.Completed)
	return b, err
}

// StartPass records that a closing pass of the backfill of resource begins.
func (s *Store) StartPass(ctx context.Context, business, resource string, b Backfill) error {
	_, err := exec(ctx, s.pool, "checkpointing the backfill of "+resource, s.q(passSQL),
		business, resource, b.Pass, b.NextPage, b.Tail, b.RowsAtStart)
	return err
}

// Checkpoint moves the backfill of resource on to page next, n records
// more, in the transaction writing them, and returns the records listed so
// far.
func (tx *Tx) Checkpoint(ctx context.Context, business, resource string, next, n int) (listed int64, err error) {
	err = scan(ctx, tx.tx, "checkpointing the backfill of "+resource, tx.s.q(checkpointSQL), []any{business, resource, next, n}, &listed)
	return listed, err
}

// CompleteBackfill marks the backfill of resource complete, the service
// counting total records.
func (s *Store) CompleteBackfill(ctx context.Context, business, resource string, total int) error {
	_, err := exec(ctx, s.pool, "completing the backfill of "+resource, s.q(completeBackfillSQL), business, resource, total)
	return err
}

// Backfilled counts the resources of business whose backfill is complete.
func (s *Store) Backfilled(ctx context.Context, business string) (int, error) {
	var n int
	err := scan(ctx, s.pool, "reading the backfill's state", s.q(backfilledSQL), []any{business}, &n)
	return n, err
}

// BeginWalk records that a walk of resource numbered seq begins (see
// beginWalkSQL).
func (s *Store) BeginWalk(ctx context.Context, business, resource string, seq int64) error {
	_, err := exec(ctx, s.pool, "beginning a walk of "+resource, s.q(beginWalkSQL), business, resource, seq)
	return err
}

// A Progress is a resource's backfill summed over the businesses.
type Progress struct {
	Listed, Total int64
	Complete      bool
}

// BackfillProgress returns each resource's backfill, summed over the
// businesses.
func (s *Store) BackfillProgress(ctx context.Context) (map[string]Progress, error) {
	type row struct {
		resource string
		p        Progress
	}
	rows, err := collect(ctx, s.pool, "reading the backfill's progress", s.q(backfillProgressSQL), nil, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.resource, &x.p.Listed, &x.p.Total, &x.p.Complete)
	})
	out := make(map[string]Progress, len(rows))
	for _, x := range rows {
		out[x.resource] = x.p
	}
	return out, err
}

// mirror_reconcile: each business's reconciliations.

const (
	// reconcileDueSQL makes the first reconciliation of business $1 due an
	// interval after now, less $2.
	reconcileDueSQL = `INSERT INTO @.mirror_reconcile (business, last_finished_at) VALUES ($1, now() - $2::interval)
ON CONFLICT (business) DO UPDATE SET last_finished_at = coalesce(mirror_reconcile.last_finished_at, EXCLUDED.last_finished_at)`
	// readySQL records business $1's first complete copy, once: a
	// transaction that finds it recorded meanwhile (it waits for the row)
	// updates nothing.
	readySQL   = `UPDATE @.mirror_reconcile SET ready_at = now() WHERE business = $1 AND ready_at IS NULL`
	isReadySQL = `SELECT ready_at IS NOT NULL FROM @.mirror_reconcile WHERE business = $1`
	isDueSQL   = `SELECT (SELECT count(*) FROM @.mirror_backfill WHERE business = $1 AND completed_at IS NOT NULL) = $3
AND coalesce((SELECT last_finished_at <= now() - $2::interval OR resync_at IS NOT NULL FROM @.mirror_reconcile WHERE business = $1), false)`
	// resyncSQL asks for a walk now of the resources $2 (NULL: every one)
	// of business $1, on top of one asked for already.
	resyncSQL = `UPDATE @.mirror_reconcile SET resync_at = now(),
	resync_resources = CASE WHEN $2::text[] IS NULL OR (resync_at IS NOT NULL AND resync_resources IS NULL) THEN NULL
		ELSE (SELECT array_agg(DISTINCT r ORDER BY r) FROM unnest(coalesce(resync_resources, '{}') || $2::text[]) AS r) END
WHERE business = $1`
	pendingResyncSQL  = `SELECT resync_at, resync_resources FROM @.mirror_reconcile WHERE business = $1`
	doneResyncSQL     = `UPDATE @.mirror_reconcile SET resync_at = NULL, resync_resources = NULL WHERE business = $1 AND resync_at = $2`
	startReconcileSQL = `INSERT INTO @.mirror_reconcile (business, last_started_at) VALUES ($1, now())
ON CONFLICT (business) DO UPDATE SET last_started_at = now()`
	finishReconcileSQL = `UPDATE @.mirror_reconcile SET last_finished_at = now(), last_corrected = $2 WHERE business = $1`
)

// ReadyChannel is the channel notified, with the business's name, when a
// business of the mirror in schema has its first complete copy.
func ReadyChannel(schema string) string { return "pgmirror_ready_" + schema }

// CompleteCopy records that every resource of business is backfilled:
// its first reconciliation is due an interval from now less spread, unless
// one is due already, and its first complete copy is recorded and notified
// (ReadyChannel) once, when first reports true.
func (s *Store) CompleteCopy(ctx context.Context, business string, spread time.Duration) (first bool, err error) {
	const op = "recording a complete copy"
	err = s.InTx(ctx, op, func(tx *Tx) error {
		if _, err := exec(ctx, tx.tx, op, s.q(reconcileDueSQL), business, spread); err != nil {
			return err
		}
		n, err := exec(ctx, tx.tx, op, s.q(readySQL), business)
		if err != nil || n == 0 {
			return err
		}
		first = true
		_, err = exec(ctx, tx.tx, op, `SELECT pg_notify($1, $2)`, ReadyChannel(s.schema), business)
		return err
	})
	return first, err
}

// Ready reports whether business has had its first complete copy.
func (s *Store) Ready(ctx context.Context, business string) (bool, error) {
	var ready bool
	err := scan(ctx, s.pool, "reading whether a business is ready", s.q(isReadySQL), []any{business}, &ready)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return ready, err
}

// ReconcileDue reports whether the backfill of business's resources (of
// resources) is complete and interval has passed since its last
// reconciliation ended.
func (s *Store) ReconcileDue(ctx context.Context, business string, interval time.Duration, resources int) (bool, error) {
	var due bool
	err := scan(ctx, s.pool, "reading the reconciler's state", s.q(isDueSQL), []any{business, interval, resources}, &due)
	return due, err
}

// ErrNotReady is RequestResync's error for a business without a complete
// copy: its backfill is walking it.
var ErrNotReady = errors.New("pgmirror: the business has no complete copy yet (its backfill walks it)")

// RequestResync asks for a walk of the resources of business (nil: every
// resource) as soon as a replica can, on top of one asked for already.
func (s *Store) RequestResync(ctx context.Context, business string, resources []string) error {
	n, err := exec(ctx, s.pool, "asking for a resync", s.q(resyncSQL), business, resources)
	if err == nil && n == 0 {
		err = ErrNotReady
	}
	return err
}

// A Resync is a walk asked for (RequestResync).
type Resync struct {
	At        time.Time
	Resources []string // nil: every resource
}

// PendingResync returns the resync asked for business, or nil.
func (s *Store) PendingResync(ctx context.Context, business string) (*Resync, error) {
	var at *time.Time
	var resources []string
	err := scan(ctx, s.pool, "reading the resync asked for", s.q(pendingResyncSQL), []any{business}, &at, &resources)
	if errors.Is(err, pgx.ErrNoRows) || at == nil {
		return nil, nil
	}
	return &Resync{At: *at, Resources: resources}, err
}

// ResyncDone clears the resync r of business, unless another was asked
// for meanwhile.
func (s *Store) ResyncDone(ctx context.Context, business string, r *Resync) error {
	_, err := exec(ctx, s.pool, "clearing the resync asked for", s.q(doneResyncSQL), business, r.At)
	return err
}

// StartReconcile records that a reconciliation of business begins.
func (s *Store) StartReconcile(ctx context.Context, business string) error {
	_, err := exec(ctx, s.pool, "starting a reconciliation", s.q(startReconcileSQL), business)
	return err
}

// FinishReconcile records that a reconciliation of business ended, with
// its corrections by resource (a JSON object).
func (s *Store) FinishReconcile(ctx context.Context, business string, corrected []byte) error {
	_, err := exec(ctx, s.pool, "finishing a reconciliation", s.q(finishReconcileSQL), business, corrected)
	return err
}

// CountOverdue counts the businesses of names, ready, whose last
// reconciliation (or their first complete copy, before any) ended more than
// age ago.
func (s *Store) CountOverdue(ctx context.Context, names []string, age time.Duration) (int, error) {
	var n int
	err := scan(ctx, s.pool, "counting the reconciliations overdue",
		s.q(`SELECT count(*) FROM @.mirror_reconcile WHERE business = ANY($1) AND ready_at IS NOT NULL
		AND greatest(last_finished_at, ready_at) < now() - $2::interval`), []any{names, age}, &n)
	return n, err
}

// A WalkState is a business's walks as the database holds them.
type WalkState struct {
	Backfilled bool
	Reconcile  time.Time     // when its next reconciliation is due; zero before its first complete copy is recorded (CompleteCopy)
	Paused     time.Duration // how long it stays paused; 0 when it is not
}

// The walks' states, read for every business of the schema at once, each
// in one pass over its table (a business a row), not a lookup per
// business: at 10,000 businesses the lookups took 0.8 s a look, and the
// walk loop looks after every walk.
const (
	// allBackfilledSQL counts each business's resources backfilled.
	allBackfilledSQL = `SELECT business, count(*) FROM @.mirror_backfill WHERE completed_at IS NOT NULL GROUP BY business`
	// allReconcileDueSQL is when each ready business's next
	// reconciliation is due, reconciliations coming every $1.
	allReconcileDueSQL = `SELECT business, least(last_finished_at + $1::interval, resync_at) FROM @.mirror_reconcile WHERE ready_at IS NOT NULL`
	// allPausedSQL is how many seconds each paused business stays paused.
	allPausedSQL = `SELECT business, extract(epoch FROM paused_until - now())::float8 FROM @.mirror_budgets WHERE paused_until > now()`
)

// WalkStates returns the walks of the businesses names, whose backfills
// are of resources[i] resources each and whose reconciliations come every
// interval.
func (s *Store) WalkStates(ctx context.Context, names []string, resources []int, interval time.Duration) (map[string]WalkState, error) {
	done := map[string]int{}
	due := map[string]time.Time{}
	paused := map[string]float64{}
	b := &pgx.Batch{}
	b.Queue(s.q(allBackfilledSQL)).Query(func(rows pgx.Rows) error {
		var name string
		var n int
		_, err := pgx.ForEachRow(rows, []any{&name, &n}, func() error { done[name] = n; return nil })
		return err
	})
	b.Queue(s.q(allReconcileDueSQL), interval).Query(func(rows pgx.Rows) error {
		var name string
		var at *time.Time // NULL: none due
		_, err := pgx.ForEachRow(rows, []any{&name, &at}, func() error {
			if at != nil {
				due[name] = *at
			}
			return nil
		})
		return err
	})
	b.Queue(s.q(allPausedSQL)).Query(func(rows pgx.Rows) error {
		var name string
		var secs float64
		_, err := pgx.ForEachRow(rows, []any{&name, &secs}, func() error { paused[name] = secs; return nil })
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fail("reading the businesses' walks", err)
	}
	out := make(map[string]WalkState, len(names))
	for i, name := range names {
		out[name] = WalkState{Backfilled: done[name] == resources[i], Reconcile: due[name],
			Paused: time.Duration(paused[name] * float64(time.Second))}
	}
	return out, nil
}
