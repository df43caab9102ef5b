package redisdedup_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// The figures of the freeze test: how long Redis is frozen, and the slack
// allowed over the documented bound for the Handler's own work and the
// scheduling of a busy machine running the race detector.
const (
	freeze      = 20 * time.Second
	boundSlack  = 500 * time.Millisecond
	freezeWork  = 20 * time.Millisecond // the callback's time
	freezeSends = 8                     // requests in flight at a time
)

// Redis freezes (SIGSTOP) for 20 seconds under load, three replicas
// sending their claims and releases to it. Every Handler answer comes within
// the documented bound, twice the timeout plus the callback's time (the
// slack aside): 500 for a claim Redis does not answer in time, 200 for a
// delivery processed while its release waits. Once Redis is back, the
// service's retries are processed, each delivery once, and copies of the
// deliveries acknowledged are not processed again.
func TestHandlerAnswersWithinBoundWhileRedisIsFrozen(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	p := prefix(t)
	v := webhooktest.NewVerifier(t)
	var processed webhooktest.Counter
	fn := func(_ context.Context, d *webhooks.Delivery) error {
		processed.Add(d.ID)
		time.Sleep(freezeWork)
		return nil
	}
	reg := prometheus.NewPedanticRegistry()
	var dedupers []*redisdedup.Deduper
	var replicas []http.Handler
	for i := range 3 {
		d := redisdedup.New(clientOf(t, srv.Addr), redisdedup.WithKeyPrefix(p))
		require.NoError(t, prometheus.WrapRegistererWith(prometheus.Labels{"replica": string(rune('a' + i))}, reg).Register(d.Collector()))
		dedupers = append(dedupers, d)
		replicas = append(replicas, webhooks.Handler(v, fn, webhooks.WithDeduper(d)))
	}

	l := startLoad(freezeSends, func(d webhooktest.Delivery) int { return d.Send(replicas[rand.IntN(len(replicas))]) })
	frozen, thawed := l.through(t, freezeSends, srv.Pause, freeze, srv.Resume)
	all := l.end()
	during := sentBetween(all, frozen, thawed) // the answers to requests sent while Redis was frozen

	bound := 2*redisdedup.DefaultTimeout + freezeWork
	took := make([]time.Duration, len(all))
	statuses := map[int]int{}
	for i, a := range all {
		took[i] = a.took
		assert.LessOrEqual(t, a.took, bound+boundSlack, "delivery %s answered %d", a.d.ID, a.status)
		assert.Contains(t, []int{http.StatusOK, http.StatusConflict, http.StatusInternalServerError}, a.status)
		statuses[a.status]++
	}
	slices.Sort(took)
	frozenStatuses := map[int]int{}
	for _, a := range during {
		frozenStatuses[a.status]++
	}
	t.Logf("%d requests (%d sent while Redis was frozen %v): answers by status %v, while frozen %v; answer time max %v, p99 %v, p50 %v (bound %v)",
		len(all), len(during), freeze, statuses, frozenStatuses, took[len(took)-1].Round(time.Millisecond),
		took[len(took)*99/100].Round(time.Millisecond), took[len(took)/2].Round(time.Millisecond), bound)
	assert.Positive(t, frozenStatuses[http.StatusInternalServerError], "claims Redis did not answer in time")
	assert.GreaterOrEqual(t, len(during), int(freeze/bound)*freezeSends/2, "requests were answered while Redis was frozen")
	assert.Positive(t, counterValue(t, reg, "invoicing_redisdedup_redis_errors_total", "command", "claim", "kind", "timeout"))

	// The service's retries, and a copy of each delivery acknowledged.
	deadline := time.Now().Add(20 * time.Second)
	for _, a := range all {
		status := resend(func() int { return a.d.Send(replicas[rand.IntN(len(replicas))]) }, deadline)
		require.Equal(t, http.StatusOK, status, "delivery %s still answered %d after Redis came back", a.d.ID, status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, d := range dedupers {
		require.NoError(t, d.Flush(ctx))
	}
	twice := 0
	for _, a := range all {
		if n := processed.Count(a.d.ID); n != 1 {
			twice++
			assert.Equal(t, 1, n, "delivery %s: times processed", a.d.ID)
		}
	}
	t.Logf("%d deliveries, %d processed more than once", len(all), twice)
	assert.Zero(t, counterValue(t, reg, "invoicing_redisdedup_releases_pending"))
}
