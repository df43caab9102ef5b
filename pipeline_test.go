package invoicing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// ------------------------------------------------------------- middleware

func TestMiddlewareSeesEveryAttemptWithItsRoute(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	record := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		req.Header.Set("X-Trace", "t-1")
		resp, err := next(req)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			seen = append(seen, invoicing.Route(req)+" error")
			return nil, err
		}
		body, _ := io.ReadAll(resp.Body) // already in memory
		seen = append(seen, fmt.Sprintf("%s #%d %s %s", invoicing.Route(req), invoicing.Attempt(req), resp.Status[:3], body[:min(len(body), 12)]))
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	var order []string
	outer := func(name string) invoicing.Middleware {
		return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return next(req)
		}
	}
	c, api := newTestAPI(t, sequence(always(503, `{"detail": "busy"}`), always(200, fixture(t, "invoice.json"))),
		invoicing.WithMiddleware(outer("first"), outer("second"), record), invoicing.WithClock(newFakeClock()))
	inv, err := c.Invoices.Get(context.Background(), invoiceID)
	require.NoError(t, err)
	assert.Equal(t, "INV-0042", inv.InvoiceNumber, "a middleware that replaced the body is read too")
	assert.Equal(t, []string{
		"GET /invoices/{id} #1 503 {\"detail\": \"",
		"GET /invoices/{id} #2 200 {\n  \"id\": \"3",
	}, seen)
	assert.Equal(t, []string{"first", "second", "first", "second"}, order, "in the order given, on every attempt")
	assert.Equal(t, "t-1", api.last(t).Header.Get("X-Trace"))
}

