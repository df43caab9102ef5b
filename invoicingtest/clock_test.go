package invoicingtest

import (
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
