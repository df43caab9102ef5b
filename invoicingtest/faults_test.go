package invoicingtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimitNext(t *testing.T) {
	srv, _ := newServer(t)
	srv.RateLimitNext(2, 3*time.Second)
	for range 2 {
		r := get(t, srv, "/invoices").requireStatus(t, http.StatusTooManyRequests)
		assert.Equal(t, "3", r.header.Get("Retry-After"))
		assert.Equal(t, "application/json", r.header.Get("Content-Type"))
		assert.Equal(t, "Rate limit exceeded", r.detail(t))
	}
	get(t, srv, "/invoices").requireStatus(t, http.StatusOK)

	srv.RateLimitNext(1, 1500*time.Millisecond)
	assert.Equal(t, "2", get(t, srv, "/invoices").header.Get("Retry-After"), "rounded up to whole seconds")
	srv.RateLimitNext(1, 0)
	assert.Equal(t, "0", get(t, srv, "/invoices").header.Get("Retry-After"))
}

func TestFaultsComeBeforeAuthAndHaveNoSideEffects(t *testing.T) {
	srv, _ := newServer(t)
	srv.FailNext(1, http.StatusServiceUnavailable)
	r := call(t, srv, http.MethodPost, "/invoices", "", invoiceBody(nil)).requireStatus(t, http.StatusServiceUnavailable)
	assert.Equal(t, "Service Unavailable", r.detail(t))
	assert.Empty(t, r.header.Get("Retry-After"))
	assert.Equal(t, num("0"), get(t, srv, "/invoices").object(t)["total"])

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.True(t, reqs[0].Fault)
	assert.Equal(t, http.StatusServiceUnavailable, reqs[0].Status)
	assert.False(t, reqs[1].Fault)
}

func TestProxyErrorNext(t *testing.T) {
	srv, _ := newServer(t)
	srv.ProxyErrorNext(1)
	r := get(t, srv, "/items").requireStatus(t, http.StatusBadGateway)
	assert.Equal(t, "text/html", r.header.Get("Content-Type"))
	assert.Equal(t, ProxyErrorPage, string(r.body))
	get(t, srv, "/items").requireStatus(t, http.StatusOK)
}

func TestScopedFault(t *testing.T) {
	srv, _ := newServer(t)
	srv.InjectFault(Fault{Status: http.StatusInternalServerError, Method: "POST", Path: "/invoices", Count: 2, RetryAfter: time.Second})
	srv.InjectFault(Fault{Status: http.StatusBadGateway, Path: "/quotes/*", Body: "upstream gone", ContentType: "text/plain"})

	get(t, srv, "/invoices").requireStatus(t, http.StatusOK)
	get(t, srv, "/quotes").requireStatus(t, http.StatusOK)
	r := post(t, srv, "/invoices", invoiceBody(nil)).requireStatus(t, http.StatusInternalServerError)
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	post(t, srv, "/invoices", invoiceBody(nil)).requireStatus(t, http.StatusInternalServerError)
	post(t, srv, "/invoices", invoiceBody(nil)).requireStatus(t, http.StatusCreated)

	r = get(t, srv, "/quotes/anything").requireStatus(t, http.StatusBadGateway)
	assert.Equal(t, "upstream gone", string(r.body))
	assert.Equal(t, "text/plain", r.header.Get("Content-Type"))
	get(t, srv, "/quotes/anything").requireStatus(t, http.StatusNotFound)

	srv.FailNext(5, http.StatusInternalServerError)
	srv.ClearFaults()
	get(t, srv, "/invoices").requireStatus(t, http.StatusOK)
}

// timed returns how long f took.
func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

func TestLatencyDelaysEachRequest(t *testing.T) {
	const latency = 50 * time.Millisecond
	srv, _ := newServer(t, WithLatency(latency, 0))
	took := timed(func() { get(t, srv, "/invoices").requireStatus(t, http.StatusOK) })
	t.Logf("one GET with %v of latency: %v", latency, took)
	assert.GreaterOrEqual(t, took, latency)
}

