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
// succeeds; Release cannot reach Redis and tries again until Redis is
// back, so "done" is written before the replica answers 200, and a copy
// of the delivery sent afterwards is not processed again.
func TestReleaseRetriesUntilRedisIsBack(t *testing.T) {
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
	replica := webhooks.Handler(v, fn, webhooks.WithDeduper(redisdedup.New(client,
		redisdedup.WithKeyPrefix(p), redisdedup.WithLease(lease), redisdedup.WithReleaseRetry(time.Minute))))
	other := webhooks.Handler(v, fn, webhooks.WithDeduper(redisdedup.New(clientOf(t, srv.Addr),
		redisdedup.WithKeyPrefix(p), redisdedup.WithLease(lease))))

	answered := make(chan int)
	go func() { answered <- d.Send(replica) }()
	<-entered
	require.NoError(t, srv.Kill(), "Redis crashes while the delivery is processed")
	close(proceed)
	<-releases.failed // a release has failed: Redis is down
	require.NoError(t, srv.Start())
	assert.Equal(t, http.StatusOK, <-answered)

	rdb := clientOf(t, srv.Addr)
	assert.True(t, strings.HasPrefix(rdb.Get(context.Background(), p+d.ID).Val(), "done:"), "the success is recorded")
	require.Eventually(t, func() bool { // the claim is no more, whether released or expired
		v, err := rdb.Get(context.Background(), p+d.ID).Result()
		return errors.Is(err, redis.Nil) || err == nil && strings.HasPrefix(v, "done")
	}, 10*lease, 10*time.Millisecond)
	assert.Equal(t, http.StatusOK, d.Send(other), "a copy")
	assert.Equal(t, 1, processed.Count(d.ID), "processed once")
}

// Release makes one try when the release retry is 0, and does not try
// again when Redis answered (here: the claim's lease ran out and another
// replica claimed the delivery).
func TestReleaseTriesAgainOnlyWhileRedisDoesNotAnswer(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	p := prefix(t)

	client := clientOf(t, srv.Addr)
	once := newTries(client, p+"d1")
	d := redisdedup.New(client, redisdedup.WithKeyPrefix(p), redisdedup.WithReleaseRetry(0))
	_, err := d.Claim(ctx, "d1")
	require.NoError(t, err)
	require.NoError(t, srv.Stop())
	assert.Error(t, d.Release(ctx, "d1", true))
	assert.Equal(t, int32(2), once.n.Load(), "the claim, then one release")
	require.NoError(t, srv.Start())

	client = clientOf(t, srv.Addr)
	answered := newTries(client, p+"d2")
	slow := redisdedup.New(client, redisdedup.WithKeyPrefix(p), redisdedup.WithLease(50*time.Millisecond),
		redisdedup.WithReleaseRetry(time.Hour))
	other := redisdedup.New(clientOf(t, srv.Addr), redisdedup.WithKeyPrefix(p))
	_, err = slow.Claim(ctx, "d2")
	require.NoError(t, err)
	eventuallyClaimsNew(t, other, "d2") // slow's lease runs out; other claims
	assert.ErrorIs(t, slow.Release(ctx, "d2", true), redisdedup.ErrLeaseExpired)
	assert.Equal(t, int32(2), answered.n.Load(), "the claim, then one release")
}
