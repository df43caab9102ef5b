package pgmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// Phases of a resource in a Status.
const (
	// PhaseBackfilling: the resource's backfill is not complete.
	PhaseBackfilling = "backfilling"
	// PhaseBackfilled: the backfill is complete; events keep the table
	// current, and the reconciler re-lists it every ReconcileInterval.
	PhaseBackfilled = "backfilled"
	// PhaseReconciling: a reconciliation is walking the resource (or the
	// business) now.
	PhaseReconciling = "reconciling"
)

// Phases of a business in a Status (besides PhaseBackfilling and
// PhaseReconciling), as the view mirror_status gives them.
const (
	// PhaseReady: the business's first complete copy is done (every
	// resource backfilled); events keep it current, and reconciliations
	// re-list it.
	PhaseReady = "ready"
	// PhasePaused: the service refused the business's key or kept failing
	// its calls; no replica calls it until the pause ends.
	PhasePaused = "paused"
	// PhaseRemoved: the business was removed (Businesses.Remove); its rows
	// are kept.
	PhaseRemoved = "removed"
)

// ErrNotMigrated is returned by ReadStatus for a schema that does not hold
// a mirror migrated to this package's SchemaVersion.
var ErrNotMigrated = store.ErrNotMigrated

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
	// ReconcileFinished is the oldest of the businesses' last
	// reconciliation ends (zero while one has none), ReconcileStarted the
	// latest of their starts: not one reconciliation's bounds (see
	// BusinessStatus). Reconciling is true while a replica reconciles.
	ReconcileStarted, ReconcileFinished time.Time
	Reconciling                         bool
	// Lagged is the number of records written because an event named them
	// in the last hour, and LagP99 the 99th percentile of their event lag
	// (from the delivery's receipt to the row's commit); 0 when none.
	Lagged int64
	LagP99 time.Duration
	// Businesses are the businesses the mirror holds rows for or serves,
	// by name, as the view mirror_status shows them. The figures above are
	// their sums.
	Businesses []BusinessStatus
}

// BusinessStatus is the state of one business of a Status: a row of the
// view mirror_status.
type BusinessStatus struct {
	Name string
	// Phase is PhaseBackfilling (no complete copy yet), PhaseReady,
	// PhaseReconciling, PhasePaused or PhaseRemoved.
	Phase string
	// Rows is the number of its rows over every record table, Deleted how
	// many of them are marked deleted.
	Rows, Deleted int64
	// Resources is the number of resources it mirrors (its Selection's:
	// len(Resources()) unless it names some). Backfilled counts those whose
	// backfill is complete; BackfillListed the records its backfill's
	// walks wrote (a page read again counts again), BackfillTotal the
	// service's counts when they began.
	Resources, Backfilled         int
	BackfillListed, BackfillTotal int64
	// ReadyAt is when its first complete copy ended (zero before).
	ReadyAt time.Time
	// ReconcileStarted and ReconcileFinished are the start of its last
	// reconciliation and the end of its last finished one: a start after
	// the end is a reconciliation running, or cut short. The end is the
	// backfill's until a reconciliation finished. Corrected counts the rows
	// the last one corrected, by resource.
	ReconcileStarted, ReconcileFinished time.Time
	Corrected                           map[string]int
	// ResyncAt is when a resync was asked for that no replica has made
	// yet (zero when none waits; see Mirror.Resync).
	ResyncAt time.Time
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
	// PendingFetches is the number of its records waiting to be fetched,
	// OldestPending how long ago the oldest was first asked for.
	PendingFetches int64
	OldestPending  time.Duration
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
	return ReadBusinessStatus(ctx, db, schema, "")
}

// ReadBusinessStatus is ReadStatus for one business: its rows, backfill,
// reconciliations, queues and lag, in Resources and the totals, and its
// line alone in Businesses (none when the mirror holds nothing of it).
// business "" reads every business, as ReadStatus does.
func ReadBusinessStatus(ctx context.Context, db *pgxpool.Pool, schema, business string) (*Status, error) {
	return readStatus(ctx, store.New(db, schema), business)
}

// Status is ReadBusinessStatus of the Mirror's schema, through its pool.
func (m *Mirror) Status(ctx context.Context, business string) (*Status, error) {
	return readStatus(ctx, m.store, business)
}

