package redisdedup_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// cluster is a receiver running as replicas that share one Redis under one
// key prefix; each replica has a Redis client and a Deduper of its own, as
// separate processes would. It counts the successful runs of its callback.
type cluster struct {
	replicas  []http.Handler
	processed webhooktest.Counter // delivery id -> successful callback runs
}

// newCluster starts n replicas that verify with v (nil: the tests' secret)
// and whose callback is fn (nil: succeed after a pause of up to 2ms, so that
// claims overlap).
func newCluster(t testing.TB, v *webhooks.Verifier, n int, fn func(ctx context.Context, d *webhooks.Delivery) error, opts ...redisdedup.Option) *cluster {
	if fn == nil {
		fn = func(context.Context, *webhooks.Delivery) error {
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			return nil
		}
	}
	c := &cluster{}
	record := func(ctx context.Context, d *webhooks.Delivery) error {
		if err := fn(ctx, d); err != nil {
			return err
		}
		c.processed.Add(d.ID)
		return nil
	}
	if v == nil {
		v = webhooktest.NewVerifier(t)
	}
	opts = append([]redisdedup.Option{redisdedup.WithKeyPrefix(prefix(t))}, opts...)
	for range n {
		c.replicas = append(c.replicas, webhooks.Handler(v, record, webhooks.WithDeduper(redisdedup.New(newClient(t), opts...))))
	}
	return c
}

// Three replicas receive the same 200 deliveries five times each, 32 at a
// time, in random order: each delivery is processed exactly once.
func TestThreeReplicasProcessEachDeliveryExactlyOnce(t *testing.T) {
	c := newCluster(t, nil, 3, nil)
	deliveries := webhooktest.Deliveries(200)
	attempts := webhooktest.Attempts(deliveries, 5)

	statuses, conflicts := webhooktest.Storm{Handlers: c.replicas, Concurrency: 32, RetryConflicts: true}.Run(attempts)
	t.Logf("%d attempts, %d answered 409 (in flight elsewhere) and sent again", len(attempts), conflicts)

	for i, s := range statuses {
		require.Equal(t, http.StatusOK, s, "attempt %d of %s", i, attempts[i].ID)
	}
	require.Equal(t, len(deliveries), c.processed.Len(), "deliveries processed")
	for _, d := range deliveries {
		assert.Equal(t, 1, c.processed.Count(d.ID), "delivery %s", d.ID)
	}
}
