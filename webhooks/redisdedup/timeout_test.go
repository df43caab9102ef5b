package redisdedup_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// hangingReplicas starts a Redis server of the test's own (to freeze) and
// returns it, a Deduper with the timeout shortTimeout and another replica's
// with the default timeout.
func hangingReplicas(t *testing.T) (srv *testservers.Redis, d, other *redisdedup.Deduper) {
	srv = newServer(t)
	p := prefix(t)
	d = redisdedup.New(clientOf(t, srv.Addr), redisdedup.WithKeyPrefix(p), redisdedup.WithTimeout(shortTimeout))
	other = redisdedup.New(clientOf(t, srv.Addr), redisdedup.WithKeyPrefix(p))
	return srv, d, other
}

// shortTimeout is the Deduper timeout of the tests below, and lateBy what
// they allow over it.
const (
	shortTimeout = 200 * time.Millisecond
	lateBy       = time.Second
)

// A Claim that a frozen Redis (SIGSTOP) does not answer fails with
// ErrTimeout after the timeout; while the claim may still be made, this
// Deduper answers Claims of the id itself (in flight), and once Redis is
// back it ends the claim Redis made late, so that the service's retry is
// processed at once rather than after the lease.
func TestClaimTimesOutWhileRedisHangs(t *testing.T) {
	ctx := context.Background()
	srv, d, other := hangingReplicas(t)
	requireClaim(t, d, "warm-up", webhooks.ClaimNew) // a connection is open

	require.NoError(t, srv.Pause())
	start := time.Now()
	_, err := d.Claim(ctx, "d1")
	took := time.Since(start)
	require.ErrorIs(t, err, redisdedup.ErrTimeout)
	assert.ErrorContains(t, err, "claiming delivery d1")
	assert.GreaterOrEqual(t, took, shortTimeout)
	assert.Less(t, took, shortTimeout+lateBy)

	start = time.Now()
	requireClaim(t, d, "d1", webhooks.ClaimInFlight, "answered without Redis")
	assert.Less(t, time.Since(start), lateBy)
	require.NoError(t, srv.Resume())

	require.NoError(t, d.Flush(ctx))
	requireClaim(t, other, "d1", webhooks.ClaimNew, "the claim made late was ended")
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(d.Collector()))
	assert.Equal(t, 1.0, counterValue(t, reg, "invoicing_redisdedup_release_retries_total"), "ended by a background try")
	assert.Equal(t, 1.0, counterValue(t, reg, "invoicing_redisdedup_redis_errors_total", "command", "claim", "kind", "timeout"))
}

// A Release that a frozen Redis does not answer returns ErrReleasePending
// after the timeout and goes on in the background; meanwhile this Deduper
// answers Claims of the id itself (a duplicate after a success, in flight
// after a failure), and once Redis is back the releases are recorded.
func TestReleaseTimesOutWhileRedisHangs(t *testing.T) {
	ctx := context.Background()
	srv, d, other := hangingReplicas(t)
	requireClaim(t, d, "done", webhooks.ClaimNew)
	requireClaim(t, d, "failed", webhooks.ClaimNew)

	require.NoError(t, srv.Pause())
	for id, processed := range map[string]bool{"done": true, "failed": false} {
		start := time.Now()
		err := d.Release(ctx, id, processed)
		took := time.Since(start)
		require.ErrorIs(t, err, redisdedup.ErrReleasePending, id)
		assert.ErrorIs(t, err, redisdedup.ErrTimeout, id)
		assert.Less(t, took, shortTimeout+lateBy, id)
		assert.ErrorIs(t, d.Release(ctx, id, processed), redisdedup.ErrNotClaimed, "released once")
	}
	start := time.Now()
	requireClaim(t, d, "done", webhooks.ClaimDuplicate, "answered without Redis")
	requireClaim(t, d, "failed", webhooks.ClaimInFlight, "answered without Redis")
	assert.Less(t, time.Since(start), lateBy)
	require.NoError(t, srv.Resume())

	require.NoError(t, d.Flush(ctx))
	requireClaim(t, other, "done", webhooks.ClaimDuplicate, "the success is recorded")
	requireClaim(t, other, "failed", webhooks.ClaimNew, "the failure is released")
}

// A Claim whose context ends first returns the context's error at once.
func TestClaimStopsWaitingWhenItsContextEnds(t *testing.T) {
	srv := newServer(t)
	d := redisdedup.New(clientOf(t, srv.Addr), redisdedup.WithKeyPrefix(prefix(t)))
	requireClaim(t, d, "warm-up", webhooks.ClaimNew)
	require.NoError(t, srv.Pause())
	t.Cleanup(func() { _ = srv.Resume() })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := d.Claim(ctx, "d1")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, redisdedup.ErrTimeout)
}
