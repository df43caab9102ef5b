package pgmirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a log destination safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

// However many loops fail, and however often, an outage is two lines: one
// when it starts, with the first error, and one when it ends.
func TestADependencyLogsItsTransitionsOnly(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	d := newDependency("PostgreSQL", slog.New(slog.NewTextHandler(&out, nil)))
	ctx := context.Background()
	d.ok(ctx) // up from the start: nothing to say
	assert.True(t, d.up())

	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			for j := range 50 {
				d.failed(ctx, fmt.Errorf("failure %d of loop %d", j, i))
			}
		})
	}
	wg.Wait()
	assert.False(t, d.up())
	d.ok(ctx)
	d.ok(ctx)
	assert.True(t, d.up())

	lines := out.lines()
	require.Len(t, lines, 2, "%q", lines)
	assert.Contains(t, lines[0], `level=WARN msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does" error="failure 0 of loop`)
	assert.Contains(t, lines[1], `level=INFO msg="pgmirror: PostgreSQL answers again"`)
	assert.Contains(t, lines[1], "failures=1000")

	d.failed(ctx, errors.New("again"))
	assert.Len(t, out.lines(), 3, "a second outage is logged too")
}

// A loop waiting after a failure wakes up when another finds the
// dependency back, and not before.
func TestASleepEndsWhenTheDependencyIsBack(t *testing.T) {
	t.Parallel()
	d := newDependency("PostgreSQL", slog.New(slog.DiscardHandler))
	ctx := context.Background()
	start := time.Now()
	assert.True(t, d.sleep(ctx, 10*time.Millisecond, nil))
	assert.GreaterOrEqual(t, time.Since(start), 10*time.Millisecond, "up: the whole wait")

	d.failed(ctx, errors.New("refused"))
	woke := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		d.sleep(ctx, time.Minute, nil)
		woke <- time.Since(start)
	}()
	select {
	case <-woke:
		t.Fatal("woke while the dependency is away")
	case <-time.After(50 * time.Millisecond):
	}
	d.ok(ctx)
	assert.Less(t, <-woke, 30*time.Second)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	d.failed(ctx, errors.New("refused again"))
	assert.False(t, d.sleep(cancelled, time.Minute, nil), "ctx ended")
}

// The wait doubles from about a second to its cap, never in step across
// loops, and is at least what a Retry-After asks.
func TestBackoffGrowsToItsCapAndHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 5: 16 * time.Second, 6: 30 * time.Second, 100: 30 * time.Second} {
		for range 20 {
			got := backoff(n, maxBackoff, nil)
			assert.InDelta(t, float64(want), float64(got), float64(want)/10+1, "after %d failures", n)
		}
	}
	assert.InDelta(t, float64(maxRecordBackoff), float64(backoff(100, maxRecordBackoff, nil)), float64(maxRecordBackoff)/10+1)
	seen := map[time.Duration]bool{}
	for range 20 {
		seen[backoff(6, maxBackoff, nil)] = true
	}
	assert.Greater(t, len(seen), 1, "jittered")
	asked := &apiError{kind: apiTransient, retryAfter: time.Minute, err: errors.New("429")}
	assert.Equal(t, time.Minute, backoff(1, maxBackoff, fmt.Errorf("listing: %w", asked)), "Retry-After raises the wait")
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	err := errors.New("failed to connect to `user=u database=d`:\n\t127.0.0.1:1 (localhost): refused\n\t[::1]:1 (localhost): refused")
	assert.Equal(t, "failed to connect to `user=u database=d`: 127.0.0.1:1 (localhost): refused [::1]:1 (localhost): refused", oneLine(err))
}
