package pginbox_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// gather returns the metric families m collects, by name, through a
// pedantic registry (which checks them against their descriptions).
func gather(t *testing.T, m *pginbox.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	r := prometheus.NewPedanticRegistry()
	require.NoError(t, r.Register(m))
	mfs, err := r.Gather()
	require.NoError(t, err)
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// byLabel returns a family's values by the value of its one label ("" for
// a family without labels).
func byLabel(mf *dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mf.GetMetric() {
		label := ""
		if len(m.GetLabel()) > 0 {
			label = m.GetLabel()[0].GetValue()
		}
		switch {
		case m.Counter != nil:
			out[label] = m.GetCounter().GetValue()
		case m.Gauge != nil:
			out[label] = m.GetGauge().GetValue()
		}
	}
	return out
}

// outcomes returns invoicing_pginbox_deliveries_total by outcome, leaving
// out the zeros.
func outcomes(t *testing.T, m *pginbox.Metrics) map[string]float64 {
	t.Helper()
	out := byLabel(gather(t, m)["invoicing_pginbox_deliveries_total"])
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

func TestMetricsAreWellFormed(t *testing.T) {
	m := pginbox.NewMetrics(newPool(t, newSchema(t), 1))
	problems, err := testutil.CollectAndLint(m)
	require.NoError(t, err)
	assert.Empty(t, problems)
	// Eight outcomes, in flight, worker errors, pending due and waiting,
	// oldest age, query errors.
	assert.Equal(t, 14, testutil.CollectAndCount(m))
	for name, mf := range gather(t, m) {
		assert.True(t, strings.HasPrefix(name, "invoicing_pginbox_"), name)
		assert.NotEmpty(t, mf.GetHelp(), name)
	}
	assert.Panics(t, func() { pginbox.NewMetrics(nil) })
}

func TestMetricsCountTheHandlersAnswers(t *testing.T) {
	pool := newPool(t, newSchema(t), 2)
	m := pginbox.NewMetrics(pool)
	h := pginbox.Handler(pool, webhooktest.NewVerifier(t), pginbox.WithMetrics(m))

	deliveries := webhooktest.Deliveries(5)
	for _, d := range deliveries {
		require.Equal(t, http.StatusOK, d.Send(h))
	}
	for _, d := range deliveries[:2] { // the service's retries
		require.Equal(t, http.StatusOK, d.Send(h))
	}
	unsigned := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(`{}`))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, unsigned)
	require.Equal(t, http.StatusUnauthorized, w.Code)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/webhooks", nil))
	require.Equal(t, http.StatusMethodNotAllowed, w.Code)

	assert.Equal(t, map[string]float64{"stored": 5, "duplicate": 2, "refused": 2}, outcomes(t, m))
	assert.Equal(t, 5.0, byLabel(gather(t, m)["invoicing_pginbox_pending_deliveries"])["due"])

	// A database that fails: 500, and store_failed.
	broken := newPool(t, emptySchema(t), 1) // no inbox table there
	hb := pginbox.Handler(broken, webhooktest.NewVerifier(t), pginbox.WithMetrics(m))
	require.Equal(t, http.StatusInternalServerError, webhooktest.Deliveries(1)[0].Send(hb))
	assert.Equal(t, 1.0, outcomes(t, m)["store_failed"])
}

