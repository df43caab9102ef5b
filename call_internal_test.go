package invoicing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDelayBounds(t *testing.T) {
	c := &Client{settings: settings{waitMin: 100 * time.Millisecond, waitMax: 10 * time.Second}}
	for _, tc := range []struct {
		n      int
		ra     time.Duration
		lo, hi time.Duration
	}{
		{1, 0, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 0, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, 0, 200 * time.Millisecond, 400 * time.Millisecond},
		{7, 0, 3200 * time.Millisecond, 6400 * time.Millisecond},
		{8, 0, 5 * time.Second, 10 * time.Second},
		{1000, 0, 5 * time.Second, 10 * time.Second},
		{1, time.Second, time.Second, 1100 * time.Millisecond},                  // Retry-After plus at most 10%
		{5, time.Second, time.Second, 1100 * time.Millisecond},                  // whatever the attempt
		{1, 9500 * time.Millisecond, 9500 * time.Millisecond, 10 * time.Second}, // capped at the maximum
		{1, 10 * time.Second, 10 * time.Second, 10 * time.Second},
	} {
		lo, hi := c.delay(tc.n, tc.ra)
		assert.Equal(t, tc.lo, lo, "n=%d ra=%v", tc.n, tc.ra)
		assert.Equal(t, tc.hi, hi, "n=%d ra=%v", tc.n, tc.ra)
	}
	c.waitMin, c.waitMax = 0, 3200*time.Millisecond
	lo, hi := c.delay(1, 0)
	assert.Equal(t, 50*time.Millisecond, lo, "with no minimum, a 32nd of the maximum")
	assert.Equal(t, 100*time.Millisecond, hi)
	c.waitMin, c.waitMax = 0, 0
	lo, hi = c.delay(3, 0)
	assert.Zero(t, lo)
	assert.Zero(t, hi)

	// backoff picks within the bounds, over the whole range.
	cl := &call{lo: time.Second, hi: 1100 * time.Millisecond}
	least, most := cl.hi, cl.lo
	for range 10_000 {
		d := cl.backoff(0, 0, 0, nil)
		require.GreaterOrEqual(t, d, cl.lo)
		require.LessOrEqual(t, d, cl.hi)
		least, most = min(least, d), max(most, d)
	}
	assert.Less(t, least, cl.lo+10*time.Millisecond)
	assert.Greater(t, most, cl.hi-10*time.Millisecond)
	cl.lo, cl.hi = time.Second, time.Second
	assert.Equal(t, time.Second, cl.backoff(0, 0, 0, nil))
}
