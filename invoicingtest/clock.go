package invoicingtest

import (
	"sort"
	"sync"
	"time"
)

// Clock is the server's source of time: "today" for date defaults, the
// created_at and updated_at stamps, webhook timestamps and the webhook retry
// schedule. Use a *FakeClock in tests so that retries due in minutes or hours
// run at once when the test advances the clock.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine (system clock) or inside
	// Advance (FakeClock) once d has elapsed on this clock.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call scheduled with Clock.AfterFunc.
type Timer interface {
	// Stop prevents the call from running and reports whether it did so.
	Stop() bool
}

// SystemClock is the wall clock; it is the default Clock of a Server.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc schedules f with time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// FakeClock is a manual Clock for deterministic tests: time stands still until
// Advance moves it, and calls scheduled with AfterFunc (webhook retries) run
// synchronously inside Advance, in order of their due time. It is safe for
// concurrent use, but a scheduled call must not call Advance itself.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*fakeTimer
}

type fakeTimer struct {
	clock *FakeClock
	at    time.Time
	seq   int
	f     func()
}

// NewFakeClock returns a FakeClock that reads start until advanced.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start}
}

// Now returns the clock's current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run inside the Advance call that moves the clock
// to or past Now()+d. A d of zero or less runs f at the next Advance.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{clock: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock forward by d, running every scheduled call that
// falls due on the way. While a call runs, Now reports its due time, so a
// call that schedules another one (a failed retry scheduling the next) sees
// that one run too if it is due before the end of the window. Advance returns
// once all of them have run.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		t := c.popDue(target)
		if t == nil {
			if target.After(c.now) {
				c.now = target
			}
			c.mu.Unlock()
			return
		}
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
	}
}

// Pending returns how many scheduled calls have not run yet.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// popDue removes and returns the earliest timer due at or before target, or
// nil. The caller holds c.mu.
func (c *FakeClock) popDue(target time.Time) *fakeTimer {
	sort.SliceStable(c.timers, func(i, j int) bool {
		a, b := c.timers[i], c.timers[j]
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return a.seq < b.seq
	})
	if len(c.timers) == 0 || c.timers[0].at.After(target) {
		return nil
	}
	t := c.timers[0]
	c.timers = c.timers[1:]
	return t
}

// Stop removes the timer from its clock.
func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, other := range c.timers {
		if other == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}