func TestMetricsCountTheWorkersRuns(t *testing.T) {
	pool := newPool(t, newSchema(t), 4)
	m := pginbox.NewMetrics(pool)
	deliveries := webhooktest.Deliveries(5)
	store(t, pool, deliveries...)
	flaky, hopeless := deliveries[3].ID, deliveries[4].ID
	var failedOnce atomic.Bool
	entered, release := make(chan struct{}, 100), make(chan struct{})
	start(t, &pginbox.Worker{Pool: pool, Metrics: m, Concurrency: 2, PollInterval: 10 * time.Millisecond,
		MaxAttempts: 2, Backoff: func(int) time.Duration { return time.Millisecond },
		Process: func(_ context.Context, d *webhooks.Delivery) error {
			entered <- struct{}{}
			<-release
			switch {
			case d.ID == hopeless:
				return errors.New("never")
			case d.ID == flaky && failedOnce.CompareAndSwap(false, true):
				return errors.New("not yet")
			}
			return nil
		}})
	<-entered
	<-entered
	in := gather(t, m)
	assert.Equal(t, 2.0, byLabel(in["invoicing_pginbox_deliveries_in_flight"])[""], "two callbacks run")
	assert.Equal(t, 5.0, byLabel(in["invoicing_pginbox_pending_deliveries"])["due"], "claimed, still pending")
	close(release)

	waitFor(t, pool, pginbox.StatusProcessed, 4)
	waitFor(t, pool, pginbox.StatusFailed, 1)
	require.Eventually(t, func() bool { return outcomes(t, m)["failed"] == 1 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, map[string]float64{"processed": 4, "retried": 2, "failed": 1}, outcomes(t, m),
		"the flaky delivery retried once, the hopeless one retried then parked")
	after := gather(t, m)
	assert.Equal(t, 0.0, byLabel(after["invoicing_pginbox_deliveries_in_flight"])[""])
	assert.Equal(t, map[string]float64{"due": 0, "waiting": 0}, byLabel(after["invoicing_pginbox_pending_deliveries"]))
	assert.Equal(t, 0.0, byLabel(after["invoicing_pginbox_oldest_pending_age_seconds"])[""], "none pending")
	assert.Equal(t, 0.0, byLabel(after["invoicing_pginbox_worker_database_errors_total"])[""])
}

// The pending figures come from the table: every replica's Metrics
// reports the whole inbox, its due and waiting deliveries and the age of
// the oldest, on the database's clock.
func TestMetricsReadTheInboxDepth(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	pool := newPool(t, schema, 2)
	deliveries := webhooktest.Deliveries(6)
	store(t, pool, deliveries...)
	_, err := pool.Exec(ctx, `UPDATE invoicing_webhook_inbox SET next_attempt_at = now() + interval '1 hour', failures = 1
		WHERE delivery_id = ANY($1)`, []string{deliveries[0].ID, deliveries[1].ID})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE invoicing_webhook_inbox SET received_at = now() - interval '90 seconds' WHERE delivery_id = $1`, deliveries[2].ID)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE invoicing_webhook_inbox SET status = 'processed', received_at = now() - interval '1 day' WHERE delivery_id = $1`, deliveries[3].ID)
	require.NoError(t, err)

	replicas := []*pginbox.Metrics{pginbox.NewMetrics(pool), pginbox.NewMetrics(newPool(t, schema, 1))}
	for _, m := range replicas {
		mfs := gather(t, m)
		assert.Equal(t, map[string]float64{"due": 3, "waiting": 2}, byLabel(mfs["invoicing_pginbox_pending_deliveries"]))
		age := byLabel(mfs["invoicing_pginbox_oldest_pending_age_seconds"])[""]
		assert.GreaterOrEqual(t, age, 90.0, "the oldest pending delivery, not the older processed one")
		assert.Less(t, age, 90.0+60, "the oldest pending delivery, not the older processed one")
		assert.Equal(t, 0.0, byLabel(mfs["invoicing_pginbox_inbox_query_errors_total"])[""])
	}
}

// A scrape while PostgreSQL hangs answers within ScrapeTimeout, with the
// counters and without the pending figures, and counts a query error.
func TestMetricsScrapeWhilePostgresHangs(t *testing.T) {
	pool := newPool(t, newSchema(t), 1)
	m := pginbox.NewMetrics(pool)
	h := pginbox.Handler(pool, webhooktest.NewVerifier(t), pginbox.WithMetrics(m))
	require.Equal(t, http.StatusOK, webhooktest.Deliveries(1)[0].Send(h))
	require.Contains(t, gather(t, m), "invoicing_pginbox_pending_deliveries")

	t.Cleanup(func() { assert.NoError(t, server.Resume()) }) // also if the test fails
	require.NoError(t, server.Pause())
	began := time.Now()
	mfs := gather(t, m)
	took := time.Since(began)
	require.NoError(t, server.Resume())

	assert.GreaterOrEqual(t, took, pginbox.ScrapeTimeout, "it waited for the database")
	assert.Less(t, took, pginbox.ScrapeTimeout+5*time.Second, "and no longer than the timeout")
	assert.NotContains(t, mfs, "invoicing_pginbox_pending_deliveries")
	assert.NotContains(t, mfs, "invoicing_pginbox_oldest_pending_age_seconds")
	assert.Equal(t, 1.0, byLabel(mfs["invoicing_pginbox_inbox_query_errors_total"])[""])
	assert.Equal(t, 1.0, byLabel(mfs["invoicing_pginbox_deliveries_total"])["stored"], "the counters are there")

	require.Eventually(t, func() bool { // the pool's connection was cut by the timeout; a new one works
		_, ok := gather(t, m)["invoicing_pginbox_pending_deliveries"]
		return ok
	}, 30*time.Second, 10*time.Millisecond)
}

// A Worker whose database fails counts its errors.
func TestMetricsCountTheWorkersDatabaseErrors(t *testing.T) {
	pool := newPool(t, emptySchema(t), 1) // no inbox table: every claim fails
	m := pginbox.NewMetrics(pool)
	start(t, &pginbox.Worker{Pool: pool, Metrics: m, PollInterval: 10 * time.Millisecond,
		Process: func(context.Context, *webhooks.Delivery) error { return nil }})
	require.Eventually(t, func() bool {
		return byLabel(gather(t, m)["invoicing_pginbox_worker_database_errors_total"])[""] >= 2
	}, 30*time.Second, 10*time.Millisecond)
	assert.GreaterOrEqual(t, byLabel(gather(t, m)["invoicing_pginbox_inbox_query_errors_total"])[""], 1.0, "no table to query either")
}
