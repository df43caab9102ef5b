package redisdedup_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
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

// replicas returns Dedupers of the prefix p, each with a Redis client of
// its own, as replicas: slow, whose claims have a 50 ms lease, and then n
// others with the default lease.
func replicas(t *testing.T, p string, n int) (slow *redisdedup.Deduper, others []*redisdedup.Deduper) {
	slow = redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p), redisdedup.WithLease(50*time.Millisecond))
	for range n {
		others = append(others, redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p)))
	}
	return slow, others
}

// requireClaim claims id with d and checks what the claim says.
func requireClaim(t *testing.T, d *redisdedup.Deduper, id string, want webhooks.ClaimStatus, msgAndArgs ...any) {
	t.Helper()
	s, err := d.Claim(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, want, s, msgAndArgs...)
}

// answer is one request of a load test: what was sent and when, the status
// it got and how long it took.
type answer struct {
	d      webhooktest.Delivery
	sent   time.Time
	status int
	took   time.Duration
}

// load is the service sending new deliveries from several goroutines, each
// sending its next one once the last is answered, until end.
type load struct {
	mu   sync.Mutex
	all  []answer
	stop chan struct{}
	wg   sync.WaitGroup
}

// startLoad starts senders goroutines sending new deliveries with send,
// which returns the status of the answer (0 for none).
func startLoad(senders int, send func(webhooktest.Delivery) int) *load {
	l := &load{stop: make(chan struct{})}
	for range senders {
		l.wg.Go(func() {
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				d := webhooktest.Deliveries(1)[0]
				sent := time.Now()
				status := send(d)
				l.mu.Lock()
				l.all = append(l.all, answer{d: d, sent: sent, status: status, took: time.Since(sent)})
				l.mu.Unlock()
			}
		})
	}
	return l
}

// waitAnswered waits until n requests sent after since were answered 200:
// the deliveries are being processed.
func (l *load) waitAnswered(t *testing.T, since time.Time, n int, what string) {
	t.Helper()
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		ok := 0
		for _, a := range l.all {
			if a.status == http.StatusOK && !a.sent.Before(since) {
				ok++
			}
		}
		return ok >= n
	}, 30*time.Second, 10*time.Millisecond, what)
}

// through runs the load through a fault of Redis: it waits until the
// deliveries are being processed, calls down (a SIGKILL, a SIGSTOP), waits
// for the fault's length, calls up, and waits until new deliveries are
// processed again. It returns when the fault began and ended.
func (l *load) through(t *testing.T, senders int, down func() error, length time.Duration, up func() error) (began, ended time.Time) {
	t.Helper()
	l.waitAnswered(t, time.Time{}, 4*senders, "deliveries are processed")
	require.NoError(t, down())
	began = time.Now()
	time.Sleep(length) // the fault's length is what the tests are about: no state stands for it
	ended = time.Now()
	require.NoError(t, up())
	l.waitAnswered(t, time.Now(), senders, "deliveries are processed again once Redis is back")
	return began, ended
}

// end stops the senders and returns every answer, in the order they came.
func (l *load) end() []answer {
	close(l.stop)
	l.wg.Wait()
	return l.all
}

// sentBetween returns the answers to the requests sent from start to end.
func sentBetween(all []answer, start, end time.Time) []answer {
	var out []answer
	for _, a := range all {
		if !a.sent.Before(start) && a.sent.Before(end) {
			out = append(out, a)
		}
	}
	return out
}

// resend sends a delivery again with send every 10 ms, as the service
// retries (the pause paces the retries: it waits for no state), until it is
// answered 200 or deadline passes; it returns the last status.
func resend(send func() int, deadline time.Time) int {
	status := send()
	for status != http.StatusOK && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		status = send()
	}
	return status
}

// claimsHeld counts the keys under prefix that hold a claim (a key whose
// value does not start with "done"): a delivery claimed and not released.
func claimsHeld(rdb *redis.Client, prefix string) (int, error) {
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil {
		return 0, err
	}
	held := 0
	for _, k := range keys {
		if v, err := rdb.Get(ctx, k).Result(); err == nil && !strings.HasPrefix(v, "done") {
			held++
		}
	}
	return held, nil
}
