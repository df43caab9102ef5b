package redisdedup_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// The Collector counts what a Handler's deliveries became, and the claims
// held now, through a registry that checks its descriptions (pedantic), and
// its metrics pass the Prometheus linter.
func TestCollectorCountsDeliveriesByOutcome(t *testing.T) {
	p := prefix(t)
	dedupe := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p))
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(dedupe.Collector()))

	ds := webhooktest.Deliveries(4) // processed, claimed elsewhere, failed, slow
	entered, proceed := make(chan struct{}), make(chan struct{})
	fn := func(_ context.Context, d *webhooks.Delivery) error {
		switch d.ID {
		case ds[2].ID:
			return errors.New("downstream system unavailable")
		case ds[3].ID:
			close(entered)
			<-proceed
		}
		return nil
	}
	h := webhooks.Handler(webhooktest.NewVerifier(t), fn, webhooks.WithDeduper(dedupe))
	other := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p))

	assert.Equal(t, http.StatusOK, ds[0].Send(h))
	assert.Equal(t, http.StatusOK, ds[0].Send(h), "a copy")
	requireClaim(t, other, ds[1].ID, webhooks.ClaimNew)
	assert.Equal(t, http.StatusConflict, ds[1].Send(h), "claimed by another replica")
	assert.Equal(t, http.StatusInternalServerError, ds[2].Send(h))
	answered := make(chan int)
	go func() { answered <- ds[3].Send(h) }()
	<-entered

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP invoicing_redisdedup_claims_in_flight Claims the Deduper holds now: deliveries being processed.
# TYPE invoicing_redisdedup_claims_in_flight gauge
invoicing_redisdedup_claims_in_flight 1
`), "invoicing_redisdedup_claims_in_flight"))
	close(proceed)
	assert.Equal(t, http.StatusOK, <-answered)

	assert.Equal(t, 0.0, counterValue(t, reg, "invoicing_redisdedup_claims_in_flight"))
	for outcome, want := range map[string]float64{"processed": 2, "failed": 1, "duplicate": 1, "in_flight": 1, "unavailable": 0} {
		assert.Equal(t, want, counterValue(t, reg, "invoicing_redisdedup_deliveries_total", "outcome", outcome), outcome)
	}
	assert.Equal(t, 3.0, counterValue(t, reg, "invoicing_redisdedup_releases_total", "result", "ok"))
	assert.Equal(t, 0.0, counterValue(t, reg, "invoicing_redisdedup_redis_errors_total", "command", "claim"))
	assert.Equal(t, 0.0, counterValue(t, reg, "invoicing_redisdedup_releases_pending"))

	problems, err := testutil.CollectAndLint(dedupe.Collector())
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, 18, testutil.CollectAndCount(dedupe.Collector()), "a fixed set of series, whatever the deliveries")
}

// With Redis down, a claim fails (unavailable, a Redis error), and the
// release of a delivery claimed before is pending in the background, its
// retries counted, until Redis is back.
func TestCollectorCountsRedisErrorsAndPendingReleases(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	d := redisdedup.New(clientOf(t, srv.Addr), redisdedup.WithKeyPrefix(prefix(t)))
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(d.Collector()))

	requireClaim(t, d, "d1", webhooks.ClaimNew)
	require.NoError(t, srv.Kill())
	_, err := d.Claim(ctx, "d2")
	require.Error(t, err)
	assert.ErrorIs(t, d.Release(ctx, "d1", true), redisdedup.ErrReleasePending)

	assert.Equal(t, 1.0, counterValue(t, reg, "invoicing_redisdedup_deliveries_total", "outcome", "unavailable"))
	assert.Equal(t, 1.0, counterValue(t, reg, "invoicing_redisdedup_redis_errors_total", "command", "claim", "kind", "error"))
	assert.Equal(t, 1.0, counterValue(t, reg, "invoicing_redisdedup_releases_pending"))
	assert.Equal(t, 1.0, counterValue(t, reg, "invoicing_redisdedup_releases_deferred_total"))
	require.Eventually(t, func() bool {
		return counterValue(t, reg, "invoicing_redisdedup_release_retries_total") >= 2 &&
			counterValue(t, reg, "invoicing_redisdedup_release_backoff_seconds") > 0
	}, 10*time.Second, 10*time.Millisecond, "the release is retried in the background")

	require.NoError(t, srv.Start())
	require.NoError(t, d.Flush(ctx))
	assert.Equal(t, 0.0, counterValue(t, reg, "invoicing_redisdedup_releases_pending"))
	assert.Equal(t, 1.0, counterValue(t, reg, "invoicing_redisdedup_releases_total", "result", "ok"))
	assert.Equal(t, 1.0, counterValue(t, reg, "invoicing_redisdedup_deliveries_total", "outcome", "processed"))
	assert.Eventually(t, func() bool { return counterValue(t, reg, "invoicing_redisdedup_release_backoff_seconds") == 0 },
		time.Second, time.Millisecond, "no retries run")
	requireClaim(t, d, "d1", webhooks.ClaimDuplicate)
}

// counterValue returns the value of the series of the metric name whose
// labels include labelPairs (name, value, ...), summed over the series that
// match, from what reg gathers.
func counterValue(t *testing.T, reg prometheus.Gatherer, name string, labelPairs ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labelPairs); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					found = found || l.GetName() == labelPairs[i] && l.GetValue() == labelPairs[i+1]
				}
				if !found {
					continue series
				}
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}
