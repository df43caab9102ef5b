package pgmirror_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// The work that grows with a business, bounded (issue 32, item 6), at
// scale: it runs only with PGMIRROR_SCALE=1 and without -short, and logs
// its figures.
//
//  1. A reconciliation of a business of 100,000 invoices
//     (PGMIRROR_SCALE_INVOICES): its time, and the peak of the live heap
//     it adds (as the last garbage collection found it, sampled every
//     5 ms).
//  2. A retention pass over 10,000,000 changes older than the retention
//     (PGMIRROR_SCALE_CHANGES): its time, and the longest an event's change
//     waited to be read by FollowChanges meanwhile (events every 50 ms): a
//     long deletion's transaction would hold the feed's readers back until
//     it ends.
func TestBoundedReconciliationAndRetention(t *testing.T) {
	t.Parallel()
	if testing.Short() || os.Getenv("PGMIRROR_SCALE") != "1" {
		t.Skip("set PGMIRROR_SCALE=1 (and no -short) to reconcile 100,000 invoices and prune 10,000,000 changes")
	}
	invoices := scaleSetting(t, "PGMIRROR_SCALE_INVOICES", 100_000)
	changes := scaleSetting(t, "PGMIRROR_SCALE_CHANGES", 10_000_000)
	ctx := context.Background()
	srv, clock := newFake(t)
	ids := seed(t, srv, sizes{invoices: invoices}, rand.New(rand.NewPCG(40, 41)))
	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv), schema)
	cfg.BatchSize = pgmirror.DefaultBatchSize
	m := openMirror(t, cfg)
	start := time.Now()
	require.NoError(t, m.Backfill(ctx))
	t.Logf("backfill of %d invoices: %v", invoices, time.Since(start).Round(time.Millisecond))

	// 1. A reconciliation, its heap sampled.
	stop := heapPeak()
	start = time.Now()
	corrected, err := m.Reconcile(ctx)
	took := time.Since(start)
	added := stop()
	require.NoError(t, err)
	assert.Zero(t, corrected[pgmirror.Invoices], "nothing changed")
	t.Logf("reconciliation of %d invoices: %v; live heap added at its peak: %.1f MB (%.0f bytes an invoice)",
		invoices, took.Round(time.Millisecond), float64(added)/1e6, float64(added)/float64(invoices))

	// 2. A retention pass over old changes, while events are followed.
	db := adminPool(t, schema)
	start = time.Now()
	_, err = db.Exec(ctx, `INSERT INTO mirror_changes (seq, at, business, resource, id, cause, op, new_values)
		SELECT g, now() - interval '60 days', $1, 'invoices', 'old' || g, 'event', 'insert', '{"old": true}'
		FROM generate_series(1, $2::bigint) AS g`, pgmirror.DefaultBusiness, changes)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `VACUUM ANALYZE mirror_changes`)
	require.NoError(t, err)
	t.Logf("%d old changes written in %v", changes, time.Since(start).Round(time.Millisecond))

	hookUp(t, srv, clock, m)
	run(t, m)
	var mu sync.Mutex
	written := map[string]time.Time{} // invoice id → when its update was made
	var held atomic.Int64             // the longest wait of a change to be followed, in ns
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	after := int64(changes) // the old ones are not followed
	go func() {
		for ch, err := range m.FollowChanges(fctx, after) {
			if err != nil {
				return
			}
			mu.Lock()
			at, ok := written[ch.ID]
			mu.Unlock()
			if ok && ch.Cause == pgmirror.CauseEvent {
				if d := int64(time.Since(at)); d > held.Load() {
					held.Store(d)
				}
			}
		}
	}()
	// The pass: this Prune's, with Run's own if it runs meanwhile; it ends
	// when every old change is deleted.
	start = time.Now()
	pruned := make(chan error, 1)
	go func() {
		if err := m.Prune(ctx); err != nil {
			pruned <- err
			return
		}
		for {
			var left int
			if err := db.QueryRow(ctx, `SELECT count(*) FROM mirror_changes WHERE seq <= $1`, changes).Scan(&left); err != nil || left == 0 {
				pruned <- err
				return
			}
			time.Sleep(10 * time.Millisecond) // polling the deletion's progress
		}
	}()
	notes := 0
	for done := false; !done; {
		select {
		case err := <-pruned:
			require.NoError(t, err)
			done = true
		case <-time.After(50 * time.Millisecond): // pacing the events, not a wait
			id := ids["invoices"][notes%len(ids["invoices"])]
			note := fmt.Sprintf("note %d", notes)
			mu.Lock()
			written[id] = time.Now()
			mu.Unlock()
			require.NoError(t, srv.UpdateInvoice(id, invoicingtest.InvoiceUpdate{Notes: &note}))
			notes++
		}
	}
	pruneTook := time.Since(start)
	t.Logf("retention pass over %d changes: %v; %d events meanwhile, the longest a change waited to be followed: %v",
		changes, pruneTook.Round(time.Millisecond), notes, time.Duration(held.Load()).Round(time.Millisecond))
}

// heapPeak samples the live heap (as the last garbage collection found
// it) every 5 ms until stop is called, which returns the peak above the
// live heap at the start.
func heapPeak() (stop func() uint64) {
	read := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		if p := peak.Load(); p > base {
			return p - base
		}
		return 0
	}
}
