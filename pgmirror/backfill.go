package pgmirror

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// backfillRound is how long Backfill waits before it looks again at the
// resources other replicas are backfilling (or that failed).
const backfillRound = time.Second

// backfillState is a resource's row of mirror_backfill.
type backfillState struct {
	pass, nextPage int
	tail           bool  // the pass is a closing pass from the last page
	rowsAtStart    int64 // the table's rows when the pass began
	listed         int64
	completed      bool
}

// Backfill copies every record of every resource of every business into
// the mirror, and returns nil once each resource's backfill is complete (it returns at once
// for those completed earlier: a completed backfill is not redone, the
// reconciler keeps the copy current). It is resumable: each batch of records
// commits with the resource's checkpoint (the page to go on from), so a
// backfill that was stopped or killed goes on where it stopped. A 429, a 5xx,
// an unreachable service or a lost database only make it wait and go on,
// with backoff (at most about 30 seconds, or what a Retry-After asks) and
// one log line when the dependency goes away and one when it is back, not
// one per failure; it returns an error for a failure that waiting cannot
// mend (a refused API key, say), or ctx's. Other failures (a statement that
// fails) are logged each time.
//
// It cannot miss a record:
//   - Records are written with the never-older rule, so the deliveries the
//     Handler stores meanwhile (serve it from the first second) and the
//     backfill's pages can arrive in any order: a record created or changed
//     during the walk is fetched because of its event, and the walk's copy,
//     if older, does not win.
//   - The backfill proves the table complete, whatever the page drift: once
//     past the last page it asks the service for its total and counts the
//     table's rows. The API deletes nothing, so every row is one of the
//     records the total counts (the walk's, and those events brought in);
//     as many rows as the total means all of them. When the table falls
//     short (records moved to pages the walk had passed, or were created
//     after it passed the end and their events have not arrived), the
//     backfill makes closing passes, each checkpointed too: from its last
//     page (where a list in creation order puts new records) for as long
//     as that finds records, otherwise whole walks, at most ClosingPasses in
//     all. If the table still falls short it logs a warning with the
//     numbers and completes; events and the reconciler bring the rest.
//
// Each resource of a business is backfilled by one replica at a time (a
// session advisory lock); the others go on with other resources and other
// businesses and then wait for it, taking it over from its checkpoint
// should its replica die. The businesses are backfilled Config.Walkers at
// a time, taking turns (see runWalks); a business of the database whose
// key the service refuses is paused and the others go on, while for the
// business of Config.Client Backfill returns the error.
func (m *Mirror) Backfill(ctx context.Context) error {
	err := m.runWalks(ctx, true)
	if err == nil && ctx.Err() != nil {
		return ctx.Err() // stopped before it was complete
	}
	return err
}

// backfillRoundOnce goes once over the business's resources, backfilling
// those no other replica is at (see backfillResource), and reports whether
// every one is complete; the first reconciliation is then made due (see
// spread). It returns at once a lost database's error, the service's
// refusal (permanent), its failure for this business (a 429 storm, 5xx:
// the business is paused, see runWalk) and a pause; other failures are
// logged and the resource is left for the next round.
func (m *tenant) backfillRoundOnce(ctx context.Context) (bool, error) {
	pending := 0
	for _, res := range allResources {
		done, err := m.backfillResource(ctx, res)
		switch {
		case ctx.Err() != nil:
			return false, ctx.Err()
		case err != nil && (permanent(err) || paused(err) || m.dependencyOf(err) != nil):
			return false, fmt.Errorf("pgmirror: backfilling %s: %w", res.name, err)
		case err != nil:
			m.log.WarnContext(ctx, "pgmirror: backfill interrupted; going on shortly", "resource", res.name, "error", err.Error())
		}
		if !done {
			pending++
		}
	}
	if pending > 0 {
		return false, nil
	}
	// The backfill was a full listing: the first reconciliation is due an
	// interval from now, less the business's spread.
	_, err := m.pool.Exec(ctx, `INSERT INTO mirror_reconcile (business, last_finished_at)
		VALUES ($1, now() - $2::interval) ON CONFLICT (business) DO UPDATE
		SET last_finished_at = coalesce(mirror_reconcile.last_finished_at, EXCLUDED.last_finished_at)`,
		m.name, m.spread())
	return err == nil, err
}

