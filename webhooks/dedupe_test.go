package webhooks

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock for MemoryDeduper.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newTestDeduper(ttl time.Duration) (*MemoryDeduper, *fakeClock) {
	clock := &fakeClock{now: time.Date(2026, 3, 5, 9, 0, 0, 0, time.UTC)}
	m := NewMemoryDeduper(ttl)
	m.now = clock.Now
	return m, clock
}

func claim(t *testing.T, m *MemoryDeduper, id string) ClaimStatus {
	t.Helper()
	st, err := m.Claim(context.Background(), id)
	require.NoError(t, err)
	return st
}

func release(t *testing.T, m *MemoryDeduper, id string, processed bool) {
	t.Helper()
	require.NoError(t, m.Release(context.Background(), id, processed))
}

// process claims id, which must be new, and releases it as processed.
func process(t *testing.T, m *MemoryDeduper, id string) {
	t.Helper()
	require.Equal(t, ClaimNew, claim(t, m, id))
	release(t, m, id, true)
}

func TestMemoryDeduperLifecycle(t *testing.T) {
	m, clock := newTestDeduper(time.Hour)

	require.Equal(t, ClaimNew, claim(t, m, "a"))
	require.Equal(t, ClaimInFlight, claim(t, m, "a"))
	require.Equal(t, ClaimNew, claim(t, m, "b"), "ids are independent")

	release(t, m, "a", false) // failed: forgotten
	require.Equal(t, ClaimNew, claim(t, m, "a"))
	release(t, m, "a", true) // processed: remembered
	require.Equal(t, ClaimDuplicate, claim(t, m, "a"))

	clock.Advance(time.Hour - time.Second)
	require.Equal(t, ClaimDuplicate, claim(t, m, "a"))
	clock.Advance(time.Second)
	require.Equal(t, ClaimNew, claim(t, m, "a"), "remembered for the TTL only")
}

func TestMemoryDeduperForgetsExpiredIDs(t *testing.T) {
	m, clock := newTestDeduper(time.Minute)
	for i := range 1000 {
		process(t, m, fmt.Sprint(i))
		clock.Advance(time.Second)
	}
	// Ids 0..940 were processed a minute ago or earlier.
	require.Equal(t, ClaimNew, claim(t, m, "x"))
	m.mu.Lock()
	require.Len(t, m.done, 59)
	require.Len(t, m.expiries, 59)
	m.mu.Unlock()
	require.Equal(t, ClaimDuplicate, claim(t, m, "999"))
	require.Equal(t, ClaimNew, claim(t, m, "0"))
}

func TestMemoryDeduperReprocessedAfterExpiry(t *testing.T) {
	m, clock := newTestDeduper(time.Minute)
	process(t, m, "a")
	clock.Advance(2 * time.Minute)
	process(t, m, "a")
	clock.Advance(30 * time.Second)
	require.Equal(t, ClaimDuplicate, claim(t, m, "a"))
}

func TestMemoryDeduperRepeatedRelease(t *testing.T) {
	m, clock := newTestDeduper(time.Minute)
	process(t, m, "a")
	clock.Advance(30 * time.Second)
	release(t, m, "a", true) // again, without a claim: remembered until later
	clock.Advance(40 * time.Second)
	require.Equal(t, ClaimDuplicate, claim(t, m, "a"), "the first, stale expiry must not forget the second")
	clock.Advance(20 * time.Second)
	require.Equal(t, ClaimNew, claim(t, m, "a"))
}

func TestMemoryDeduperConcurrentClaims(t *testing.T) {
	m := NewMemoryDeduper(time.Hour)
	const n = 50
	results := make(chan ClaimStatus, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			st, err := m.Claim(context.Background(), "same")
			if err == nil {
				results <- st
			}
		})
	}
	wg.Wait()
	close(results)
	counts := map[ClaimStatus]int{}
	for st := range results {
		counts[st]++
	}
	require.Equal(t, map[ClaimStatus]int{ClaimNew: 1, ClaimInFlight: n - 1}, counts)
}

func TestNewMemoryDeduperPanicsOnBadTTL(t *testing.T) {
	require.Panics(t, func() { NewMemoryDeduper(0) })
	require.Panics(t, func() { NewMemoryDeduper(-time.Second) })
}
