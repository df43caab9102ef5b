package redisdedup

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// batches is a go-redis hook that records how many commands each single
// command or pipeline the client sent held, counting only the commands
// naming a key under prefix (not those go-redis sends on a new connection).
type batches struct {
	prefix string
	mu     sync.Mutex
	sizes  []int
}

func (h *batches) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *batches) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.record(cmd)
		return next(ctx, cmd)
	}
}

func (h *batches) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.record(cmds...)
		return next(ctx, cmds)
	}
}

func (h *batches) record(cmds ...redis.Cmder) {
	n := 0
	for _, cmd := range cmds {
		if strings.Contains(fmt.Sprint(cmd.Args()...), h.prefix) {
			n++
		}
	}
	if n > 0 {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.sizes = append(h.sizes, n)
	}
}

// queued returns how many commands wait in d's pipeline.
func (d *Deduper) queued() int {
	d.pipe.mu.Lock()
	defer d.pipe.mu.Unlock()
	return len(d.pipe.queue)
}

// waitQueued waits until n commands wait in d's pipeline.
func waitQueued(t *testing.T, d *Deduper, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return d.queued() == n }, 10*time.Second, time.Millisecond, "%d commands queued", n)
}

// While a command is in flight (Redis is paused, SIGSTOP), the claims that
// arrive wait and then go to Redis as one pipeline; a claim whose context
// ended while it waited is not sent.
func TestConcurrentCommandsShareOnePipeline(t *testing.T) {
	srv, err := testservers.StartRedis()
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: -1}) // waits for Redis however long it is paused
	t.Cleanup(func() { client.Close() })
	prefix := fmt.Sprintf("test:pipeline:%d:", time.Now().UnixNano())
	sent := &batches{prefix: prefix}
	client.AddHook(sent)
	d := New(client, WithKeyPrefix(prefix), WithTimeout(time.Minute)) // waits for Redis however long it is paused
	ctx := context.Background()

	require.NoError(t, srv.Pause())
	type result struct {
		id     string
		status webhooks.ClaimStatus
		err    error
	}
	results := make(chan result)
	claim := func(ctx context.Context, id string) {
		s, err := d.Claim(ctx, id)
		results <- result{id, s, err}
	}
	go claim(ctx, "first") // sent alone; Redis answers once resumed
	waitQueued(t, d, 0)
	require.Eventually(t, func() bool { d.pipe.mu.Lock(); defer d.pipe.mu.Unlock(); return d.pipe.busy }, 10*time.Second, time.Millisecond)
	for i := range 10 {
		go claim(ctx, fmt.Sprint("d", i))
	}
	waitQueued(t, d, 10)
	cancelled, cancel := context.WithCancel(ctx)
	go claim(cancelled, "cancelled")
	waitQueued(t, d, 11)
	cancel()
	require.NoError(t, srv.Resume())

	for range 12 {
		r := <-results
		if r.id == "cancelled" {
			assert.ErrorIs(t, r.err, context.Canceled)
			continue
		}
		require.NoError(t, r.err, r.id)
		assert.Equal(t, webhooks.ClaimNew, r.status, r.id)
	}
	assert.Equal(t, []int{1, 10}, sent.sizes, "the first claim alone, then the others in one pipeline")
	s, err := New(client, WithKeyPrefix(d.prefix)).Claim(ctx, "cancelled")
	require.NoError(t, err)
	assert.Equal(t, webhooks.ClaimNew, s, "the cancelled claim was not sent")
}