// backfillDone reports whether the backfill of every resource of the
// business is complete.
func (m *tenant) backfillDone(ctx context.Context) (bool, error) {
	var n int
	err := m.pool.QueryRow(ctx, `SELECT count(*) FROM mirror_backfill WHERE business = $1 AND completed_at IS NOT NULL`, m.name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("pgmirror: reading the backfill's state: %w", err)
	}
	return n == len(allResources), nil
}

// backfillResource backfills res if no other replica is at it, and reports
// whether its backfill is complete.
func (m *tenant) backfillResource(ctx context.Context, res *resource) (bool, error) {
	st, err := m.loadBackfill(ctx, res.name)
	if err != nil || st.completed {
		return st.completed, err
	}
	unlock, ok, err := m.tryLock(ctx, "backfill:"+m.name+":"+res.name)
	if err != nil || !ok {
		return false, err
	}
	defer unlock()
	if st, err = m.loadBackfill(ctx, res.name); err != nil || st.completed {
		return st.completed, err // another replica finished it meanwhile
	}

	failures := 0
	announced := false               // the pass's "backfilling" line is logged
	retry := func(err error) error { // waits before the next try, or says why not
		dep := m.dependencyOf(err)
		if ctx.Err() != nil || permanent(err) || paused(err) || dep == m.db {
			return err // a lost database: Backfill waits for it, the lock given back
		}
		failures++
		if dep == m.api {
			if !m.static {
				return err // the business is paused; the others go on (see runWalk)
			}
			m.api.failed(ctx, err)
			if !m.api.sleep(ctx, apiWait(failures, err)) {
				return ctx.Err()
			}
			return nil
		}
		wait := backoff(failures, err)
		m.log.WarnContext(ctx, "pgmirror: backfill failed; going on from the checkpoint", "resource", res.name,
			"page", st.nextPage, "failures", failures, "retry_in", wait.String(), "error", err.Error())
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
		return nil
	}
	for {
		total, err := res.total(ctx, m.cfg.Client, m.walkOpts()...)
		if err != nil {
			if err := retry(fromAPI(err)); err != nil {
				return false, err
			}
			continue
		}
		m.answered(ctx)
		if !announced {
			m.log.InfoContext(ctx, "pgmirror: backfilling", "resource", res.name, "pass", st.pass, "from_page", st.nextPage, "total", total)
			announced = true
		}
		m.progress(res.name, st, total)
		last, err := m.walk(ctx, res, st.nextPage, func(ctx context.Context, rows []row, seq int64, resume int) error {
			var listed int64
			err := m.writeIn(ctx, causeBackfill, func(tx pgx.Tx) error {
				var err error
				listed, err = m.writeBackfillBatch(ctx, tx, res, rows, seq, resume)
				return err
			})
			if err == nil {
				st.nextPage, st.listed = resume, listed
				m.progress(res.name, st, total)
			}
			return err
		})
		if err != nil {
			if err := retry(err); err != nil {
				return false, err
			}
			continue
		}
		failures = 0

		// Past the last page: does the table hold every record the service
		// counts?
		if total, err = res.total(ctx, m.cfg.Client, m.walkOpts()...); err != nil {
			if err := retry(fromAPI(err)); err != nil {
				return false, err
			}
			continue
		}
		rows, err := m.countRows(ctx, res)
		if err != nil {
			return false, err
		}
		if rows >= int64(total) || st.pass > m.cfg.ClosingPasses {
			if rows < int64(total) {
				m.log.WarnContext(ctx, "pgmirror: after its closing passes the backfill holds fewer records than the service counts; "+
					"the records created meanwhile come by webhook, the reconciler re-lists the rest",
					"resource", res.name, "rows", rows, "total", total, "passes", st.pass)
			}
			return true, m.completeBackfill(ctx, res, st, rows, total)
		}
		// A pass from the last page, where a list in creation order puts the
		// records created during the walk, for as long as such a pass finds
		// records; a whole walk when it finds none: the list's order moved
		// records onto pages the walk had passed.
		tail := !st.tail || rows > st.rowsAtStart
		next := 1
		if tail {
			next = last
		}
		m.log.InfoContext(ctx, "pgmirror: the table holds fewer records than the service counts; closing pass",
			"resource", res.name, "rows", rows, "total", total, "pass", st.pass+1, "from_page", next)
		st = backfillState{pass: st.pass + 1, nextPage: next, tail: tail, rowsAtStart: rows, listed: st.listed}
		announced = false
		if _, err := m.pool.Exec(ctx, `UPDATE mirror_backfill SET pass = $2, next_page = $3, tail = $4, rows_at_start = $5, updated_at = now()
			WHERE business = $6 AND resource = $1`, res.name, st.pass, st.nextPage, st.tail, st.rowsAtStart, m.name); err != nil {
			return false, err
		}
	}
}

