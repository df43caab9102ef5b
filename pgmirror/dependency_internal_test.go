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

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	d := newDependency("PostgreSQL", slog.New(slog.DiscardHandler))
	ctx := context.Background()
	start := time.Now()
	assert.True(t, d.sleep(ctx, 10*time.Millisecond))
	assert.GreaterOrEqual(t, time.Since(start), 10*time.Millisecond, "up: the whole wait")

	d.failed(ctx, errors.New("refused"))
	woke := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		d.sleep(ctx, time.Minute)
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
	assert.False(t, d.sleep(cancelled, time.Minute), "ctx ended")
}

// The wait doubles from about a second to about 30 seconds, never in step
// across loops.
func TestRetryWaitGrowsToAboutThirtySeconds(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 5: 16 * time.Second, 6: 30 * time.Second, 100: 30 * time.Second} {
		for range 20 {
			got := retryWait(n)
			assert.InDelta(t, float64(want), float64(got), float64(want)/10+1, "after %d failures", n)
		}
	}
	seen := map[time.Duration]bool{}
	for range 20 {
		seen[retryWait(6)] = true
	}
	assert.Greater(t, len(seen), 1, "jittered")
}

func TestUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, connectErr := pgx.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	require.Error(t, connectErr)
	for name, c := range map[string]struct {
		err  error
		want bool
	}{
		"connection refused":  {connectErr, true},
		"shutting down":       {&pgconn.PgError{Code: "57P01"}, true},
		"starting up":         {fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "57P03"}), true},
		"connection failure":  {&pgconn.PgError{Code: "08006"}, true},
		"too many clients":    {&pgconn.PgError{Code: "53300"}, true},
		"a deadline":          {context.DeadlineExceeded, true},
		"a unique violation":  {&pgconn.PgError{Code: "23505"}, false},
		"a wrong password":    {&pgconn.PgError{Code: "28P01"}, false},
		"an undefined table":  {&pgconn.PgError{Code: "42P01"}, false},
		"the caller stopping": {context.Canceled, false},
		"none":                {nil, false},
	} {
		assert.Equal(t, c.want, unreachable(c.err), name)
	}
}

func TestOneLine(t *testing.T) {
	err := errors.New("failed to connect to `user=u database=d`:\n\t127.0.0.1:1 (localhost): refused\n\t[::1]:1 (localhost): refused")
	assert.Equal(t, "failed to connect to `user=u database=d`: 127.0.0.1:1 (localhost): refused [::1]:1 (localhost): refused", oneLine(err))
}

// pginbox logs the database's failures at Error: those go to the
// dependency, with their error; its other records go to the log.
func TestErrorsToRoutesErrorRecords(t *testing.T) {
	var out lockedBuffer
	var got []string
	log := slog.New(&errorsTo{Handler: slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}),
		failed: func(_ context.Context, err error) { got = append(got, err.Error()) }})
	log = log.With("worker", 1)
	log.Error("pginbox: processing the inbox", "error", "connection refused")
	log.Error("no error attribute")
	log.Warn("pginbox: delivery failed", "error", "a callback's")
	log.Info("below the level")
	assert.Equal(t, []string{"connection refused", "no error attribute"}, got)
	lines := out.lines()
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `msg="pginbox: delivery failed" worker=1 error="a callback's"`)
}
