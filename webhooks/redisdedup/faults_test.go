package redisdedup_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// A replica that dies while processing (its connection to Redis drops, it
// never releases) leaves its claim to the lease: the other replica answers
// 409 until the lease ends, then processes the delivery, once.
func TestReplicaDyingWhileProcessingLeavesClaimToLease(t *testing.T) {
	p := prefix(t)
	const lease = time.Hour // ended by the test below, once it has seen the claim hold
	v := webhooktest.NewVerifier(t)
	d := webhooktest.Deliveries(1)[0]

	dyingClient := redis.NewClient(&redis.Options{Addr: server.Addr})
	dying := webhooks.Handler(v, func(context.Context, *webhooks.Delivery) error {
		dyingClient.Close() // the process dies here: its connection drops
		return errors.New("the replica died")
	}, webhooks.WithDeduper(redisdedup.New(dyingClient, redisdedup.WithKeyPrefix(p), redisdedup.WithLease(lease))))

	var survivorRuns atomic.Int32
	survivor := webhooks.Handler(v, func(context.Context, *webhooks.Delivery) error {
		survivorRuns.Add(1)
		return nil
	}, webhooks.WithDeduper(redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p), redisdedup.WithLease(lease))))

	assert.Equal(t, http.StatusInternalServerError, d.Send(dying))
	assert.Equal(t, http.StatusConflict, d.Send(survivor), "the dead replica's claim holds until its lease ends")
	rdb := newClient(t)
	require.True(t, rdb.PExpire(context.Background(), p+d.ID, time.Millisecond).Val(), "the lease ends")
	require.Eventually(t, func() bool { return rdb.Exists(context.Background(), p+d.ID).Val() == 0 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, http.StatusOK, d.Send(survivor))
	assert.Equal(t, int32(1), survivorRuns.Load(), "processed once, by the survivor")
}

// A request cancelled while its replica processes it (the service timed
// out, or the replica is shutting down) releases the claim at once: the next
// attempt, on another replica, is processed without waiting for the lease.
func TestCancelledRequestReleasesClaim(t *testing.T) {
	c := newCluster(t, nil, 2, func(ctx context.Context, d *webhooks.Delivery) error {
		if entered, ok := ctx.Value(slowKey{}).(chan struct{}); ok {
			close(entered)
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	d := webhooktest.Deliveries(1)[0]
	req, err := d.Request("/webhooks")
	require.NoError(t, err)

	entered := make(chan struct{})
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), slowKey{}, entered))
	answered := make(chan int)
	go func() {
		w := httptest.NewRecorder()
		c.replicas[0].ServeHTTP(w, req.WithContext(ctx))
		answered <- w.Code
	}()
	<-entered
	assert.Equal(t, http.StatusConflict, d.Send(c.replicas[1]))
	cancel()
	assert.Equal(t, http.StatusInternalServerError, <-answered)
	assert.Equal(t, http.StatusOK, d.Send(c.replicas[1]), "the claim was released, not left to its lease")
	assert.Equal(t, 1, c.processed.Count(d.ID))
}

type slowKey struct{}

// Redis stopping in the middle of a run: every request sent after it
// stopped is answered 5xx (so the service retries) and none is answered 2xx
// without having been processed; after Redis is back (with what it
// acknowledged: the test server keeps an append-only file), a copy of each
// delivery acknowledged is not processed again, and the service's retries
// are processed, each delivery once.
func TestRedisGoingAwayMidRunAnswers5xx(t *testing.T) {
	c := newCluster(t, nil, 3, func(context.Context, *webhooks.Delivery) error { return nil })
	sent := webhooktest.Outage{Handlers: c.replicas, Stop: server.Stop, Start: server.Start, Store: "Redis",
		Answered: func(d webhooktest.Delivery, status int) {
			if status == http.StatusOK {
				assert.Equal(t, 1, c.processed.Count(d.ID), "delivery %s acknowledged, then a copy sent: times processed", d.ID)
			} else {
				assert.Zero(t, c.processed.Count(d.ID), "delivery %s processed but answered 500", d.ID)
			}
		}}.Run(t, webhooktest.Deliveries(1000))
	for _, d := range sent {
		assert.Equal(t, 1, c.processed.Count(d.ID), "delivery %s", d.ID)
	}
}
