package pgmirror

import (
	"context"
	"errors"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// Walks are the backfills and the reconciliations: each lists a business's
// records, page after page, within the business's budget. A replica runs
// Config.Walkers of them at once, each on another business; the businesses
// take turns (round-robin), backfills first, then the reconciliations
// most overdue, so that none waits behind another's backlog. A business
// that is paused (see budget) is skipped until its pause ends.

// backfillRound is how long a business rests on a replica whose backfill
// round left it incomplete (other replicas hold some of its resources) or
// that found another replica reconciling it.
const backfillRound = time.Second

// walker is the state of the walk loop.
type walker struct {
	m            *Mirror
	sup          *supervisor
	backfillOnly bool
	announce     bool // log "pgmirror: backfill complete" (Run's walks)
	started      time.Time
	slots        chan struct{} // a token per walk in progress
	freed        chan struct{} // a walk ended

	mu        sync.Mutex
	busy      map[string]bool       // businesses this replica is walking
	resting   map[*tenant]time.Time // businesses that rest (see walk), until when: a business changed (a new key) is a new tenant, and rests not
	cursor    string                // the last business given a backfill: the next turn goes after it
	announced bool                  // "backfill complete" is logged
}

// walkStep is the step of the loop that runs the businesses' walks: it
// reads their state, and starts the walks due in the free slots, looking
// again every tenth of ReconcileInterval (at least every 100 ms, at most
// every second) or as soon as a walk ends. With backfillOnly it ends
// (errDone) once every business is backfilled, but those paused for long
// (see failed); otherwise it goes on with the reconciliations (and the
// backfills of businesses added later), with announce logging "pgmirror:
// backfill complete" once every business is backfilled. It returns the
// channel that wakes the loop.
func (m *Mirror) walkStep(sup *supervisor, backfillOnly, announce bool) (step, <-chan struct{}) {
	w := &walker{m: m, sup: sup, backfillOnly: backfillOnly, announce: announce, started: time.Now(), slots: make(chan struct{}, m.cfg.Walkers),
		freed: make(chan struct{}, 1), busy: map[string]bool{}, resting: map[*tenant]time.Time{}}
	if ts := m.tenants.all(); len(ts) > 1 {
		w.cursor = ts[rand.IntN(len(ts))].name // replicas start at different businesses, and meet less
	}
	return w.step, w.freed
}

func (w *walker) step(ctx context.Context) (time.Duration, error) {
	m := w.m
	ts := m.tenants.all()
	counts := make([]int, len(ts))
	for i, t := range ts {
		counts[i] = len(t.resources())
	}
	states, err := m.store.WalkStates(ctx, names(ts), counts, m.cfg.ReconcileInterval)
	if err != nil {
		return 0, err
	}
	w.mu.Lock()
	now := time.Now()
	maps.DeleteFunc(w.resting, func(_ *tenant, until time.Time) bool { return !until.After(now) })
	jobs := nextWalks(ts, states, w.busy, w.resting, w.cursor, now, w.backfillOnly)
	// Backfilled: every business, but those paused for long (the service
	// refused them, or their records vanished), whose backfill waits for
	// a person; a pause the business waits out by itself is waited for.
	backfilled := len(w.busy) == 0 && !slices.ContainsFunc(ts, func(t *tenant) bool {
		st := states[t.name]
		return (!st.Backfilled || st.Reconcile.IsZero()) && st.Paused <= maxBackoff
	})
	w.mu.Unlock()
	if backfilled && w.backfillOnly {
		return 0, errDone
	}
	if backfilled && w.announce && !w.announced {
		w.announced = true
		m.log.InfoContext(ctx, "pgmirror: backfill complete", "took", time.Since(w.started).Round(time.Millisecond).String())
	}
	for _, j := range jobs {
		select {
		case w.slots <- struct{}{}:
		default:
			return w.wait(), nil // every slot is taken
		}
		w.mu.Lock()
		w.busy[j.t.name] = true
		if j.backfill {
			w.cursor = j.t.name
		}
		w.mu.Unlock()
		w.sup.do(func(ctx context.Context) error {
			rest, stop := j.t.walk(ctx, j.backfill)
			w.mu.Lock()
			delete(w.busy, j.t.name)
			if rest > 0 {
				w.resting[j.t] = time.Now().Add(rest)
			}
			w.mu.Unlock()
			<-w.slots
			select {
			case w.freed <- struct{}{}:
			default:
			}
			return stop
		})
	}
	return w.wait(), nil
}

// wait is how long the walk loop waits before it looks again.
func (w *walker) wait() time.Duration {
	return jitter(min(max(w.m.cfg.ReconcileInterval/10, 100*time.Millisecond), time.Second))
}

// walkJob is a walk to start: a backfill round or a reconciliation.
type walkJob struct {
	t        *tenant
	backfill bool
}

// nextWalks returns the walks to start, in order: the backfills of the
// businesses not backfilled, round-robin from the one after cursor, then
// the reconciliations due, most overdue first; never one of a business
// busy, resting or paused.
func nextWalks(ts []*tenant, states map[string]store.WalkState, busy map[string]bool, resting map[*tenant]time.Time, cursor string,
	now time.Time, backfillOnly bool) []walkJob {
	var backfills, reconciles []*tenant
	for _, t := range ts {
		st, ok := states[t.name]
		if _, rests := resting[t]; !ok || busy[t.name] || rests || st.Paused > 0 {
			continue
		}
		switch {
		case !st.Backfilled || st.Reconcile.IsZero():
			// Not backfilled; or backfilled by several replicas, none of
			// whose rounds saw every resource complete, or reconciled (by
			// hand) before a round did: a round finds them so, records the
			// first complete copy and makes its first reconciliation due.
			backfills = append(backfills, t)
		case !backfillOnly && !st.Reconcile.After(now):
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
	slices.SortStableFunc(reconciles, func(a, b *tenant) int { return states[a.name].Reconcile.Compare(states[b.name].Reconcile) })
	out := make([]walkJob, 0, len(backfills)+len(reconciles))
	for _, t := range backfills {
		out = append(out, walkJob{t: t, backfill: true})
	}
	for _, t := range reconciles {
		out = append(out, walkJob{t: t})
	}
	return out
}

// walk runs one walk of the business: a backfill round (see
// backfillRound) or its reconciliation if due. It returns how long the
// business must rest on this replica before its next walk: a round when
// its backfill is left incomplete or another replica reconciles it, the
// backoff of a failure (see failed; at most maxBackoff); and the error that must stop the
// mirror, if any. A removed business's walk stops at its next call.
func (t *tenant) walk(ctx context.Context, backfill bool) (rest time.Duration, stop error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(t.life, cancel)()
	what := "reconciliation"
	var err error
	if backfill {
		what = "backfill"
		var done bool
		done, err = t.backfillRound(ctx)
		if !done {
			rest = jitter(backfillRound)
		}
	} else {
		err = t.reconcileIfDue(ctx)
	}
	switch {
	case errors.Is(err, errReconciledElsewhere): // take another business meanwhile
		return jitter(backfillRound), nil
	case err == nil || ctx.Err() != nil:
		return rest, nil
	}
	// The business rests here at most a backoff: a longer pause is in the
	// database, for every replica, and a new key ends it.
	wait, stop := t.m.failed(ctx, t, what, err, 1)
	return max(rest, min(wait, maxBackoff)), stop
}

// spread is how long before the backfill's end the business's first
// reconciliation is counted from: a fraction of ReconcileInterval fixed by
// the business's name, so that the reconciliations of businesses backfilled
// together are spread over the interval rather than all due at once. A
// business served alone is due a whole interval after its backfill.
func (t *tenant) spread() time.Duration {
	if len(t.m.tenants.all()) < 2 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(t.name))
	return time.Duration(h.Sum64() % uint64(max(t.m.cfg.ReconcileInterval, 1)))
}
