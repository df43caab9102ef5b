package invoicing_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// A 429 pauses every call made with its key until its Retry-After has
// passed; a call whose deadline comes first sends nothing and gets the
// 429's error at once; calls with other keys go on.
func TestA429PausesTheCallsOfTheClientsKey(t *testing.T) {
	t.Parallel() // waits a second
	const tenant = "sk_tenant_b_9876543210"
	type arrival struct {
		at   time.Time
		auth string
	}
	var mu sync.Mutex
	var seen []arrival
	c, _ := newMock(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, arrival{time.Now(), r.Header.Get("Authorization")})
		mu.Unlock()
		if r.Header.Get("X-Test") == "limit" {
			reply(w, 429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "1", "X-Request-Id", "req-429")
			return
		}
		reply(w, 200, fixture(t, "invoice.json"))
	}, invoicing.WithRetryWait(time.Millisecond, 10*time.Second))
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}

	// The call that meets the 429 cannot wait a second: it returns at once.
	_, err := c.Invoices.Get(short(), idInvoice, invoicing.WithHeader("X-Test", "limit"))
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	assert.Equal(t, 1, apiError(t, err).Attempts)
	mu.Lock()
	limited := seen[0].at
	mu.Unlock()

	// The next call with the same key, whose deadline comes before the
	// pause ends, sends nothing and gets the 429 at once.
	var resp invoicing.Response
	_, err = c.Items.Get(short(), idItem, invoicing.WithResponseInto(&resp))
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	e := apiError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, e.StatusCode)
	assert.Equal(t, "GET", e.Method)
	assert.Equal(t, "/items/"+idItem, e.Path, "the call's own request")
	assert.Equal(t, "Rate limit exceeded", e.Detail, "the detail of the 429 that paused the key")
	assert.Positive(t, e.RetryAfter)
	assert.LessOrEqual(t, e.RetryAfter, time.Second, "what is left of the pause")
	assert.Zero(t, e.Attempts, "nothing was sent")
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Zero(t, resp.Attempts)

	// Another key is not paused: with the same short deadline, it succeeds.
	_, err = c.Invoices.Get(short(), idInvoice, invoicing.WithAPIKey(tenant))
	require.NoError(t, err)

	// Calls with the paused key and room to wait, wait the pause out.
	const callers = 8
	var wg sync.WaitGroup
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() { errs[i] = getInvoice(c) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 1+1+callers)
	assert.Equal(t, "Bearer "+tenant, seen[1].auth)
	for _, a := range seen[2:] {
		assert.Equal(t, "Bearer "+testKey, a.auth)
		assert.GreaterOrEqual(t, a.at.Sub(limited), time.Second, "no request of the paused key inside its Retry-After")
	}
}

// A 429 met with WithAPIKey pauses that key only, not the Client's own.
func TestA429PausesOnlyItsAPIKey(t *testing.T) {
	t.Parallel() // waits a second
	const tenantA, tenantB = "sk_tenant_a_0123456789", "sk_tenant_b_9876543210"
	var arr arrivals
	var sent atomic.Int32
	c, api := newMock(t, arr.wrap(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		if r.Header.Get("X-Test") == "limit" {
			reply(w, 429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "1")
			return
		}
		reply(w, 200, fixture(t, "invoice.json"))
	}), invoicing.WithRetryWait(time.Millisecond, 10*time.Second))
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	_, err := c.Invoices.Get(short(), idInvoice, invoicing.WithAPIKey(tenantA), invoicing.WithHeader("X-Test", "limit"))
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	limited := arr.times()[0]

	_, err = c.Invoices.Get(short(), idInvoice, invoicing.WithAPIKey(tenantA))
	require.ErrorIs(t, err, invoicing.ErrRateLimited, "A is paused")
	assert.Zero(t, apiError(t, err).Attempts)
	assert.EqualValues(t, 1, sent.Load())

	_, err = c.Invoices.Get(short(), idInvoice, invoicing.WithAPIKey(tenantB))
	require.NoError(t, err, "B is not")
	_, err = c.Invoices.Get(short(), idInvoice)
	require.NoError(t, err, "nor is the Client's own key")
	assert.Equal(t, "Bearer "+testKey, api.last(t).Header.Get("Authorization"))

	_, err = c.Invoices.Get(context.Background(), idInvoice, invoicing.WithAPIKey(tenantA))
	require.NoError(t, err, "A, with room to wait, waits the pause out")
	at := arr.times()
	require.Len(t, at, 4)
	assert.GreaterOrEqual(t, at[3].Sub(limited), time.Second)
	assert.Equal(t, "Bearer "+tenantA, api.last(t).Header.Get("Authorization"))
}

func TestPauseWaitEndsWithTheContext(t *testing.T) {
	c, api := newMock(t, sequence(always(429, `{"detail": "x"}`, "Retry-After", "30"), always(200, fixture(t, "invoice.json"))),
		invoicing.WithRetryWait(time.Millisecond, time.Minute))
	short, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.Invoices.Get(short, idInvoice)
	require.ErrorIs(t, err, invoicing.ErrRateLimited, "30 s do not fit in its deadline")

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = c.Invoices.Get(ctx, idInvoice)
	require.ErrorIs(t, err, context.Canceled)
	assert.Len(t, api.requests(), 1, "nothing sent inside the pause")
}
