package redisdedup_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// server is the redis-server every test of this package uses; each test
// keeps to keys of its own prefix.
var server *testservers.Redis

func TestMain(m *testing.M) {
	if os.Getenv(replicaEnv) != "" { // this process is a replica started by startReplica
		runReplica()
		return
	}
	var err error
	server, err = testservers.StartRedis()
	webhooktest.Main(m, server, err)
}

// newClient returns a client of the test server, closed with the test: one
// per replica, as separate processes would have.
func newClient(t testing.TB) *redis.Client {
	return clientOf(t, server.Addr)
}

// clientOf returns a client of the Redis at addr (a server or a proxy),
// closed with the test. It dials once per attempt (the default is five
// times, 100ms apart), so that the tests where Redis is down fail their
// requests quickly.
func clientOf(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	return c
}

// newServer starts a redis-server of the test's own, stopped with the test,
// for the tests that stop, kill or restart it. options are more
// redis-server options (see testservers.StartRedis).
func newServer(t testing.TB, options ...string) *testservers.Redis {
	srv, err := testservers.StartRedis(options...)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv
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

// prefix returns a key prefix of the test's own.
func prefix(t testing.TB) string {
	return "test:" + strings.ReplaceAll(t.Name(), "/", ":") + ":" + uuid.NewString()[:8] + ":"
}

// eventuallyClaimsNew waits until d claims id as new: until the claim
// before has run out of lease, say, or the success before been forgotten.
func eventuallyClaimsNew(t *testing.T, d *redisdedup.Deduper, id string) {
	t.Helper()
	require.Eventually(t, func() bool {
		s, err := d.Claim(context.Background(), id)
		return err == nil && s == webhooks.ClaimNew
	}, 5*time.Second, 10*time.Millisecond)
}

// requireClaim claims id with d and checks what the claim says.
func requireClaim(t *testing.T, d *redisdedup.Deduper, id string, want webhooks.ClaimStatus, msgAndArgs ...any) {
	t.Helper()
	s, err := d.Claim(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, want, s, msgAndArgs...)
}

// answer is one request of a load test: what was sent, the status it got
// and how long it took.
type answer struct {
	d      webhooktest.Delivery
	status int
	took   time.Duration
}
