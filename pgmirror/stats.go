package pgmirror

import (
	"maps"
	"sync"
)

// stats are the counters of one Mirror's data path since it was opened,
// for its metrics: they count what this process committed, not what the
// database holds. Safe for concurrent use.
type stats struct {
	mu sync.Mutex
	s  statsSnapshot
}

// statsSnapshot is a copy of the counters; its maps are the caller's.
type statsSnapshot struct {
	// changes counts the rows written to mirror_changes, by resource and
	// cause (causeEvent, causeBackfill, causeReconciliation).
	changes map[changeKey]int64
	// corrections counts the rows reconciliations inserted or corrected
	// (deletion marks included), by resource.
	corrections map[string]int64
	// deleted counts the rows marked deleted, by resource.
	deleted map[string]int64
	// backfill is the progress of the backfill walks this process made, by
	// resource.
	backfill map[string]backfillProgress
}

// changeKey labels a count of changes.
type changeKey struct{ resource, cause string }

// backfillProgress is a resource's backfill as this process last saw it.
type backfillProgress struct {
	// listed is the records the backfill's walks have written (a page read
	// again counts again); total is the service's count when the pass
	// began.
	listed, total int64
	complete      bool
}

func newStats() *stats {
	return &stats{s: statsSnapshot{
		changes:     map[changeKey]int64{},
		corrections: map[string]int64{},
		deleted:     map[string]int64{},
		backfill:    map[string]backfillProgress{},
	}}
}

// addChanges counts changes committed.
func (s *stats) addChanges(counts map[changeKey]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range counts {
		s.s.changes[k] += n
	}
}

// addCorrections counts n rows a reconciliation corrected in resource.
func (s *stats) addCorrections(resource string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.s.corrections[resource] += int64(n)
}

// addDeleted counts n rows of resource marked deleted.
func (s *stats) addDeleted(resource string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.s.deleted[resource] += int64(n)
}

// setBackfill records the backfill's progress on resource.
func (s *stats) setBackfill(resource string, p backfillProgress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.s.backfill[resource] = p
}

// snapshot returns a copy of the counters.
func (s *stats) snapshot() statsSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return statsSnapshot{
		changes:     maps.Clone(s.s.changes),
		corrections: maps.Clone(s.s.corrections),
		deleted:     maps.Clone(s.s.deleted),
		backfill:    maps.Clone(s.s.backfill),
	}
}
