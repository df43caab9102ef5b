package redisdedup_test

import (
	"bufio"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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

// Redis stopping in the middle of a run: every request sent after it
// stopped is answered 5xx (so the service retries) and none is answered 2xx
// without having been processed; after Redis is back (with what it
// acknowledged: the test server keeps an append-only file), a copy of each
// delivery acknowledged is not processed again, and the service's retries
// are processed, each delivery once.
func TestRedisGoingAwayMidRunAnswers5xx(t *testing.T) {
	c := newCluster(t, server.Addr, nil, 3, func(context.Context, *webhooks.Delivery) error { return nil })
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

// What a restart of Redis (here a crash, SIGKILL) does to the deliveries
// already processed, sent again afterwards: with the append-only file
// fsynced at every write, none is processed again; without persistence,
// every one is. The package documentation says so.
func TestRedisRestartKeepsProcessedDeliveriesOnlyWithPersistence(t *testing.T) {
	for _, tc := range []struct {
		name        string
		options     []string
		reprocessed int
	}{
		{"appendonly yes, appendfsync always", nil, 0},
		{"no persistence", []string{"--appendonly", "no", "--save", ""}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.options...)
			c := newCluster(t, srv.Addr, nil, 3, func(context.Context, *webhooks.Delivery) error { return nil })
			deliveries := webhooktest.Deliveries(200)
			statuses, _ := webhooktest.Storm{Handlers: c.replicas, Concurrency: 8}.Run(deliveries)
			for i, s := range statuses {
				require.Equal(t, http.StatusOK, s, "delivery %s", deliveries[i].ID)
			}

			require.NoError(t, srv.Kill())
			require.NoError(t, srv.Start())

			reprocessed := 0
			for i, d := range deliveries {
				require.Eventually(t, func() bool { return d.Send(c.replicas[(i+1)%3]) == http.StatusOK },
					10*time.Second, 10*time.Millisecond, "a copy of delivery %s", d.ID) // the clients reconnect
				if c.processed.Count(d.ID) > 1 {
					reprocessed++
				}
			}
			assert.Equal(t, tc.reprocessed, reprocessed, "deliveries processed again after the restart")
		})
	}
}

// CheckRedis reports a Redis that keeps nothing across a restart, or that
// may evict keys, and passes one that keeps its writes in an append-only
// file or RDB snapshots and never evicts.
func TestCheckRedis(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options []string
		says    string // "": no error
	}{
		{"append-only file", nil, ""},
		{"RDB snapshots", []string{"--appendonly", "no", "--save", "60 1"}, ""},
		{"no persistence", []string{"--appendonly", "no", "--save", ""}, "keeps nothing across a restart"},
		{"an evicting policy", []string{"--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"}, "maxmemory-policy allkeys-lru"},
		{"a policy that evicts keys with a TTL", []string{"--maxmemory", "100mb", "--maxmemory-policy", "volatile-ttl"}, "evicts keys"},
		{"noeviction", []string{"--maxmemory", "100mb", "--maxmemory-policy", "noeviction"}, ""},
		{"no memory limit", []string{"--maxmemory", "0", "--maxmemory-policy", "allkeys-lru"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.options...)
			err := redisdedup.New(clientOf(t, srv.Addr)).CheckRedis(context.Background())
			if tc.says == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, redisdedup.ErrNotDurable)
			assert.ErrorContains(t, err, tc.says)
		})
	}
}

// CheckRedis says when it cannot tell.
func TestCheckRedisUnreachable(t *testing.T) {
	rdb := newClient(t)
	require.NoError(t, rdb.Close())
	err := redisdedup.New(rdb).CheckRedis(context.Background())
	assert.ErrorContains(t, err, "redisdedup: checking Redis")
	assert.NotErrorIs(t, err, redisdedup.ErrNotDurable)
}

// CheckRedis checks every shard of a Ring, and names the one it reports.
func TestCheckRedisChecksEveryShard(t *testing.T) {
	durable, volatile := newServer(t), newServer(t, "--appendonly", "no", "--save", "")
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": durable.Addr, "b": volatile.Addr}})
	t.Cleanup(func() { ring.Close() })
	err := redisdedup.New(ring).CheckRedis(context.Background())
	assert.ErrorIs(t, err, redisdedup.ErrNotDurable)
	assert.ErrorContains(t, err, volatile.Addr+": ")
	assert.NotContains(t, err.Error(), durable.Addr)
}

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
	c := newCluster(t, srv.Addr, nil, 3, func(context.Context, *webhooks.Delivery) error {
		time.Sleep(freezeWork)
		return nil
	})
	reg := prometheus.NewPedanticRegistry()
	for i, d := range c.dedupers {
		require.NoError(t, prometheus.WrapRegistererWith(prometheus.Labels{"replica": string(rune('a' + i))}, reg).Register(d.Collector()))
	}

	l := startLoad(freezeSends, func(d webhooktest.Delivery) int { return d.Send(c.replicas[rand.IntN(len(c.replicas))]) })
	frozen, thawed := l.through(t, freezeSends, srv.Pause, freeze, srv.Resume)
	all := l.end()
	during := sentBetween(all, frozen, thawed) // the answers to requests sent while Redis was frozen

	bound := 2*redisdedup.DefaultTimeout + freezeWork
	for _, a := range all {
		assert.LessOrEqual(t, a.took, bound+boundSlack, "delivery %s answered %d", a.d.ID, a.status)
		assert.Contains(t, []int{http.StatusOK, http.StatusConflict, http.StatusInternalServerError}, a.status)
	}
	statuses, took := tally(all)
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
		status := resend(func() int { return a.d.Send(c.replicas[rand.IntN(len(c.replicas))]) }, deadline)
		require.Equal(t, http.StatusOK, status, "delivery %s still answered %d after Redis came back", a.d.ID, status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, d := range c.dedupers {
		require.NoError(t, d.Flush(ctx))
	}
	twice := 0
	for _, a := range all {
		if n := c.processed.Count(a.d.ID); n != 1 {
			twice++
			assert.Equal(t, 1, n, "delivery %s: times processed", a.d.ID)
		}
	}
	t.Logf("%d deliveries, %d processed more than once", len(all), twice)
	assert.Zero(t, counterValue(t, reg, "invoicing_redisdedup_releases_pending"))
}

