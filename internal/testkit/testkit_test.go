package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testkit"
)

func TestBufferTakesConcurrentWritesWhole(t *testing.T) {
	var b testkit.Buffer
	assert.Nil(t, b.Lines(), "nothing written")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(&b, "goroutine %d line %d\n", g, i)
			}
		})
	}
	wg.Wait()
	lines := b.Lines()
	require.Len(t, lines, 800)
	for _, l := range lines {
		assert.Regexp(t, `^goroutine \d line \d+$`, l)
	}
	assert.Equal(t, 100, testkit.Count(lines, "goroutine 3 "))
	assert.Equal(t, strings.Join(lines, "\n")+"\n", b.String())

	_, err := b.Write([]byte("half a line"))
	require.NoError(t, err)
	assert.Equal(t, "half a line", b.Lines()[800], "a line still being written is included")
}

func TestCollectReturnsEveryValue(t *testing.T) {
	seq := func(yield func(int, error) bool) {
		for i := range 5 {
			if !yield(i, nil) {
				return
			}
		}
	}
	assert.Equal(t, []int{0, 1, 2, 3, 4}, testkit.Collect(t, seq))
	assert.Nil(t, testkit.Collect(t, func(func(int, error) bool) {}))
}

func TestCollectFailsAtTheFirstError(t *testing.T) {
	var yielded []int
	seq := iter.Seq2[int, error](func(yield func(int, error) bool) {
		for i, err := range []error{nil, nil, errors.New("page 2 failed"), nil} {
			yielded = append(yielded, i)
			if !yield(i, err) {
				return
			}
		}
	})
	r := failing(t, func(tb testing.TB) { testkit.Collect(tb, seq) })
	assert.True(t, r.stopped, "FailNow")
	assert.Contains(t, r.messages(), "page 2 failed")
	assert.Equal(t, []int{0, 1, 2}, yielded)
}

func TestStartStopsTheLoopOnce(t *testing.T) {
	var runs, returned atomic.Int32
	stop := testkit.Start(t, func(ctx context.Context) error {
		runs.Add(1)
		<-ctx.Done()
		returned.Add(1)
		return nil
	})
	assert.Zero(t, returned.Load(), "running until stopped")
	stop()
	assert.Equal(t, int32(1), returned.Load(), "stop waits for the loop")
	stop()
	assert.Equal(t, int32(1), runs.Load())
}

func TestStartFailsWhenTheLoopReturnsAnError(t *testing.T) {
	r := failing(t, func(tb testing.TB) {
		stop := testkit.Start(tb, func(ctx context.Context) error {
			<-ctx.Done()
			return errors.New("closed badly")
		})
		stop()
	})
	assert.True(t, r.stopped)
	assert.Contains(t, r.messages(), "closed badly")
}

func TestConcurrentlyCallsEachOnceWithAtMostWorkers(t *testing.T) {
	const n, workers = 200, 4
	var calls [n]atomic.Int32
	var now, peak atomic.Int32
	err := testkit.Concurrently(n, workers, func(i int) error {
		cur := now.Add(1)
		defer now.Add(-1)
		for p := peak.Load(); cur > p && !peak.CompareAndSwap(p, cur); p = peak.Load() {
		}
		runtime.Gosched()
		calls[i].Add(1)
		if i == 150 || i == 90 {
			return fmt.Errorf("call %d failed", i)
		}
		return nil
	})
	require.EqualError(t, err, "call 90 failed", "the lowest i that failed")
	for i := range calls {
		assert.Equal(t, int32(1), calls[i].Load(), "call %d", i)
	}
	assert.LessOrEqual(t, peak.Load(), int32(workers))

	assert.NoError(t, testkit.Concurrently(0, 3, func(int) error { return errors.New("never called") }))
	var one atomic.Int32
	assert.NoError(t, testkit.Concurrently(3, 0, func(int) error { one.Add(1); return nil }), "no workers asked: one")
	assert.Equal(t, int32(3), one.Load())
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs    testkit.Buffer
	stopped bool // FailNow was called
}

func (r *recorder) Errorf(format string, args ...any) { fmt.Fprintf(&r.errs, format+"\n", args...) }

func (r *recorder) FailNow() {
	r.stopped = true
	runtime.Goexit()
}

func (r *recorder) messages() string { return r.errs.String() }

// failing runs f in a goroutine of its own with a recorder, and returns the
// recorder once f has returned or failed (the goroutine's writes are then
// seen: it ended before).
func failing(t *testing.T, f func(testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestEveryCallsUntilStopped(t *testing.T) {
	var calls int // written by Every's goroutine only until stop returns
	seen := make(chan struct{}, 1)
	stop := testkit.Every(t, time.Millisecond, func() {
		calls++
		if calls == 3 {
			seen <- struct{}{}
		}
	})
	<-seen
	stop()
	n := calls
	assert.GreaterOrEqual(t, n, 3)
	stop() // a second stop returns at once
	assert.Equal(t, n, calls, "the goroutine ended with the first stop")
}
