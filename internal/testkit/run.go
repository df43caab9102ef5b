package testkit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Start calls run in a goroutine with a context that stop cancels. stop
// waits for run to return and fails t unless it returned nil; the test's
// cleanup calls it if the test has not, and a second call does nothing.
// Call stop from the test's goroutine.
func Start(t testing.TB, run func(context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(stop)
	return stop
}

// Concurrently calls fn(i) for every i from 0 to n-1, on workers
// goroutines at once (at least one), and returns the error of the lowest i
// that failed; every call is made, whatever fails.
func Concurrently(n, workers int, fn func(i int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Every calls f at once and then every interval, on a goroutine of its
// own, until the returned stop is called or the test ends. stop waits for
// a call under way to return, so what f wrote may be read after it; a
// second call does nothing.
func Every(t testing.TB, interval time.Duration, f func()) (stop func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			f()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(done)
			<-stopped
		})
	}
	t.Cleanup(stop)
	return stop
}
