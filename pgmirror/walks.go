package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Walks are the backfills and the reconciliations: each lists a business's
// records, page after page, within the business's budget. A replica runs
// Config.Walkers of them at once, each on another business; the businesses
// take turns (round-robin), backfills first, then the reconciliations
// most overdue, so that none waits behind another's backlog. A business
// that is paused (see budget) is skipped until its pause ends.

// walkState is a business's walks as the database holds them.
type walkState struct {
	backfilled bool
	reconcile  time.Time // when its next reconciliation is due; zero before its backfill ends
	paused     bool
}

// walkStates reads the state of the businesses ts.
func (m *Mirror) walkStates(ctx context.Context, ts []*tenant) (map[string]walkState, error) {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.name
	}
	rows, err := m.pool.Query(ctx, `SELECT b.name,
		(SELECT count(*) FROM mirror_backfill AS f WHERE f.business = b.name AND f.completed_at IS NOT NULL) = $2,
		(SELECT r.last_finished_at + $3::interval FROM mirror_reconcile AS r WHERE r.business = b.name),
		coalesce((SELECT p.paused_until > now() FROM mirror_budgets AS p WHERE p.business = b.name), false)
		FROM unnest($1::text[]) AS b(name)`, names, len(allResources), m.cfg.ReconcileInterval)
	if err != nil {
		return nil, fmt.Errorf("pgmirror: reading the businesses' walks: %w", err)
	}
	defer rows.Close()
	out := make(map[string]walkState, len(ts))
	for rows.Next() {
		var name string
		var st walkState
		var due *time.Time
		if err := rows.Scan(&name, &st.backfilled, &due, &st.paused); err != nil {
			return nil, err
		}
		if due != nil {
			st.reconcile = *due
		}
		out[name] = st
	}
	return out, rows.Err()
}