func readStatus(ctx context.Context, db *store.Store, business string) (*Status, error) {
	schema := db.Schema()
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("pgmirror: schema name %q: use letters, digits and underscores", schema)
	}
	tables := make([]string, len(allResources))
	for i, res := range allResources {
		tables[i] = res.table.Name
	}
	st, err := db.ReadStatus(ctx, tables, lagWindow, business)
	if err != nil {
		if errors.Is(err, ErrNotMigrated) {
			return nil, err
		}
		return nil, fmt.Errorf("pgmirror: reading the status of schema %s: %w", schema, err)
	}
	s := &Status{Schema: schema, At: st.At, Reconciling: st.Reconciling,
		InboxPending: st.Queues.InboxPending, InboxOldest: st.Queues.InboxOldest,
		Lagged: st.Lag[""].Count, LagP99: st.Lag[""].P99}
	if st.ReconcileStarted != nil {
		s.ReconcileStarted = *st.ReconcileStarted
	}
	if st.ReconcileFinished != nil {
		s.ReconcileFinished = *st.ReconcileFinished
	}
	var corrected map[string]int
	if st.Corrected != nil {
		if err := json.Unmarshal(st.Corrected, &corrected); err != nil {
			return nil, fmt.Errorf("pgmirror: reading mirror_reconcile.last_corrected: %w", err)
		}
	}
	for _, res := range allResources {
		r := ResourceStatus{Name: res.name, Phase: PhaseBackfilling, Rows: st.Rows[res.table.Name], Deleted: st.Deleted[res.table.Name],
			PendingFetches: st.Queues.Fetches[res.name].Count, OldestPending: st.Queues.Fetches[res.name].Oldest,
			Lagged: st.Lag[res.name].Count, LagP99: st.Lag[res.name].P99}
		if b, ok := st.Backfills[res.name]; ok {
			r.BackfillStarted = b.Started
			if b.Completed != nil {
				r.BackfillCompleted, r.Phase = *b.Completed, PhaseBackfilled
			}
		}
		if n, ok := corrected[res.name]; ok && st.ReconcileFinished != nil {
			r.Reconciled, r.Corrected = *st.ReconcileFinished, n
		}
		if s.Reconciling && r.Phase == PhaseBackfilled {
			r.Phase = PhaseReconciling
		}
		s.Resources = append(s.Resources, r)
	}
	selections, err := db.Selections(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgmirror: reading the selections of schema %s: %w", schema, err)
	}
	for _, b := range st.Businesses {
		var sel Selection
		if raw, ok := selections[b.Name]; ok {
			if err := json.Unmarshal(raw, &sel); err != nil {
				return nil, fmt.Errorf("pgmirror: reading mirror_selections: %w", err)
			}
		}
		bs := BusinessStatus{Name: b.Name, Phase: b.Phase, Rows: b.Rows, Deleted: b.Deleted, Resources: len(sel.resources()), Backfilled: b.Backfilled,
			BackfillListed: b.BackfillListed, BackfillTotal: b.BackfillTotal, ReadyAt: value(b.ReadyAt),
			ReconcileStarted: value(b.ReconcileStarted), ReconcileFinished: value(b.ReconcileFinished), ResyncAt: value(b.ResyncAt),
			Paused: b.PausedUntil != nil, PausedUntil: value(b.PausedUntil), Removed: b.RemovedAt != nil,
			PendingFetches: b.PendingFetches, OldestPending: b.OldestPending, Lagged: b.Lag.Count, LagP99: b.Lag.P99}
		if b.PauseReason != nil {
			bs.PauseReason = *b.PauseReason
		}
		if b.Corrected != nil {
			if err := json.Unmarshal(b.Corrected, &bs.Corrected); err != nil {
				return nil, fmt.Errorf("pgmirror: reading mirror_reconcile.last_corrected: %w", err)
			}
		}
		s.Businesses = append(s.Businesses, bs)
	}
	return s, nil
}

// Problems returns what makes the mirror degraded, one sentence each, or
// nil when it is healthy. The mirror is degraded when
//   - a resource's backfill is not complete (the tables are not whole yet);
//   - a business has had no reconciliation finish in the last two
//     reconcileIntervals (counted from its first complete copy when none
//     ever did), so changes that raise no event may be missing;
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
	for _, r := range s.Resources {
		if r.Phase == PhaseBackfilling {
			backfilling = append(backfilling, r.Name)
		}
		if r.OldestPending > maxLag {
			out = append(out, fmt.Sprintf("%d %s wait to be fetched, the oldest for %v (more than %v)",
				r.PendingFetches, r.Name, r.OldestPending.Round(time.Second), maxLag))
		}
	}
	if len(backfilling) > 0 {
		out = append([]string{"the backfill is not complete: " + strings.Join(backfilling, ", ")}, out...)
	}
	for _, b := range s.Businesses {
		if b.ReadyAt.IsZero() || b.Paused || b.Removed {
			continue
		}
		if since := later(b.ReconcileFinished, b.ReadyAt); s.At.Sub(since) > 2*reconcileInterval {
			out = append(out, fmt.Sprintf("business %s: no reconciliation has finished for %v (the interval is %v)",
				b.Name, s.At.Sub(since).Round(time.Second), reconcileInterval))
		}
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

// value is *t, or the zero time for nil.
func value(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
