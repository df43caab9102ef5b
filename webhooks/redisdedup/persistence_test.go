package redisdedup_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

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
			p := prefix(t)
			v := webhooktest.NewVerifier(t)
			var processed webhooktest.Counter
			var replicas []http.Handler
			for range 3 {
				replicas = append(replicas, webhooks.Handler(v, func(_ context.Context, d *webhooks.Delivery) error {
					processed.Add(d.ID)
					return nil
				}, webhooks.WithDeduper(redisdedup.New(clientOf(t, srv.Addr), redisdedup.WithKeyPrefix(p)))))
			}
			deliveries := webhooktest.Deliveries(200)
			statuses, _ := webhooktest.Storm{Handlers: replicas, Concurrency: 8}.Run(deliveries)
			for i, s := range statuses {
				require.Equal(t, http.StatusOK, s, "delivery %s", deliveries[i].ID)
			}

			require.NoError(t, srv.Kill())
			require.NoError(t, srv.Start())

			reprocessed := 0
			for i, d := range deliveries {
				require.Eventually(t, func() bool { return d.Send(replicas[(i+1)%3]) == http.StatusOK },
					10*time.Second, 10*time.Millisecond, "a copy of delivery %s", d.ID) // the clients reconnect
				if processed.Count(d.ID) > 1 {
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