// Requests wait for their latency side by side: all of them are seen
// waiting at once. With an hour of latency each, none could be waiting
// beside another if they waited one after another.
func TestLatencyIsWaitedInParallel(t *testing.T) {
	const n = 8
	srv, _ := newServer(t, WithLatency(time.Hour, 0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/invoices", nil)
			if err == nil {
				req.Header.Set("Authorization", "Bearer "+srv.FullKey)
				var resp *http.Response
				if resp, err = http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			errs <- err
		})
	}
	require.Eventually(t, func() bool { return srv.waiting.Load() == n }, time.Minute, time.Millisecond,
		"all %d requests wait for their latency at once", n)

	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.ErrorIs(t, err, context.Canceled)
	}
	require.Eventually(t, func() bool { return srv.waiting.Load() == 0 }, time.Minute, time.Millisecond,
		"and each stops waiting when its client goes away")
	assert.Empty(t, srv.Requests(), "no request was handled")
}

func TestSetLatencyChangesLaterRequests(t *testing.T) {
	srv, _ := newServer(t, WithLatency(time.Hour, 0))
	const latency = 60 * time.Millisecond
	srv.SetLatency(latency, 0)
	assert.GreaterOrEqual(t, timed(func() { getWithin(t, srv, 10*time.Second) }), latency)
	srv.SetLatency(0, 0)
	getWithin(t, srv, 10*time.Second)
}

// getWithin lists invoices, failing the test if the answer takes longer
// than timeout.
func getWithin(t *testing.T, srv *Server, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/invoices", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.FullKey)
	send(t, req).requireStatus(t, http.StatusOK)
}

func TestLatencyAlsoDelaysInjectedFaults(t *testing.T) {
	const latency = 50 * time.Millisecond
	srv, _ := newServer(t, WithLatency(latency, 0))
	srv.RateLimitNext(1, time.Second)
	var r response
	took := timed(func() { r = get(t, srv, "/invoices") })
	r.requireStatus(t, http.StatusTooManyRequests)
	assert.GreaterOrEqual(t, took, latency, "latency is the network's, so a rate limiter's answer waits too")
}

func TestLatencyJitterIsUniformWithinBounds(t *testing.T) {
	l := &latency{base: 10 * time.Millisecond, jitter: 4 * time.Nanosecond}
	seen := map[time.Duration]int{}
	for range 1000 {
		seen[l.delay()]++
	}
	assert.Len(t, seen, 5, "every delay from base to base+jitter, both included, and nothing else: %v", seen)
	for d := l.base; d <= l.base+l.jitter; d++ {
		assert.Greater(t, seen[d], 100, "%v drawn %d times in 1000; uniform would be about 200", d, seen[d])
	}
	assert.Equal(t, 7*time.Millisecond, (&latency{base: 7 * time.Millisecond}).delay(), "no jitter, no randomness")
}

func TestLatencyRefusesNegativeDurations(t *testing.T) {
	srv, _ := newServer(t)
	assert.Panics(t, func() { WithLatency(-time.Millisecond, 0) })
	assert.Panics(t, func() { srv.SetLatency(0, -time.Millisecond) })
}

func TestLatencyEndsWhenTheClientGoesAway(t *testing.T) {
	srv, _ := newServer(t, WithLatency(30*time.Second, 0))
	srv.FailNext(1, http.StatusServiceUnavailable)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, BasePath+"/invoices", nil)
	req.Header.Set("Authorization", "Bearer "+srv.FullKey)
	rec := httptest.NewRecorder()

	took := timed(func() { srv.handler().ServeHTTP(rec, req) })
	assert.Less(t, took, 10*time.Second, "the wait ends with the request's context, not after 30 s")
	assert.Empty(t, rec.Body.String(), "a request whose client went away is not answered")
	assert.Empty(t, srv.Requests(), "nor logged")

	srv.SetLatency(0, 0)
	get(t, srv, "/invoices").requireStatus(t, http.StatusServiceUnavailable) // the fault was not used up
}

func TestCloseDoesNotWaitForTheLatencyOfAbandonedRequests(t *testing.T) {
	srv := NewTestServer(t, WithLatency(30*time.Second, 0))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/invoices", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.FullKey)
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// Close blocks until every handler has returned: it returns at once only
	// if the abandoned request stopped waiting when its client went away.
	assert.Less(t, timed(srv.Close), 10*time.Second)
}
