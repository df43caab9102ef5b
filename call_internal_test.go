package invoicing

import (
	"context"
	"encoding/binary"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyN is the n-th of many distinct API keys' pause keys.
func keyN(n int) pauseKey {
	var k pauseKey
	binary.BigEndian.PutUint64(k[:], uint64(n)+1)
	return k
}

// A Client serving many businesses holds only the pauses in progress: an
// entry ends with its pause, whatever else happens.
func TestPausesHoldOnlyThePausesInProgress(t *testing.T) {
	t.Parallel() // for the CPU while other tests wait
	const keys = 100_000
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	cause := &Error{Response: Response{StatusCode: http.StatusTooManyRequests}, Detail: "slow down", Body: make([]byte, 1024)}

	t.Run("a burst, then its end", func(t *testing.T) {
		var p pauses
		for i := range keys {
			p.set(keyN(i), t0, t0.Add(time.Millisecond+time.Duration(i)), cause)
		}
		assert.Len(t, p.m, keys, "all paused at once")
		long := keyN(keys)
		p.set(long, t0, t0.Add(time.Hour), cause)

		// Once the brief pauses have ended, the next look leaves only the
		// one in progress.
		end := t0.Add(2 * time.Millisecond)
		left, c := p.left(keyN(7), end)
		assert.Zero(t, left)
		assert.Nil(t, c)
		assert.Len(t, p.m, 1)
		left, c = p.left(long, end)
		assert.Equal(t, time.Hour-2*time.Millisecond, left)
		assert.Same(t, cause, c)

		// A new pause after the end leaves the new one and the long one.
		p.set(keyN(keys+1), end, end.Add(time.Second), cause)
		assert.Len(t, p.m, 2)
		p.set(keyN(keys+2), t0.Add(2*time.Hour), t0.Add(2*time.Hour+time.Second), cause)
		assert.Len(t, p.m, 1, "only the newest is in progress")
		assert.LessOrEqual(t, len(p.ends), 1)
	})

	t.Run("a stream", func(t *testing.T) {
		// Key i is paused at t0+i µs for 1 ms: at any time, the last 1000
		// keys are paused.
		var p pauses
		bad := -1
		for i := range keys {
			now := t0.Add(time.Duration(i) * time.Microsecond)
			p.set(keyN(i), now, now.Add(time.Millisecond), cause)
			if len(p.m) != min(i+1, 1000) && bad < 0 {
				bad = i
			}
		}
		assert.Equal(t, -1, bad, "after pause %d the map held %d entries", bad, len(p.m))
		end := t0.Add(keys*time.Microsecond + time.Millisecond)
		left, _ := p.left(keyN(keys-1), end)
		assert.Zero(t, left)
		assert.Zero(t, len(p.m))
		assert.Zero(t, len(p.ends))
	})
}

func TestPausesKeepTheLongerPause(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	first, second := &Error{Detail: "first"}, &Error{Detail: "second"}
	var p pauses
	k := keyN(1)
	left, cause := p.left(k, t0)
	assert.LessOrEqual(t, left, time.Duration(0), "never paused")
	assert.Nil(t, cause)

	p.set(k, t0, t0.Add(10*time.Second), first)
	p.set(k, t0, t0.Add(5*time.Second), second)
	left, cause = p.left(k, t0.Add(time.Second))
	assert.Equal(t, 9*time.Second, left, "a shorter pause does not cut a longer one")
	assert.Same(t, first, cause)

	p.set(k, t0.Add(time.Second), t0.Add(20*time.Second), second)
	left, cause = p.left(k, t0.Add(15*time.Second))
	assert.Equal(t, 5*time.Second, left, "a longer one extends it")
	assert.Same(t, second, cause)
	left, _ = p.left(k, t0.Add(20*time.Second))
	assert.LessOrEqual(t, left, time.Duration(0), "it ends at its end")
	assert.Zero(t, len(p.m))

	p.set(k, t0, t0, first)
	assert.Zero(t, len(p.m), "a pause of nothing is not kept")

	p.set(k, t0, t0.Add(time.Second), first)
	left, _ = p.left(keyN(2), t0)
	assert.LessOrEqual(t, left, time.Duration(0), "other keys are not paused")
}

// Through a Client: a few thousand businesses' keys each meet a 429 with
// Retry-After: 1; once the pauses have ended, the Client holds a handful
// of entries at most.
func TestPausesOfManyKeysEndThroughAClient(t *testing.T) {
	t.Parallel() // waits a second
	const ownKey, tenants = "sk_own_0123456789", 3000
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
		if r.Header.Get("Authorization") != "Bearer "+ownKey {
			resp := httpmock.NewStringResponse(http.StatusTooManyRequests, `{"detail": "Rate limit exceeded"}`)
			resp.Header.Set("Retry-After", "1")
			return resp, nil
		}
		return httpmock.NewStringResponse(http.StatusOK, `{}`), nil
	})
	c, err := NewClient("https://api.invoicing.test/api/v1/external", ownKey,
		WithHTTPClient(&http.Client{Transport: mt}), WithMaxRetries(0))
	require.NoError(t, err)
	ctx := context.Background()

	next := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range next {
				err := c.Do(ctx, http.MethodGet, "/invoices", nil, nil, WithAPIKey("sk_tenant_"+strconv.Itoa(i)))
				assert.ErrorIs(t, err, ErrRateLimited)
			}
		})
	}
	for i := range tenants {
		next <- i
	}
	close(next)
	wg.Wait()

	c.pauses.mu.Lock()
	paused := len(c.pauses.m)
	var last time.Time
	for _, e := range c.pauses.m {
		if e.until.After(last) {
			last = e.until
		}
	}
	c.pauses.mu.Unlock()
	assert.Positive(t, paused)
	t.Logf("%d keys paused after %d calls", paused, tenants)

	time.Sleep(time.Until(last) + 10*time.Millisecond) // the pauses end
	require.NoError(t, c.Do(ctx, http.MethodGet, "/invoices", nil, nil))
	c.pauses.mu.Lock()
	defer c.pauses.mu.Unlock()
	assert.LessOrEqual(t, len(c.pauses.m), 5)
	assert.LessOrEqual(t, len(c.pauses.ends), 5)
}

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

func TestRouteTemplate(t *testing.T) {
	for path, want := range map[string]string{
		"/invoices": "/invoices",
		"/invoices/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f":                                 "/invoices/{id}",
		"/invoices/3F2C9A4E-8B1D-4C7A-9E55-0A1B2C3D4E5F/pdf":                             "/invoices/{id}/pdf",
		"/reports/trial-balance":                                                         "/reports/trial-balance",
		"/a/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f/b/7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d": "/a/{id}/b/{id}",
		"/x/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5fz":                                       "/x/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5fz",
		"/x/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5-":                                        "/x/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5-",
		"/x/3f2c9a4e8b1d4c7a9e550a1b2c3d4e5f":                                            "/x/3f2c9a4e8b1d4c7a9e550a1b2c3d4e5f",
	} {
		assert.Equal(t, want, routeTemplate(path), path)
	}
}
