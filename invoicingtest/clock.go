package invoicingtest

import (
	"sort"
	"sync"
	"time"
)

// Clock is the server's source of time: "today" for date defaults and
// overdue invoices, the created_at and updated_at stamps and every time in
// event payloads (sent_at, paid_at, ...), the webhook retry schedule, and
// the X-Service-Timestamp of deliveries, except on an *OffsetClock, whose
// deliveries are signed with the wall time so that receivers checking the
// timestamp against their own clock accept them (see Attempt.At). Use a
// *FakeClock in tests so that retries due in minutes or hours run at once
// when the test advances the clock, and an *OffsetClock for a long-running
// fake that should be able to jump ahead. A clock with an Advance method
// (both of those) can be advanced through the control endpoint
// POST /_mock/clock/advance (WithControl).
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f once d has elapsed on this clock: in its own
	// goroutine (SystemClock, OffsetClock) or inside Advance (FakeClock,
	// OffsetClock).
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

// OffsetClock is the wall clock moved forward on demand: it reads
// time.Now() plus an offset that Advance increases, so that a long-running
// fake (the CLI's mock) can be taken days ahead — invoices fall overdue,
// quotes expire, webhook retries come due — while time goes on passing
// normally in between. A call scheduled with AfterFunc runs once, when the
// clock reaches its due time: in real time on its own goroutine, or inside
// the Advance that moves the clock past it. Deliveries of a server on an
// OffsetClock are signed with the wall time, not the clock's (see
// Attempt.At). Create it with NewOffsetClock; the zero value is an
// OffsetClock with no offset. It is safe for concurrent use, but a
// scheduled call must not call Advance itself.
type OffsetClock struct {
	advancing sync.Mutex // serialises Advance calls
	mu        sync.Mutex // guards the fields below
	offset    time.Duration
	seq       int
	timers    []*offsetTimer // pending, in no particular order
}

type offsetTimer struct {
	clock *OffsetClock
	at    time.Time // due time on the clock
	seq   int
	f     func()
	real  *time.Timer // fires when the clock reaches at without an Advance
	done  bool        // ran or stopped; guarded by clock.mu
}

// NewOffsetClock returns an OffsetClock that reads the wall time until
// advanced.
func NewOffsetClock() *OffsetClock { return &OffsetClock{} }

// Now returns time.Now() plus the offset added by Advance so far.
func (c *OffsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Offset returns how far ahead of the wall clock Advance has moved the clock.
func (c *OffsetClock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// AfterFunc schedules f to run once the clock reaches Now()+d: on its own
// goroutine when that much real time passes, or synchronously inside the
// Advance that moves the clock to or past it, whichever comes first; f
// never runs twice. A d of zero or less makes f run at once on its own
// goroutine.
func (c *OffsetClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &offsetTimer{clock: c, at: time.Now().Add(c.offset + d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	t.real = time.AfterFunc(d, t.fire)
	return t
}

// Advance moves the clock forward by d (nothing happens for d <= 0),
// running every scheduled call that falls due on the way, in order of due
// time, before it returns. While a call runs, Now reports (about) its due
// time, so a call that schedules another one (a failed webhook retry
// scheduling the next) sees that one run too if it is due before the end of
// the window; Now never goes backwards.
func (c *OffsetClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.advancing.Lock()
	defer c.advancing.Unlock()
	c.mu.Lock()
	target := c.offset + d
	c.mu.Unlock()
	for {
		c.mu.Lock()
		wall := time.Now()
		t := c.popDue(wall.Add(target))
		if t == nil {
			c.offset = max(c.offset, target)
			c.rearm(wall)
			c.mu.Unlock()
			return
		}
		// Stand at t's due time while it runs (never going back).
		c.offset = max(c.offset, t.at.Sub(wall))
		c.mu.Unlock()
		t.f()
	}
}

// Pending returns how many scheduled calls have neither run nor been
// stopped.
func (c *OffsetClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// popDue removes, marks done and returns the earliest pending timer due at
// or before limit, or nil. The caller holds c.mu.
func (c *OffsetClock) popDue(limit time.Time) *offsetTimer {
	best := -1
	for i, t := range c.timers {
		if t.at.After(limit) {
			continue
		}
		if best < 0 || t.at.Before(c.timers[best].at) || (t.at.Equal(c.timers[best].at) && t.seq < c.timers[best].seq) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	t := c.timers[best]
	c.remove(t)
	t.real.Stop()
	return t
}

// rearm resets the real timers of the pending calls to fire when the
// advanced clock reaches their due time, wall being the current wall time.
// The caller holds c.mu.
func (c *OffsetClock) rearm(wall time.Time) {
	now := wall.Add(c.offset)
	for _, t := range c.timers {
		t.real.Reset(t.at.Sub(now))
	}
}

// remove takes t out of the pending timers and marks it done. The caller
// holds c.mu.
func (c *OffsetClock) remove(t *offsetTimer) {
	t.done = true
	for i, other := range c.timers {
		if other == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return
		}
	}
}

// fire runs the call when its real timer expires, unless an Advance ran it
// or Stop cancelled it first.
func (t *offsetTimer) fire() {
	c := t.clock
	c.mu.Lock()
	if t.done {
		c.mu.Unlock()
		return
	}
	c.remove(t)
	c.mu.Unlock()
	t.f()
}

// Stop cancels the call; it reports false when the call already ran (or
// is running) or was stopped before.
func (t *offsetTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.done {
		return false
	}
	c.remove(t)
	t.real.Stop()
	return true
}