func TestMiddlewareCanAnswerWithoutSending(t *testing.T) {
	cached := func(req *http.Request, _ func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"id": "` + invoiceID + `", "item_code": "CACHED"}`)), Request: req}, nil
	}
	c, api := newTestAPI(t, always(500, ""), invoicing.WithMiddleware(cached))
	it, err := c.Items.Get(context.Background(), invoiceID)
	require.NoError(t, err)
	assert.Equal(t, "CACHED", it.ItemCode)
	assert.Empty(t, api.requests())
}

func TestRouteTemplates(t *testing.T) {
	routes := map[string]bool{}
	var mu sync.Mutex
	mw := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		mu.Lock()
		routes[invoicing.Route(req)] = true
		mu.Unlock()
		return next(req)
	}
	api := &optionsAPI{attempts: map[string]int{}}
	c, _ := newTestAPI(t, api.handle, invoicing.WithMiddleware(mw))
	for _, m := range everyMethod() {
		require.NoError(t, m.call(context.Background(), c), m.name)
	}
	for _, want := range []string{"GET /invoices", "GET /invoices/{id}", "GET /invoices/{id}/pdf", "POST /invoices",
		"GET /quotes/{id}/pdf", "GET /bank-transactions/{id}", "GET /reports/trial-balance", "POST /credit-notes"} {
		assert.True(t, routes[want], want)
	}
	for r := range routes {
		assert.NotContains(t, r, invoiceID, "no raw id in a route")
	}
	req, _ := http.NewRequest("GET", "https://example.test/", nil)
	assert.Equal(t, "", invoicing.Route(req), "not a request of the SDK")
	assert.Equal(t, 0, invoicing.Attempt(req))
}

func TestLogLinesCarryRouteNotIDs(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	h := slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug})
	c, _ := newTestAPI(t, sequence(always(429, `{"detail": "x"}`), always(200, fixture(t, "invoice.json"))),
		invoicing.WithLogger(slog.New(h)), invoicing.WithClock(newFakeClock()))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	require.NoError(t, err)
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	assert.Contains(t, out, `"route":"GET /invoices/{id}"`)
	assert.Contains(t, out, `"msg":"invoicing: retrying"`)
	assert.Contains(t, out, `"msg":"invoicing: attempt"`)
	assert.NotContains(t, out, invoiceID)
	assert.NotContains(t, out, testKey)
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// --------------------------------------------- one rate budget per Client

func TestRateLimitedResponsePausesEveryRequestOfTheClient(t *testing.T) {
	clk := newFakeClock()
	var served atomic.Int32
	c, _ := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 1 {
			reply(w, 429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "5")
			return
		}
		reply(w, 200, fixture(t, "invoice.json"))
	}, invoicing.WithClock(clk), invoicing.WithRetryWait(time.Millisecond, 10*time.Second))

	// One call meets the limit; it gives up at once (no retries), yet the
	// whole Client now waits out the Retry-After.
	_, err := c.Invoices.Get(context.Background(), invoiceID, invoicing.WithRetries(0))
	require.ErrorIs(t, err, invoicing.ErrRateLimited)

	release := clk.holdSleeps()
	const callers = 8
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Invoices.Get(context.Background(), invoiceID)
			errs <- err
		}()
	}
	for range callers {
		d := <-clk.sleeping
		assert.GreaterOrEqual(t, d, 4*time.Second, "each waits out what is left of Retry-After: 5")
	}
	assert.EqualValues(t, 1, served.Load(), "no request is sent inside the Retry-After window")
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.EqualValues(t, 1+callers, served.Load())
}

// A call that starts while the Client is paused after a 429, when the pause
// ends after the call's deadline, sends nothing and returns the rate-limit
// error at once, with what is left of the pause as its RetryAfter: the same
// answer a call gets when its own 429 asks for longer than it can wait.
func TestCallStartingInAPauseLongerThanItsDeadlineGetsTheRateLimitError(t *testing.T) {
	clk := newFakeClock()
	c, api := newTestAPI(t, sequence(
		always(429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "20"),
		always(200, fixture(t, "invoice.json")),
	), invoicing.WithClock(clk), invoicing.WithRetryWait(time.Millisecond, time.Minute))

	_, err := c.Invoices.Get(context.Background(), invoiceID, invoicing.WithRetries(0))
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	pausedAt := clk.Now()

	// The caller's deadline is the real clock's; the pause is on the fake
	// one, which no Sleep moves here. 10s is inside the pause of 20s+.
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(10*time.Second))
	defer cancel()
	var resp invoicing.Response
	_, err = c.Items.Get(ctx, invoiceID, invoicing.WithResponseInto(&resp))
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusTooManyRequests, apiErr.StatusCode)
	assert.Equal(t, "GET", apiErr.Method)
	assert.Equal(t, "/items/"+invoiceID, apiErr.Path)
	assert.Equal(t, "Rate limit exceeded", apiErr.Detail, "the detail of the 429 that paused the Client")
	assert.GreaterOrEqual(t, apiErr.RetryAfter, 20*time.Second-clk.Now().Sub(pausedAt))
	assert.LessOrEqual(t, apiErr.RetryAfter, 22*time.Second)
	assert.Zero(t, apiErr.Attempts, "nothing was sent")
	assert.Empty(t, clk.waits(), "the call did not wait")
	assert.Len(t, api.requests(), 1, "no request is sent inside the pause")
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)

	// A call with room for the pause waits it out and succeeds.
	_, err = c.Invoices.Get(context.Background(), invoiceID)
	require.NoError(t, err)
	assert.Len(t, api.requests(), 2)
}

func TestClientSideRateLimit(t *testing.T) {
	clk := newFakeClock()
	c, api := newTestAPI(t, always(200, fixture(t, "invoice.json")), invoicing.WithClock(clk), invoicing.WithRateLimit(10, 2))
	for range 6 {
		_, err := c.Invoices.Get(context.Background(), invoiceID)
		require.NoError(t, err)
	}
	assert.Len(t, api.requests(), 6)
	waits := clk.waits()
	require.Len(t, waits, 4, "a burst of 2, then one request every 100 ms")
	for _, w := range waits {
		assert.InDelta(t, float64(100*time.Millisecond), float64(w), float64(time.Millisecond))
	}
	_, err := invoicing.NewClient("https://api.example.test"+prefix, testKey, invoicing.WithRateLimit(0, 1))
	require.ErrorIs(t, err, invoicing.ErrInvalidOption)
	_, err = invoicing.NewClient("https://api.example.test"+prefix, testKey, invoicing.WithRateLimit(5, 0))
	require.ErrorIs(t, err, invoicing.ErrInvalidOption)
}

func TestRateLimitWaitEndsWithTheContext(t *testing.T) {
	clk := newFakeClock()
	c, api := newTestAPI(t, always(200, fixture(t, "invoice.json")), invoicing.WithClock(clk), invoicing.WithRateLimit(0.01, 1))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	require.NoError(t, err)
	defer clk.holdSleeps()()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-clk.sleeping
		cancel()
	}()
	_, err = c.Invoices.Get(ctx, invoiceID)
	require.ErrorIs(t, err, context.Canceled)
	assert.Len(t, api.requests(), 1)
}

// ------------------------------------------------------------- Client.Do

func TestDoSendsThroughThePipeline(t *testing.T) {
	c, api := newTestAPI(t, always(200, `{"id": "cn-1", "total": 12.50}`, "X-Request-Id", "r-1"))
	var out struct {
		ID    string      `json:"id"`
		Total json.Number `json:"total"`
	}
	var resp invoicing.Response
	err := c.Do(context.Background(), "POST", "/credit-notes?draft=true", json.RawMessage(`{"amount": 12.50}`), &out,
		invoicing.WithQuery("notify", "no"), invoicing.WithResponseInto(&resp))
	require.NoError(t, err)
	assert.Equal(t, "cn-1", out.ID)
	assert.Equal(t, "12.50", out.Total.String())
	r := api.last(t)
	assert.Equal(t, "POST", r.Method)
	assert.Equal(t, "/credit-notes", r.Path)
	assert.Equal(t, "draft=true&notify=no", r.Query)
	assert.Equal(t, `{"amount":12.50}`, string(r.Body), "exact, compacted by encoding/json")
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.Equal(t, "Bearer "+testKey, r.Header.Get("Authorization"))
	assert.Equal(t, "r-1", resp.RequestID)

	var raw json.RawMessage
	require.NoError(t, c.Do(context.Background(), "GET", "/credit-notes/cn-1", nil, &raw))
	assert.JSONEq(t, `{"id": "cn-1", "total": 12.50}`, string(raw))
	var b []byte
	require.NoError(t, c.Do(context.Background(), "GET", "/credit-notes/cn-1", nil, &b))
	assert.JSONEq(t, `{"id": "cn-1", "total": 12.50}`, string(b))
	require.NoError(t, c.Do(context.Background(), "HEAD", "/credit-notes/cn-1", nil, nil))
}

func TestDoPathMustStayUnderTheBaseURL(t *testing.T) {
	c, api := newTestAPI(t, always(200, `{}`))
	for _, p := range []string{"", "invoices", "https://evil.example/x", "//evil.example/x", "/a/../../b", "/a/./b",
		"/a//b", "/a#frag", "/a#", "/%zz", "/a?x=%zz", "mailto:x"} {
		err := c.Do(context.Background(), "GET", p, nil, nil)
		var pe *invoicing.ParamError
		assert.ErrorAs(t, err, &pe, "path %q", p)
	}
	for _, m := range []string{"", "GET /x", "G\nET"} {
		assert.Error(t, c.Do(context.Background(), m, "/x", nil, nil), "method %q", m)
	}
	assert.Empty(t, api.requests())
	require.NoError(t, c.Do(context.Background(), "GET", "/a%2Fb/c d", nil, nil))
	assert.Equal(t, "/a/b/c d", api.last(t).Path, "escaped as given")
}

func TestDoErrorsAndRetries(t *testing.T) {
	c, api := newTestAPI(t, always(503, `{"detail": "busy"}`), invoicing.WithClock(newFakeClock()))
	err := c.Do(context.Background(), "POST", "/credit-notes", map[string]string{"a": "b"}, nil)
	require.ErrorIs(t, err, invoicing.ErrServer)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "busy", apiErr.Detail)
	assert.Equal(t, "POST", apiErr.Method)
	assert.Equal(t, "/credit-notes", apiErr.Path)
	assert.Len(t, api.requests(), 1, "a POST is not repeated")
	require.ErrorIs(t, c.Do(context.Background(), "GET", "/credit-notes", nil, nil), invoicing.ErrServer)
	assert.Len(t, api.requests(), 1+4, "a GET is")
	require.ErrorIs(t, c.Do(context.Background(), "PUT", "/credit-notes/x", nil, nil, invoicing.WithIdempotentRetry(), invoicing.WithRetries(1)), invoicing.ErrServer)
	assert.Len(t, api.requests(), 1+4+2)
}
