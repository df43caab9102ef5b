package invoicingtest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFakeClockRunsDueCallsInOrder(t *testing.T) {
	c := NewFakeClock(testStart)
	var got []string
	c.AfterFunc(2*time.Minute, func() { got = append(got, "b@"+c.Now().Format("15:04")) })
	c.AfterFunc(time.Minute, func() {
		got = append(got, "a@"+c.Now().Format("15:04"))
		c.AfterFunc(30*time.Second, func() { got = append(got, "a2@"+c.Now().Format("15:04:05")) })
	})
	stopped := c.AfterFunc(90*time.Second, func() { got = append(got, "never") })
	assert.True(t, stopped.Stop())
	assert.False(t, stopped.Stop())

	c.Advance(59 * time.Second)
	assert.Empty(t, got)
	assert.Equal(t, testStart.Add(59*time.Second), c.Now())

	c.Advance(10 * time.Minute)
	assert.Equal(t, []string{"a@09:31", "a2@09:31:30", "b@09:32"}, got)
	assert.Equal(t, testStart.Add(59*time.Second+10*time.Minute), c.Now())
	assert.Equal(t, 0, c.Pending())
}

func TestServerUsesItsClock(t *testing.T) {
	srv, clock := newServer(t)
	clock.Advance(36 * time.Hour)
	assert.Equal(t, testStart.Add(36*time.Hour), srv.Now())
	inv := createInvoice(t, srv, nil)
	assert.Equal(t, "2026-03-11", inv["issue_date"])
	assert.Equal(t, "2026-03-11T21:30:00Z", inv["created_at"])
}

// within reports whether got is at most tolerance away from want.
func within(want, got time.Time, tolerance time.Duration) bool {
	d := got.Sub(want)
	return -tolerance <= d && d <= tolerance
}

func TestOffsetClockNowMovesWithAdvance(t *testing.T) {
	c := NewOffsetClock()
	assert.True(t, within(time.Now(), c.Now(), time.Second), "reads the wall clock until advanced")
	c.Advance(48 * time.Hour)
	c.Advance(0)
	c.Advance(-time.Hour)
	assert.Equal(t, 48*time.Hour, c.Offset(), "zero and negative advances do nothing")
	assert.True(t, within(time.Now().Add(48*time.Hour), c.Now(), time.Second))

	var zero OffsetClock
	assert.True(t, within(time.Now(), zero.Now(), time.Second), "the zero value is usable")
}

func TestOffsetClockRunsDueCallsInsideAdvanceInOrder(t *testing.T) {
	c := NewOffsetClock()
	var got []string
	var offsets []time.Duration
	record := func(name string) {
		got = append(got, name)
		offsets = append(offsets, c.Offset())
	}
	c.AfterFunc(time.Hour, func() { record("b") })
	c.AfterFunc(30*time.Minute, func() {
		record("a")
		c.AfterFunc(10*time.Minute, func() { record("a2") }) // due inside the window
		c.AfterFunc(2*time.Hour, func() { record("late") })  // due after it
	})
	stopped := c.AfterFunc(45*time.Minute, func() { record("never") })
	assert.True(t, stopped.Stop())
	assert.False(t, stopped.Stop())

	c.Advance(29 * time.Minute)
	assert.Empty(t, got)
	c.Advance(90*time.Minute - 29*time.Minute)
	assert.Equal(t, []string{"a", "a2", "b"}, got, "synchronously, in order of due time")
	// While a call runs the clock stands at (about) its due time.
	for i, want := range []time.Duration{30 * time.Minute, 40 * time.Minute, time.Hour} {
		assert.InDelta(t, want, offsets[i], float64(time.Second), "offset while %s ran", got[i])
	}
	assert.Equal(t, 90*time.Minute, c.Offset())
	assert.Equal(t, 1, c.Pending(), "the call due after the window waits")
}

func TestOffsetClockRunsCallsInRealTime(t *testing.T) {
	c := NewOffsetClock()
	fired := make(chan time.Time, 2)
	due := time.Now().Add(20 * time.Millisecond) // before AfterFunc: its own due time is no earlier
	first := c.AfterFunc(20*time.Millisecond, func() { fired <- c.Now() })
	select {
	case at := <-fired:
		assert.False(t, at.Before(due), "not before it is due")
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not run in real time")
	}
	// Once only: the call left the pending calls as it ran, so neither an
	// Advance past its due time nor its real timer firing late runs it again.
	assert.Equal(t, 0, c.Pending())
	c.Advance(time.Minute)
	first.(*offsetTimer).fire()
	assert.Empty(t, fired, "once only")

	// An Advance that stops short of a call brings its real timer closer.
	c.AfterFunc(time.Hour, func() { fired <- c.Now() })
	c.Advance(time.Hour - 30*time.Millisecond)
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("the call due 30ms after the advance did not run")
	}
}

func TestOffsetClockStop(t *testing.T) {
	c := NewOffsetClock()
	var ran atomic.Int32
	tm := c.AfterFunc(10*time.Millisecond, func() { ran.Add(1) })
	assert.True(t, tm.Stop())
	assert.False(t, tm.(*offsetTimer).real.Stop(), "Stop stopped the real timer: it never fires")
	c.Advance(time.Hour)
	assert.Zero(t, ran.Load(), "a stopped call never runs")
	assert.Equal(t, 0, c.Pending())

	tm = c.AfterFunc(time.Minute, func() { ran.Add(1) })
	c.Advance(time.Minute)
	assert.Equal(t, int32(1), ran.Load())
	assert.False(t, tm.Stop(), "it already ran")
}

func TestOffsetClockNeverRunsACallTwice(t *testing.T) {
	c := NewOffsetClock()
	var wg sync.WaitGroup
	counts := make([]atomic.Int32, 20)
	timers := make([]Timer, len(counts))
	for i := range counts {
		// Due at about the time the Advance runs: the real timer and the
		// Advance race for it.
		timers[i] = c.AfterFunc(time.Duration(i%4)*time.Millisecond, func() { counts[i].Add(1) })
	}
	for range 3 {
		wg.Go(func() { c.Advance(time.Millisecond) })
	}
	wg.Wait()
	assert.Equal(t, 0, c.Pending(), "every call ran or is running")
	assert.Eventually(t, func() bool { // a call its real timer started may still be on its way
		for i := range counts {
			if counts[i].Load() == 0 {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond, "every call ran")
	for _, tm := range timers {
		tm.(*offsetTimer).fire() // a real timer firing after the Advance ran its call
	}
	for i := range counts {
		assert.Equal(t, int32(1), counts[i].Load(), "call %d", i)
	}
}