// writeBackfillBatch writes a batch of the backfill with its checkpoint, and
// returns how many records the backfill has listed so far.
func (m *tenant) writeBackfillBatch(ctx context.Context, tx pgx.Tx, res *resource, rows []row, seq int64, resume int) (int64, error) {
	if _, err := apply(ctx, tx, res, rows, seq); err != nil {
		return 0, err
	}
	var listed int64
	err := tx.QueryRow(ctx, `UPDATE mirror_backfill SET next_page = $2, listed = listed + $3, updated_at = now()
		WHERE business = $4 AND resource = $1 RETURNING listed`, res.name, resume, len(rows), m.name).Scan(&listed)
	return listed, err
}

// countRows counts the rows of res's table not marked deleted.
func (m *tenant) countRows(ctx context.Context, res *resource) (int64, error) {
	var n int64
	if err := m.pool.QueryRow(ctx, `SELECT count(*) FROM `+res.table.name+` WHERE business = $1 AND mirror_deleted_at IS NULL`,
		m.name).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgmirror: counting %s: %w", res.name, err)
	}
	return n, nil
}

// completeBackfill marks the backfill of res complete.
func (m *tenant) completeBackfill(ctx context.Context, res *resource, st backfillState, rows int64, total int) error {
	if _, err := m.pool.Exec(ctx, `UPDATE mirror_backfill SET completed_at = now(), updated_at = now(), total = $2
		WHERE business = $3 AND resource = $1`, res.name, total, m.name); err != nil {
		return err
	}
	m.counters.setBackfill(res.name, backfillProgress{listed: st.listed, total: int64(total), complete: true})
	m.log.InfoContext(ctx, "pgmirror: backfilled", "resource", res.name, "rows", rows, "total", total, "passes", st.pass)
	return nil
}

// loadBackfill returns the checkpoint of resource, creating it when the
// backfill never started.
func (m *tenant) loadBackfill(ctx context.Context, resource string) (backfillState, error) {
	var st backfillState
	if _, err := m.pool.Exec(ctx, `INSERT INTO mirror_backfill (business, resource) VALUES ($2, $1) ON CONFLICT DO NOTHING`,
		resource, m.name); err != nil {
		return st, fmt.Errorf("pgmirror: creating the backfill checkpoint of %s: %w", resource, err)
	}
	err := m.pool.QueryRow(ctx, `SELECT pass, next_page, tail, rows_at_start, listed, completed_at IS NOT NULL
		FROM mirror_backfill WHERE business = $2 AND resource = $1`, resource, m.name).
		Scan(&st.pass, &st.nextPage, &st.tail, &st.rowsAtStart, &st.listed, &st.completed)
	if err != nil {
		return st, fmt.Errorf("pgmirror: reading the backfill checkpoint of %s: %w", resource, err)
	}
	return st, nil
}

// progress reports a resource's progress to the stats and OnProgress.
func (m *tenant) progress(resource string, st backfillState, total int) {
	m.counters.setBackfill(resource, backfillProgress{listed: st.listed, total: int64(total)})
	if m.cfg.OnProgress != nil {
		m.cfg.OnProgress(Progress{Business: m.name, Resource: resource, Pass: st.pass, Listed: int(st.listed), Total: total})
	}
}
