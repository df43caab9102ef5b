package pgmirror

import (
	"context"
	"fmt"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// Backfill copies every record of every resource of every business into
// the mirror, and returns nil once each resource's backfill is complete (it
// returns at once for those completed earlier: a completed backfill is not
// redone, the reconciler keeps the copy current). It is resumable: each
// batch of records commits with the resource's checkpoint (the page to go
// on from), so a backfill that was stopped or killed goes on where it
// stopped. A 429, a 5xx, an unreachable service or a lost database only
// make it wait and go on, with backoff (at most about 30 seconds, or what
// a Retry-After asks) and one log line when the dependency goes away and
// one when it is back, not one per failure; it returns an error for a
// failure that waiting cannot mend (a refused API key, say), or ctx's.
// Other failures (a statement that fails) are logged each time.
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
// a time, taking turns (see RunReconciler); a business of the database
// whose key the service refuses is paused and the others go on, while for
// the business of Config.Client Backfill returns the error.
func (m *Mirror) Backfill(ctx context.Context) error {
	sup := m.supervise(ctx)
	walks, wake := m.walkStep(sup, true, false)
	sup.loop("backfill", wake, walks)
	if err := sup.wait(); err != nil {
		return err
	}
	return ctx.Err() // nil once complete; ctx's when it stopped before
}

// backfillRound goes once over the business's resources, backfilling
// those no other replica is at (see backfillResource), and reports whether
// every one is complete; the first reconciliation is then made due (see
// spread). A failure ends the round: the business rests, and the next
// round goes on from the checkpoints.
func (t *tenant) backfillRound(ctx context.Context) (bool, error) {
	pending := 0
	for _, res := range t.resources() {
		done, err := t.backfillResource(ctx, res)
		if err != nil {
			return false, fmt.Errorf("pgmirror: backfilling %s: %w", res.name, err)
		}
		if !done {
			pending++
		}
	}
	if pending > 0 {
		return false, nil
	}
	// The backfill was a full listing: the first reconciliation is due an
	// interval from now, less the business's spread; the first complete
	// copy is announced once.
	first, err := t.m.store.CompleteCopy(ctx, t.name, t.spread())
	if first {
		t.log.InfoContext(ctx, "pgmirror: business ready: its first complete copy is done")
	}
	return err == nil, err
}

// backfilled reports whether the backfill of every resource of the
// business is complete.
func (t *tenant) backfilled(ctx context.Context) (bool, error) {
	n, err := t.m.store.Backfilled(ctx, t.name)
	return n == len(t.resources()), err
}

// backfillResource backfills res if no other replica is at it, from its
// checkpoint, and reports whether its backfill is complete. A failure
// leaves the checkpoint where the last batch written put it.
func (t *tenant) backfillResource(ctx context.Context, res *resource) (bool, error) {
	m := t.m
	st, err := m.store.LoadBackfill(ctx, t.name, res.name)
	if err != nil || st.Completed {
		return st.Completed, err
	}
	lock, ok, err := m.store.TryLock(ctx, "backfill:"+t.name+":"+res.name)
	if err != nil || !ok {
		return false, err
	}
	defer lock.Release()
	if st, err = m.store.LoadBackfill(ctx, t.name, res.name); err != nil || st.Completed {
		return st.Completed, err // another replica finished it meanwhile
	}
	for { // the first pass, then the closing passes
		total, err := res.total(ctx, m.cfg.Client, t.walkOpts...)
		if err != nil {
			return false, err
		}
		t.answered(ctx)
		t.log.InfoContext(ctx, "pgmirror: backfilling", "resource", res.name, "pass", st.Pass, "from_page", st.NextPage, "total", total)
		t.progress(res.name, st, total)
		last, err := t.walkPages(ctx, res, st.NextPage, func(ctx context.Context, rows []store.Row, seq int64, resume int) error {
			var listed int64
			err := t.writeIn(ctx, CauseBackfill, res, rowIDs(rows), func(w *writeTx) error {
				if _, err := apply(ctx, w, res, rows, seq); err != nil {
					return err
				}
				var err error
				listed, err = w.Checkpoint(ctx, t.name, res.name, resume, len(rows))
				return err
			})
			if err == nil {
				st.NextPage, st.Listed = resume, listed
				t.progress(res.name, st, total)
			}
			return err
		})
		if err != nil {
			return false, err
		}

		// Past the last page: does the table hold every record the service
		// counts?
		if total, err = res.total(ctx, m.cfg.Client, t.walkOpts...); err != nil {
			return false, err
		}
		rows, err := m.store.CountLive(ctx, res.table, t.name)
		if err != nil {
			return false, err
		}
		if rows >= int64(total) || st.Pass > m.cfg.ClosingPasses {
			if rows < int64(total) {
				t.log.WarnContext(ctx, "pgmirror: after its closing passes the backfill holds fewer records than the service counts; "+
					"the records created meanwhile come by webhook, the reconciler re-lists the rest",
					"resource", res.name, "rows", rows, "total", total, "passes", st.Pass)
			}
			if err := m.store.CompleteBackfill(ctx, t.name, res.name, total); err != nil {
				return false, err
			}
			m.counters.setBackfill(res.name, backfillProgress{listed: st.Listed, total: int64(total), complete: true})
			t.log.InfoContext(ctx, "pgmirror: backfilled", "resource", res.name, "rows", rows, "total", total, "passes", st.Pass)
			return true, nil
		}
		// A pass from the last page, where a list in creation order puts the
		// records created during the walk, for as long as such a pass finds
		// records; a whole walk when it finds none: the list's order moved
		// records onto pages the walk had passed.
		tail := !st.Tail || rows > st.RowsAtStart
		next := 1
		if tail {
			next = last
		}
		t.log.InfoContext(ctx, "pgmirror: the table holds fewer records than the service counts; closing pass",
			"resource", res.name, "rows", rows, "total", total, "pass", st.Pass+1, "from_page", next)
		st = store.Backfill{Pass: st.Pass + 1, NextPage: next, Tail: tail, RowsAtStart: rows, Listed: st.Listed}
		if err := m.store.StartPass(ctx, t.name, res.name, st); err != nil {
			return false, err
		}
	}
}

// flushFunc writes a batch of a walk, in a transaction of its own (see
// writeIn). resume is the page a later walk must start from to miss none of
// the records after the batch: the page after the batch when it ends on a
// page boundary, otherwise the page it ends in (whose records then come
// again, harmlessly).
type flushFunc func(ctx context.Context, rows []store.Row, seq int64, resume int) error

// walkPages lists res from page start with WithPrefetch and writes the
// records in batches of BatchSize through flush; the SDK goes on fetching
// the pages ahead while a batch is written. Every record of the walk is
// stamped with one fetch sequence number, taken before its first request,
// and recorded as the resource's walk_seq (store.BeginWalk). It returns
// the last page that held records (start when none did).
//
// On an error of the list, ctx ending included, the records received before
// it are still written, then the error is returned; a batch in progress is
// committed even when ctx ends. Memory is bounded by Prefetch+1 pages and
// one batch.
func (t *tenant) walkPages(ctx context.Context, res *resource, start int, flush flushFunc) (last int, err error) {
	m := t.m
	seq, err := m.store.NextSeq(ctx, t.name)
	if err != nil {
		return start, err
	}
	if err := m.store.BeginWalk(ctx, t.name, res.name, seq); err != nil {
		return start, err
	}
	batch := make([]store.Row, 0, m.cfg.BatchSize)
	n := 0 // records received
	write := func() error {
		if len(batch) == 0 {
			return nil
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		defer cancel()
		err := flush(wctx, batch, seq, start+n/pageSize)
		batch = batch[:0]
		return err
	}
	for r, err := range t.list(ctx, res, start) {
		if err != nil {
			if werr := write(); werr != nil {
				return start + max(n-1, 0)/pageSize, werr
			}
			return start + max(n-1, 0)/pageSize, err
		}
		batch = append(batch, r)
		n++
		if len(batch) >= m.cfg.BatchSize {
			if err := write(); err != nil {
				return start + (n-1)/pageSize, err
			}
		}
	}
	return start + max(n-1, 0)/pageSize, write()
}

// progress reports a resource's progress to the stats and OnProgress.
func (t *tenant) progress(resource string, st store.Backfill, total int) {
	t.m.counters.setBackfill(resource, backfillProgress{listed: st.Listed, total: int64(total)})
	if t.m.cfg.OnProgress != nil {
		t.m.cfg.OnProgress(Progress{Business: t.name, Resource: resource, Pass: st.Pass, Listed: int(st.Listed), Total: total})
	}
}
