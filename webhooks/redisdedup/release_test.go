package redisdedup_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// tries is a go-redis hook that counts the commands naming key that the
// client ran (each after go-redis's own retries), and closes failed when
// the first of them fails. It is added to one client, changing nothing
// global.
type tries struct {
	key    string
	n      atomic.Int32
	once   sync.Once
	failed chan struct{}
}

func newTries(c *redis.Client, key string) *tries {
	h := &tries{key: key, failed: make(chan struct{})}
	c.AddHook(h)
	return h
}

func (h *tries) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h *tries) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.saw(cmd, err)
		return err
	}
}

func (h *tries) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			h.saw(cmd, cmd.Err())
		}
		return err
	}
}

func (h *tries) saw(cmd redis.Cmder, err error) {
	if !strings.Contains(fmt.Sprint(cmd.Args()...), h.key) || redis.HasErrorPrefix(err, "NOSCRIPT") {
		return // go-redis follows an EVALSHA that Redis has no script for with an EVAL, in the same try
	}
	h.n.Add(1)
	if err != nil && !errors.Is(err, redis.Nil) {
		h.once.Do(func() { close(h.failed) })
	}
}

// Redis crashes while a replica processes a delivery. The callback
// succeeds; Release cannot reach Redis, so the Handler answers 200 at once
// and the release goes on in the background until Redis is back: "done" is
// written then, and a copy of the delivery sent afterwards is not processed
// again, although the claim's lease ran out meanwhile. Until then the
// replica answers copies itself.
func TestReleaseGoesOnInTheBackgroundUntilRedisIsBack(t *testing.T) {
	srv := newServer(t) // keeps what it acknowledged, as production must
	p := prefix(t)
	d := webhooktest.Deliveries(1)[0]
	v := webhooktest.NewVerifier(t)
	var processed webhooktest.Counter
	entered, proceed := make(chan struct{}), make(chan struct{})
	fn := func(_ context.Context, dd *webhooks.Delivery) error {
		if processed.Count(dd.ID) == 0 {
			close(entered)
			<-proceed
		}
		processed.Add(dd.ID)
		return nil
	}
	client := clientOf(t, srv.Addr)
	releases := newTries(client, p+d.ID)
	const lease = time.Second
	dedupe := redisdedup.New(client, redisdedup.WithKeyPrefix(p), redisdedup.WithLease(lease))
	replica := webhooks.Handler(v, fn, webhooks.WithDeduper(dedupe))
	other := webhooks.Handler(v, fn, webhooks.WithDeduper(redisdedup.New(clientOf(t, srv.Addr),
		redisdedup.WithKeyPrefix(p), redisdedup.WithLease(lease))))

	answered := make(chan int)
	go func() { answered <- d.Send(replica) }()
	<-entered
	require.NoError(t, srv.Kill(), "Redis crashes while the delivery is processed")
	close(proceed)
	assert.Equal(t, http.StatusOK, <-answered, "answered while Redis is down")
	<-releases.failed
	assert.Equal(t, http.StatusOK, d.Send(replica), "a copy to the same replica, answered without Redis")
	require.Eventually(t, func() bool { return releases.n.Load() >= 4 }, 10*time.Second, time.Millisecond,
		"the release is tried again")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, dedupe.Flush(ctx), context.DeadlineExceeded, "Flush waits while the release is pending")
	time.Sleep(lease) // the claim's lease runs out while Redis is down

	require.NoError(t, srv.Start())
	require.NoError(t, dedupe.Flush(context.Background()))
	rdb := clientOf(t, srv.Addr)
	assert.True(t, strings.HasPrefix(rdb.Get(context.Background(), p+d.ID).Val(), "done:"), "the success is recorded")
	assert.Equal(t, http.StatusOK, d.Send(other), "a copy")
	assert.Equal(t, 1, processed.Count(d.ID), "processed once")
	n := releases.n.Load()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(dedupe.Collector()))
	require.Eventually(t, func() bool { return counterValue(t, reg, "invoicing_redisdedup_release_backoff_seconds") == 0 },
		10*time.Second, time.Millisecond, "the background retries stop")
	assert.Equal(t, n, releases.n.Load(), "no try once recorded")
}

// Release does not try again when Redis answered (here: the claim's lease
// ran out and another replica claimed the delivery).
func TestReleaseTriesAgainOnlyWhileRedisDoesNotAnswer(t *testing.T) {
	ctx := context.Background()
	p := prefix(t)
	client := newClient(t)
	answered := newTries(client, p+"d2")
	slow := redisdedup.New(client, redisdedup.WithKeyPrefix(p), redisdedup.WithLease(50*time.Millisecond))
	other := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p))
	_, err := slow.Claim(ctx, "d2")
	require.NoError(t, err)
	eventuallyClaimsNew(t, other, "d2") // slow's lease runs out; other claims
	assert.ErrorIs(t, slow.Release(ctx, "d2", true), redisdedup.ErrLeaseExpired)
	require.NoError(t, slow.Flush(ctx))
	assert.Equal(t, int32(2), answered.n.Load(), "the claim, then one release")
}