// runWalks runs the businesses' walks until ctx ends or, with
// backfillOnly, until every business not paused is backfilled. It returns
// the error that must stop the mirror: the failure of the business of
// Config.Client that waiting cannot mend (see Run); a business of the
// database that fails so is paused instead (see pauseFailed), and the
// others go on.
func (m *Mirror) runWalks(ctx context.Context, backfillOnly bool) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, m.cfg.Walkers)
	var mu sync.Mutex
	busy := map[string]bool{}         // businesses this replica is walking
	resting := map[string]time.Time{} // businesses that rest (see runWalk), until when
	cursor := ""                      // the last business given a backfill: the next turn goes after it
	if ts := m.tenantList(); len(ts) > 1 {
		cursor = ts[rand.IntN(len(ts))].name // replicas start at different businesses, and meet less
	}
	freed := make(chan struct{}, 1)
	dbFailures := 0
	for ctx.Err() == nil {
		ts := m.tenantList()
		states, err := m.walkStates(ctx, ts)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if m.databaseAway(err) {
				dbFailures++
				m.db.failed(ctx, err)
				m.db.sleep(ctx, retryWait(dbFailures))
				continue
			}
			return err
		}
		dbFailures = 0
		m.db.ok(ctx)
		mu.Lock()
		now := time.Now()
		maps.DeleteFunc(resting, func(_ string, until time.Time) bool { return !until.After(now) })
		jobs := nextWalks(ts, states, busy, resting, cursor, now, backfillOnly)
		mu.Unlock()
		if backfillOnly && len(jobs) == 0 && !slices.ContainsFunc(ts, func(t *tenant) bool {
			st := states[t.name]
			return !st.backfilled && !st.paused
		}) {
			mu.Lock()
			idle := len(busy) == 0
			mu.Unlock()
			if idle {
				return nil
			}
		}
		for _, j := range jobs {
			select {
			case slots <- struct{}{}:
			default:
				j = walkJob{} // every slot is taken
			}
			if j.t == nil {
				break
			}
			mu.Lock()
			busy[j.t.name] = true
			if j.backfill {
				cursor = j.t.name
			}
			mu.Unlock()
			wg.Go(func() {
				defer func() {
					mu.Lock()
					delete(busy, j.t.name)
					mu.Unlock()
					<-slots
					select {
					case freed <- struct{}{}:
					default:
					}
				}()
				rest, err := j.t.runWalk(ctx, j.backfill)
				if err != nil {
					cancel(err)
				}
				if rest > 0 {
					mu.Lock()
					resting[j.t.name] = time.Now().Add(rest)
					mu.Unlock()
				}
			})
		}
		wait := jitter(min(max(m.cfg.ReconcileInterval/10, 100*time.Millisecond), time.Second))
		select {
		case <-ctx.Done():
		case <-freed:
		case <-time.After(wait):
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// walkJob is a walk to start: a backfill pass or a reconciliation.
type walkJob struct {
	t        *tenant
	backfill bool
}

// nextWalks returns the walks to start, in order: the backfills of the
// businesses not backfilled, round-robin from the one after cursor, then
// the reconciliations due, most overdue first; never one of a business
// busy, resting or paused.
func nextWalks(ts []*tenant, states map[string]walkState, busy map[string]bool, resting map[string]time.Time, cursor string,
	now time.Time, backfillOnly bool) []walkJob {
	var backfills, reconciles []*tenant
	for _, t := range ts {
		st, ok := states[t.name]
		if _, rests := resting[t.name]; !ok || busy[t.name] || rests || st.paused {
			continue
		}
		switch {
		case !st.backfilled || st.reconcile.IsZero():
			// Not backfilled; or backfilled by several replicas, none of
			// whose rounds saw every resource complete: a round finds them
			// so and makes its first reconciliation due.
			backfills = append(backfills, t)
		case !backfillOnly && !st.reconcile.IsZero() && !st.reconcile.After(now):
			reconciles = append(reconciles, t)
		}
	}
	// ts is sorted by name: start after the cursor, wrapping around.
	i, _ := slices.BinarySearchFunc(backfills, cursor, func(t *tenant, name string) int {
		if t.name <= name {
			return -1
		}
		return 1
	})
	backfills = append(backfills[i:], backfills[:i]...)
	slices.SortStableFunc(reconciles, func(a, b *tenant) int { return states[a.name].reconcile.Compare(states[b.name].reconcile) })
	out := make([]walkJob, 0, len(backfills)+len(reconciles))
	for _, t := range backfills {
		out = append(out, walkJob{t: t, backfill: true})
	}
	for _, t := range reconciles {
		out = append(out, walkJob{t: t})
	}
	return out
}

// runWalk runs one walk of the business: a backfill (one round over its
// resources, see backfillRoundOnce) or a reconciliation if due. It returns
// how long the business must rest on this replica before its next walk: a
// round when its backfill is left incomplete or another replica reconciles
// it (other replicas hold some of its resources), a backoff when the
// service or the database failed it. A failure of the
// service for this business pauses it (pauseFailed). It returns an error
// only when the mirror must stop: a failure of the business of
// Config.Client that waiting cannot mend (a refused key, ErrMassDeletion).
func (m *tenant) runWalk(ctx context.Context, backfill bool) (rest time.Duration, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(m.life, cancel)() // removed: its walk stops
	if backfill {
		var done bool
		done, err = m.backfillRoundOnce(ctx)
		if !done {
			rest = jitter(backfillRound)
		}
		if err == nil && done && !m.static {
			m.log.InfoContext(ctx, "pgmirror: business backfilled")
		}
	} else {
		err = m.reconcileIfDue(ctx)
	}
	if errors.Is(err, errReconciledElsewhere) { // take another business meanwhile
		return jitter(backfillRound), nil
	}
	dep := m.dependencyOf(err)
	switch {
	case err == nil || ctx.Err() != nil || paused(err):
		return rest, nil
	case dep == m.db:
		m.db.failed(ctx, err)
		return retryWait(1), nil // the next round waits for it
	case dep == m.api:
		m.pauseFailed(ctx, err)
		return apiWait(int(m.failures.Load()), err), nil
	case m.static && (permanent(err) || errors.Is(err, ErrMassDeletion)):
		return rest, err
	case permanent(err) || errors.Is(err, ErrMassDeletion):
		m.pauseFailed(ctx, err)
		return rest, nil
	}
	what := "pgmirror: reconciliation"
	if backfill {
		what = "pgmirror: backfill"
	}
	m.log.ErrorContext(ctx, what, "error", oneLine(err))
	return max(rest, retryWait(1)), nil
}

// spread is how long before the backfill's end the business's first
// reconciliation is counted from: a fraction of ReconcileInterval fixed by
// the business's name, so that the reconciliations of businesses backfilled
// together are spread over the interval rather than all due at once. The
// business of Config.Client is due a whole interval after its backfill.
func (m *tenant) spread() time.Duration {
	if m.static {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(m.name))
	return time.Duration(h.Sum64() % uint64(max(m.cfg.ReconcileInterval, 1)))
}
