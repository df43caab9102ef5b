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

// Backfill copies every record of every resource into the mirror, and
// returns nil once each resource's backfill is complete (it returns at once
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
// Each resource is backfilled by one replica at a time (a session advisory
// lock); the others go on with other resources and then wait for it, taking
// it over from its checkpoint should its replica die.
func (m *Mirror) Backfill(ctx context.Context) error {
	for {
		pending := 0
		for _, res := range allResources {
			done, err := m.backfillResource(ctx, res)
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case err != nil && permanent(err):
				return fmt.Errorf("pgmirror: backfilling %s: %w", res.name, err)
			case m.dependencyOf(err) == m.db:
				if err := m.waitForDatabase(ctx, err); err != nil {
					return err
				}
			case err != nil:
				m.log.WarnContext(ctx, "pgmirror: backfill interrupted; going on shortly", "resource", res.name, "error", err.Error())
			}
			if !done {
				pending++
			}
		}
		if pending == 0 {
			// The backfill was a full listing: the first reconciliation is
			// due an interval from now.
			_, err := m.pool.Exec(ctx, `UPDATE mirror_reconcile SET last_finished_at = coalesce(last_finished_at, now())`)
			if m.dependencyOf(err) == m.db && ctx.Err() == nil {
				if err := m.waitForDatabase(ctx, err); err != nil {
					return err
				}
				continue
			}
			return err
		}
		if !sleep(ctx, jitter(backfillRound)) {
			return ctx.Err()
		}
	}
}

// waitForDatabase reports err, a lost database, and waits until the
// database answers again (see waitFor); it returns ctx's error if ctx ends
// first.
func (m *Mirror) waitForDatabase(ctx context.Context, err error) error {
	m.db.failed(ctx, err)
	return m.waitFor(ctx, m.db, m.ping, func(error) bool { return false })
}

// BackfillDone reports whether the backfill of every resource is complete.
func (m *Mirror) BackfillDone(ctx context.Context) (bool, error) {
	var n int
	err := m.pool.QueryRow(ctx, `SELECT count(*) FROM mirror_backfill WHERE completed_at IS NOT NULL`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("pgmirror: reading the backfill's state: %w", err)
	}
	return n == len(allResources), nil
}

// backfillResource backfills res if no other replica is at it, and reports
// whether its backfill is complete.
func (m *Mirror) backfillResource(ctx context.Context, res *resource) (bool, error) {
	st, err := m.loadBackfill(ctx, res.name)
	if err != nil || st.completed {
		return st.completed, err
	}
	unlock, ok, err := m.tryLock(ctx, "backfill:"+res.name)
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
		if ctx.Err() != nil || permanent(err) || dep == m.db {
			return err // a lost database: Backfill waits for it, the lock given back
		}
		failures++
		if dep == m.api {
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
		total, err := res.total(ctx, m.cfg.Client)
		if err != nil {
			if err := retry(fromAPI(err)); err != nil {
				return false, err
			}
			continue
		}
		m.api.ok(ctx)
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
		if total, err = res.total(ctx, m.cfg.Client); err != nil {
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
			WHERE resource = $1`, res.name, st.pass, st.nextPage, st.tail, st.rowsAtStart); err != nil {
			return false, err
		}
	}
}

// writeBackfillBatch writes a batch of the backfill with its checkpoint, and
// returns how many records the backfill has listed so far.
func (m *Mirror) writeBackfillBatch(ctx context.Context, tx pgx.Tx, res *resource, rows []row, seq int64, resume int) (int64, error) {
	if _, err := apply(ctx, tx, res, rows, seq); err != nil {
		return 0, err
	}
	var listed int64
	err := tx.QueryRow(ctx, `UPDATE mirror_backfill SET next_page = $2, listed = listed + $3, updated_at = now()
		WHERE resource = $1 RETURNING listed`, res.name, resume, len(rows)).Scan(&listed)
	return listed, err
}

// countRows counts the rows of res's table not marked deleted.
func (m *Mirror) countRows(ctx context.Context, res *resource) (int64, error) {
	var n int64
	if err := m.pool.QueryRow(ctx, `SELECT count(*) FROM `+res.table.name+` WHERE mirror_deleted_at IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgmirror: counting %s: %w", res.name, err)
	}
	return n, nil
}

// completeBackfill marks the backfill of res complete.
func (m *Mirror) completeBackfill(ctx context.Context, res *resource, st backfillState, rows int64, total int) error {
	if _, err := m.pool.Exec(ctx, `UPDATE mirror_backfill SET completed_at = now(), updated_at = now(), total = $2
		WHERE resource = $1`, res.name, total); err != nil {
		return err
	}
	m.counters.setBackfill(res.name, backfillProgress{listed: st.listed, total: int64(total), complete: true})
	m.log.InfoContext(ctx, "pgmirror: backfilled", "resource", res.name, "rows", rows, "total", total, "passes", st.pass)
	return nil
}

// loadBackfill returns the checkpoint of resource, creating it when the
// backfill never started.
func (m *Mirror) loadBackfill(ctx context.Context, resource string) (backfillState, error) {
	var st backfillState
	if _, err := m.pool.Exec(ctx, `INSERT INTO mirror_backfill (resource) VALUES ($1) ON CONFLICT DO NOTHING`, resource); err != nil {
		return st, fmt.Errorf("pgmirror: creating the backfill checkpoint of %s: %w", resource, err)
	}
	err := m.pool.QueryRow(ctx, `SELECT pass, next_page, tail, rows_at_start, listed, completed_at IS NOT NULL
		FROM mirror_backfill WHERE resource = $1`, resource).
		Scan(&st.pass, &st.nextPage, &st.tail, &st.rowsAtStart, &st.listed, &st.completed)
	if err != nil {
		return st, fmt.Errorf("pgmirror: reading the backfill checkpoint of %s: %w", resource, err)
	}
	return st, nil
}

// progress reports a resource's progress to the stats and OnProgress.
func (m *Mirror) progress(resource string, st backfillState, total int) {
	m.counters.setBackfill(resource, backfillProgress{listed: st.listed, total: int64(total)})
	if m.cfg.OnProgress != nil {
		m.cfg.OnProgress(Progress{Resource: resource, Pass: st.pass, Listed: int(st.listed), Total: total})
	}
}
