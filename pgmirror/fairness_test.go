package pgmirror_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// Ten businesses backfill at once, each within its budget, on a service at
// 20 ms a request; one answers 429 to every call and one 401 (a revoked
// key). Those two are paused and reported (status, metrics), and never slow
// the others: every other business's events land with an event→row lag p99
// of at most a second while the backfills run, each within its budget (to
// within 5 %), and each ends exact. A new key for the refused business ends
// its pause, and it is backfilled too. It runs alone (not in parallel):
// it measures lags.
func TestBusinessesAreFairAndWithinTheirBudget(t *testing.T) {
	const (
		n        = 10
		invoices = 150
	)
	budget := 5.0 // requests a second, per business: the backfills take a while
	if testing.Short() {
		budget = 10
	}
	ctx := context.Background()
	f := newFleet(t, n, withFleetLatency(20*time.Millisecond, 0), withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, invoices) }))
	storm, revoked := f.Businesses[n-2], f.Businesses[n-1]
	good := f.Businesses[:n-2]
	f.Fail(storm.Name, 429)
	f.Fail(revoked.Name, 401)
	metrics := pgmirror.NewMetrics()
	registry := prometheus.NewRegistry()
	mm := newMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), func(c *pgmirror.Config) {
		c.Metrics = metrics
		c.CoalesceWindow = 50 * time.Millisecond
	})
	require.NoError(t, registry.Register(metrics))
	for _, b := range f.Businesses {
		mm.add(t, b, budget)
	}
	began := time.Now()
	run(t, mm.Mirror)

	// Events, all through the backfills: an invoice created in a good
	// business every 150 ms, round-robin.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var created sync.Map // business → ids
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(7, 7))
		clients := map[string]*invoicing.Client{}
		for _, b := range good {
			clients[b.Name] = businessClient(t, f, b)
		}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(150 * time.Millisecond):
			}
			b := good[i%len(good)]
			inv := createInvoice(t, clients[b.Name], invoicing.InvoiceStatusDraft, 1+rng.IntN(2))
			ids, _ := created.LoadOrStore(b.Name, &[]string{})
			*ids.(*[]string) = append(*ids.(*[]string), inv.ID)
		}
	})
	for _, b := range good {
		waitBusinessBackfilled(t, mm, b.Name, 2*time.Minute)
	}
	backfilled := time.Since(began)
	close(stop)
	wg.Wait()
	waitDrained(t, mm.DB, 30*time.Second)

	// The two are paused, reported, and never backfilled.
	st, err := pgmirror.ReadStatus(ctx, mm.DB, mm.Schema)
	require.NoError(t, err)
	byName := map[string]pgmirror.BusinessStatus{}
	for _, b := range st.Businesses {
		byName[b.Name] = b
	}
	for _, b := range []string{storm.Name, revoked.Name} {
		require.True(t, byName[b].Paused, "%s is paused", b)
		assert.Less(t, byName[b].Backfilled, len(pgmirror.Resources()), b)
	}
	assert.Contains(t, byName[revoked.Name].PauseReason, "refused")
	assert.Contains(t, byName[storm.Name].PauseReason, "429")
	problems := strings.Join(st.Problems(time.Minute, time.Hour), "\n")
	assert.Contains(t, problems, "business "+storm.Name+" is paused")
	assert.Contains(t, problems, "business "+revoked.Name+" is paused")
	families, err := registry.Gather()
	require.NoError(t, err)
	pausedGauge := -1.0
	for _, fam := range families {
		if fam.GetName() == "invoicing_mirror_businesses" {
			for _, m := range fam.GetMetric() {
				if m.GetLabel()[0].GetValue() == "paused" {
					pausedGauge = m.GetGauge().GetValue()
				}
			}
		}
	}
	assert.Equal(t, 2.0, pausedGauge, "invoicing_mirror_businesses{state=\"paused\"}")

	// Every good business: exact, its events' lag p99 within a second, its
	// requests within its budget.
	var lags []string
	worstRate := 0.0
	for _, b := range good {
		requireBusinessEqual(t, f, mm, b)
		ids, _ := created.Load(b.Name)
		require.NotNil(t, ids, b.Name)
		var events int
		var p99 float64
		require.NoError(t, mm.DB.QueryRow(ctx, `SELECT count(*), percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_seconds)
			FROM mirror_event_lag WHERE business = $1`, b.Name).Scan(&events, &p99))
		require.GreaterOrEqual(t, events, len(*ids.(*[]string)), b.Name)
		assert.LessOrEqual(t, p99, 1.0, "%s's event lag p99", b.Name)
		lags = append(lags, fmt.Sprintf("%s p99 %.0f ms (%d events)", b.Name, p99*1000, events))

		times := f.RequestTimes(b.Name)
		span := times[len(times)-1].Sub(times[0]).Seconds()
		burst := max(budget, 1)
		allowed := budget*span + burst
		rate := float64(len(times)) / (span + burst/budget) // what the bucket lets through over the span
		worstRate = math.Max(worstRate, rate/budget)
		assert.LessOrEqual(t, float64(len(times)), allowed*1.05, "%s: %d requests in %.1f s, budget %g/s", b.Name, len(times), span, budget)
	}
	slices.Sort(lags)
	t.Logf("%d businesses backfilled in %v at %g requests/s each; highest request rate %.3f× the budget; lags: %s",
		len(good), backfilled.Round(time.Millisecond), budget, worstRate, strings.Join(lags, "; "))

	// A new key mends the refused business.
	f.Fail(revoked.Name, 0)
	mm.add(t, revoked, budget*4)
	waitBusinessBackfilled(t, mm, revoked.Name, time.Minute)
	requireBusinessEqual(t, f, mm, revoked)
}
