package redisdedup_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
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
	endLease(t, rdb, p+d.ID)
	assert.Equal(t, http.StatusOK, d.Send(survivor))
	assert.Equal(t, int32(1), survivorRuns.Load(), "processed once, by the survivor")
}

// The window no deduper closes: a replica process killed (SIGKILL) after
// the callback's effect and before Release. Its claim holds until the lease
// ends (other replicas answer 409), and the service's next retry after that
// is processed again, so the effect happens twice. The package
// documentation says so, and what to do about it.
func TestReplicaKilledBetweenEffectAndReleaseLeavesTheEffectDoneTwice(t *testing.T) {
	p := prefix(t)
	const lease = time.Hour // ended by the test below, once it has seen the claim hold
	dying := startReplica(t, server.Addr, p, lease, "")
	rdb := newClient(t)
	survivor := webhooks.Handler(webhooktest.NewVerifier(t), func(ctx context.Context, d *webhooks.Delivery) error {
		return rdb.RPush(ctx, p+"effects", d.ID).Err()
	}, webhooks.WithDeduper(redisdedup.New(rdb, redisdedup.WithKeyPrefix(p), redisdedup.WithLease(lease))))
	d := webhooktest.Deliveries(1)[0]

	req, err := d.Request(dying.url)
	require.NoError(t, err)
	sent := make(chan error, 1)
	go func() { // the service's first attempt; it gets no answer
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			err = fmt.Errorf("answered %d", resp.StatusCode)
		}
		sent <- err
	}()
	id, ok := dying.waitFor("processing ")
	require.True(t, ok)
	require.Equal(t, d.ID, id)
	require.NoError(t, dying.cmd.Process.Signal(syscall.SIGKILL))
	assert.Error(t, <-sent, "the killed replica never answers")

	assert.Equal(t, http.StatusConflict, d.Send(survivor), "the dead replica's claim holds until its lease ends")
	endLease(t, rdb, p+d.ID)
	assert.Equal(t, http.StatusOK, d.Send(survivor), "the service's retry, once the lease has ended")
	assert.Equal(t, []string{d.ID, d.ID}, rdb.LRange(context.Background(), p+"effects", 0, -1).Val(),
		"the effect was done by the killed replica, and again by the survivor")
	assert.Equal(t, http.StatusOK, d.Send(survivor))
	assert.Len(t, rdb.LRange(context.Background(), p+"effects", 0, -1).Val(), 2, "and not a third time")
}

// endLease ends the lease of the claim held in key now, as if it had run
// out, and waits until Redis has removed the key.
func endLease(t *testing.T, rdb *redis.Client, key string) {
	t.Helper()
	require.True(t, rdb.PExpire(context.Background(), key, time.Millisecond).Val(), "the lease ends")
	require.Eventually(t, func() bool { return rdb.Exists(context.Background(), key).Val() == 0 }, 10*time.Second, time.Millisecond)
}

// A request cancelled while its replica processes it (the service timed
// out, or the replica is shutting down) releases the claim at once: the next
// attempt, on another replica, is processed without waiting for the lease.
func TestCancelledRequestReleasesClaim(t *testing.T) {
	c := newCluster(t, server.Addr, nil, 2, func(ctx context.Context, d *webhooks.Delivery) error {
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

// The reply to a replica's claim is lost on the network after Redis made
// the claim: go-redis sends the command again on a new connection, and
// Redis answers with the replica's own token. That is the replica's claim:
// it processes the delivery (rather than answering 409 until the lease
// ends, past the service's 1-minute retry), once.
func TestClaimWhoseReplyWasLostIsOwnClaim(t *testing.T) {
	proxy := newProxy(t, server.Addr)
	p := prefix(t)
	var processed webhooktest.Counter
	replica := webhooks.Handler(webhooktest.NewVerifier(t), func(_ context.Context, d *webhooks.Delivery) error {
		processed.Add(d.ID)
		return nil
	}, webhooks.WithDeduper(redisdedup.New(clientOf(t, proxy.Addr), redisdedup.WithKeyPrefix(p))))
	d := webhooktest.Deliveries(1)[0]

	dropped := proxy.DropReply(mentions(p + d.ID)) // the claim, the first command naming the key
	start := time.Now()
	assert.Equal(t, http.StatusOK, d.Send(replica), "the claim Redis made for the replica is the replica's")
	requireClosed(t, dropped, "the loss of the claim's reply")
	assert.Less(t, time.Since(start), 2*redisdedup.DefaultTimeout, "answered within the bound")
	assert.Equal(t, 1, processed.Count(d.ID))

	assert.Equal(t, http.StatusOK, d.Send(replica), "the service's retry")
	assert.Equal(t, 1, processed.Count(d.ID), "processed once")
}

// The reply to a Release is lost after Redis ended the claim: go-redis
// runs the release again, which finds the claim already ended by this
// replica. That is a success, not ErrLeaseExpired ("may have been
// processed twice"); a success stays remembered.
func TestReleaseWhoseReplyWasLostSucceeds(t *testing.T) {
	for name, processed := range map[string]bool{"processed": true, "failed": false} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			proxy := newProxy(t, server.Addr)
			p := prefix(t)
			d := redisdedup.New(clientOf(t, proxy.Addr), redisdedup.WithKeyPrefix(p))
			other := redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p))

			for _, id := range []string{"warm-up", "d1"} { // a first release loads any script it runs into Redis
				requireClaim(t, d, id, webhooks.ClaimNew)
			}
			require.NoError(t, d.Release(ctx, "warm-up", processed))
			dropped := proxy.DropReply(mentions(p + "d1"))
			require.NoError(t, d.Release(ctx, "d1", processed))
			requireClosed(t, dropped, "the loss of the release's reply")

			want := map[bool]webhooks.ClaimStatus{true: webhooks.ClaimDuplicate, false: webhooks.ClaimNew}[processed]
			s, err := other.Claim(ctx, "d1")
			require.NoError(t, err)
			assert.Equal(t, want, s)
		})
	}
}

// newProxy starts a proxy to the Redis at addr, closed with the test, for
// the tests of lost replies.
func newProxy(t testing.TB, addr string) *testservers.Proxy {
	p, err := testservers.StartProxy(addr)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// mentions returns a match for testservers.Proxy.DropReply: the requests
// that name key.
func mentions(key string) func(request []byte) bool {
	return func(request []byte) bool { return bytes.Contains(request, []byte(key)) }
}

// requireClosed fails t unless ch is closed: what the test waited for has
// happened.
func requireClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatalf("%s did not happen", what)
	}
}
