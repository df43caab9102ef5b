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

	// The first look at the pauses once they have ended (a call's gate,
	// here at the instant the last one ends) drops them.
	left, _ := c.pauses.left(pauseKey{}, last)
	assert.LessOrEqual(t, left, time.Duration(0))
	c.pauses.mu.Lock()
	defer c.pauses.mu.Unlock()
	assert.LessOrEqual(t, len(c.pauses.m), 5)
	assert.LessOrEqual(t, len(c.pauses.ends), 5)
}