// The figures of the outage test: how long Redis is down, the replicas'
// lease (longer than the outage, as the default lease is: the claims held
// when Redis went down are still in Redis when it comes back), and how many
// requests are in flight at a time.
const (
	outage      = 12 * time.Second
	outageLease = 15 * time.Second
	outageSends = 16
)

// Redis crashes (SIGKILL) under load and stays down for 12 seconds, longer
// than a release used to go on trying, while three replica processes
// release the deliveries they were processing. Each release goes on in the
// background until Redis is back, so once the claims' leases have ended,
// the service's copies of the deliveries acknowledged are not processed
// again and its retries of the others are processed once: no delivery is
// processed twice. The effects are counted from files the replicas append
// to, which Redis going away does not touch.
func TestOutageDuringReleasesProcessesNothingTwice(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	p := prefix(t)
	dir := t.TempDir()
	var urls, effects []string
	for i := range 3 {
		path := filepath.Join(dir, string(rune('a'+i)))
		effects = append(effects, path)
		urls = append(urls, startReplica(t, srv.Addr, p, outageLease, path).url)
	}
	client := &http.Client{Timeout: 30 * time.Second} // as the service waits
	t.Cleanup(client.CloseIdleConnections)
	send := func(d webhooktest.Delivery) int {
		req, err := d.Request(urls[rand.IntN(len(urls))])
		if err != nil {
			t.Error(err)
			return 0
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0 // no answer: the service retries
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	l := startLoad(outageSends, send)
	killed, back := l.through(t, outageSends, srv.Kill, outage, srv.Start) // Redis crashes while deliveries are processed and released
	all := l.end()

	statuses, took := tally(all)
	t.Logf("%d requests, %d sent while Redis was down for %v: answers by status %v; answer time max %v, p99 %v",
		len(all), len(sentBetween(all, killed, back)), outage, statuses, took[len(took)-1].Round(time.Millisecond), took[len(took)*99/100].Round(time.Millisecond))

	// The claims held when Redis went down end with their lease (or their
	// release); then the service sends a copy of each delivery
	// acknowledged, and retries the others until they are.
	rdb := clientOf(t, srv.Addr)
	require.Eventually(t, func() bool {
		n, err := claimsHeld(rdb, p)
		return err == nil && n == 0
	}, outageLease+10*time.Second, 100*time.Millisecond, "the claims held when Redis went down end")
	deadline := time.Now().Add(30 * time.Second)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range outageSends {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(all); i = int(next.Add(1)) - 1 {
				if status := resend(func() int { return send(all[i].d) }, deadline); status != http.StatusOK {
					t.Errorf("delivery %s still answered %d", all[i].d.ID, status)
					return
				}
			}
		})
	}
	wg.Wait()

	processed := map[string]int{}
	for _, path := range effects {
		f, err := os.Open(path)
		require.NoError(t, err)
		lines := bufio.NewScanner(f)
		for lines.Scan() {
			processed[lines.Text()]++
		}
		require.NoError(t, lines.Err())
		f.Close()
	}
	twice := 0
	for _, a := range all {
		switch n := processed[a.d.ID]; {
		case n > 1:
			twice++
		case n == 0:
			t.Errorf("delivery %s acknowledged, never processed", a.d.ID)
		}
	}
	t.Logf("%d deliveries (%d acknowledged before the copies), %d processed more than once", len(all), statuses[http.StatusOK], twice)
	assert.Zero(t, twice, "deliveries processed more than once")
	assert.Positive(t, statuses[http.StatusInternalServerError], "requests failed while Redis was down")
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

// tally returns how many of the answers had each status, and the times
// they took, shortest first.
func tally(all []answer) (statuses map[int]int, took []time.Duration) {
	statuses = map[int]int{}
	for _, a := range all {
		statuses[a.status]++
		took = append(took, a.took)
	}
	slices.Sort(took)
	return statuses, took
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
