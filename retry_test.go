package invoicing_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestRateLimitedThenSuccessWaitsRetryAfter(t *testing.T) {
	clk := newFakeClock()
	c, api := newTestAPI(t, sequence(
		always(429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "1"),
		always(200, fixture(t, "invoice.json")),
	), invoicing.WithRetryWait(time.Millisecond, 5*time.Second), invoicing.WithClock(clk))
	inv, err := c.Invoices.Get(context.Background(), invoiceID)
	require.NoError(t, err)
	assert.Equal(t, "INV-0042", inv.InvoiceNumber)
	require.Len(t, clk.waits(), 1)
	wait := clk.waits()[0]
	assert.GreaterOrEqual(t, wait, time.Second, "Retry-After: 1 must be honoured")
	assert.LessOrEqual(t, wait, 1100*time.Millisecond, "plus at most 10% jitter")
	assert.Len(t, api.requests(), 2)
}

func TestRateLimitedRetryAfterHTTPDate(t *testing.T) {
	clk := newFakeClock()
	c, api := newTestAPI(t, sequence(
		func(w http.ResponseWriter, _ *http.Request) {
			reply(w, 429, `{"detail": "slow down"}`, "Retry-After", clk.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))
		},
		always(200, fixture(t, "invoice.json")),
	), invoicing.WithRetryWait(time.Millisecond, 5*time.Second), invoicing.WithClock(clk))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	require.NoError(t, err)
	// HTTP dates have 1-second resolution: the wait is more than 1 s.
	require.Len(t, clk.waits(), 1)
	assert.Greater(t, clk.waits()[0], time.Second)
	assert.LessOrEqual(t, clk.waits()[0], 2200*time.Millisecond)
	assert.Len(t, api.requests(), 2)
}

func TestRateLimitStormReturnsLastTypedError(t *testing.T) {
	clk := newFakeClock()
	c, api := newTestAPI(t, always(429, `{"detail": "Rate limit exceeded"}`, "X-Request-Id", "req-9"), invoicing.WithMaxRetries(3), invoicing.WithClock(clk))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "Rate limit exceeded", apiErr.Detail)
	assert.Equal(t, 4, apiErr.Attempts)
	assert.Equal(t, "req-9", apiErr.RequestID)
	assert.NotContains(t, err.Error(), "giving up")
	assert.Len(t, api.requests(), 4, "1 try + 3 retries")
	assert.Len(t, clk.waits(), 3)
}

func TestRetryAfterBeyondMaxWaitReturnsAtOnce(t *testing.T) {
	clk := newFakeClock()
	c, api := newTestAPI(t, always(429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "120"),
		invoicing.WithRetryWait(time.Millisecond, 10*time.Second), invoicing.WithClock(clk))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	assert.Empty(t, clk.waits(), "no wait at all")
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 120*time.Second, apiErr.RetryAfter)
	assert.Contains(t, err.Error(), "retry after 2m0s")
	assert.Len(t, api.requests(), 1)
}

func TestRetryAfterTooLargeToParseMeansLongerThanMaxWait(t *testing.T) {
	clk := newFakeClock()
	c, api := newTestAPI(t, always(429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "99999999999999999999"),
		invoicing.WithRetryWait(time.Millisecond, 10*time.Second), invoicing.WithClock(clk))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	assert.Empty(t, clk.waits(), "not \"retry now\"")
	assert.Len(t, api.requests(), 1)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 365*24*time.Hour, apiErr.RetryAfter)
}

func TestRetryAfterBeyondDeadlineReturnsAtOnce(t *testing.T) {
	clk := newFakeClock()
	c, api := newTestAPI(t, always(429, `{"detail": "x"}`, "Retry-After", "5"),
		invoicing.WithRetryWait(time.Millisecond, time.Minute), invoicing.WithClock(clk))
	ctx, cancel := context.WithDeadline(context.Background(), clk.Now().Add(2*time.Second))
	defer cancel()
	_, err := c.Invoices.Get(ctx, invoiceID)
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	assert.Empty(t, clk.waits())
	assert.Len(t, api.requests(), 1)
}

func TestContextCancelledDuringBackoff(t *testing.T) {
	clk := newFakeClock()
	defer clk.holdSleeps()()
	c, api := newTestAPI(t, always(503, `{"detail": "busy"}`, "Retry-After", "10"),
		invoicing.WithRetryWait(time.Millisecond, 30*time.Second), invoicing.WithClock(clk))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-clk.sleeping // the client is waiting before its retry
		cancel()
	}()
	_, err := c.Invoices.Get(ctx, invoiceID)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, clk.waits(), 1)
	assert.GreaterOrEqual(t, clk.waits()[0], 10*time.Second, "the wait was Retry-After's")
	assert.Len(t, api.requests(), 1, "the wait ends with the context, and nothing more is sent")
	assert.Contains(t, err.Error(), "invoicing: GET /invoices/"+invoiceID)
}

func TestBackoffGrowsFromASmallFirstWait(t *testing.T) {
	for _, tc := range []struct {
		name     string
		min, max time.Duration
	}{{"min set", 100 * time.Millisecond, 10 * time.Second}, {"min zero", 0, 3200 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			c, _ := newTestAPI(t, always(503, `{"detail": "busy"}`),
				invoicing.WithRetryWait(tc.min, tc.max), invoicing.WithMaxRetries(5), invoicing.WithClock(clk))
			_, err := c.Invoices.Get(context.Background(), invoiceID)
			require.ErrorIs(t, err, invoicing.ErrServer)
			waits := clk.waits()
			require.Len(t, waits, 5)
			first := tc.min
			if first == 0 {
				first = tc.max / 32
			}
			// Equal jitter: retry n waits between half and all of first×2^(n-1).
			for n, w := range waits {
				d := min(first<<n, tc.max)
				assert.GreaterOrEqual(t, w, d/2, "retry %d", n+1)
				assert.LessOrEqual(t, w, d, "retry %d", n+1)
			}
			assert.Less(t, waits[0], tc.max/2, "the first wait is small, not the maximum")
		})
	}
}

func TestCancelledContextSendsNothing(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "invoice.json")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Invoices.Get(ctx, invoiceID)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, api.requests())
}

func TestPostWithoutReferenceNotRepeatedAfter500(t *testing.T) {
	c, api := newTestAPI(t, always(500, `{"detail": "Internal error"}`))
	_, err := c.Invoices.Create(context.Background(), validInvoice())
	require.ErrorIs(t, err, invoicing.ErrServer)
	assert.Len(t, api.requests(), 1)

	c, api = newTestAPI(t, always(500, `{"detail": "Internal error"}`))
	_, err = c.Quotes.Create(context.Background(), validQuote())
	require.ErrorIs(t, err, invoicing.ErrServer)
	assert.Len(t, api.requests(), 1)

	c, api = newTestAPI(t, always(502, `bad gateway`))
	_, err = c.Items.Create(context.Background(), validItem())
	require.ErrorIs(t, err, invoicing.ErrServer)
	assert.Len(t, api.requests(), 1)
}

func TestPostWithReferenceRetriedAfter500(t *testing.T) {
	c, api := newTestAPI(t, sequence(always(500, `{"detail": "oops"}`), always(200, fixture(t, "invoice.json"))))
	p := validInvoice()
	p.Reference = "ERP-7781"
	res, err := c.Invoices.Create(context.Background(), p)
	require.NoError(t, err)
	assert.False(t, res.Created)
	reqs := api.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].Body, reqs[1].Body, "the same body is sent again")
	assert.Contains(t, string(reqs[1].Body), `"reference":"ERP-7781"`)
}

func TestPostRetriedAfter429(t *testing.T) {
	c, api := newTestAPI(t, sequence(always(429, `{"detail": "Rate limit exceeded"}`), always(201, fixture(t, "quote.json"))))
	q, err := c.Quotes.Create(context.Background(), validQuote())
	require.NoError(t, err)
	assert.Equal(t, "QU-0007", q.QuoteNumber)
	assert.Len(t, api.requests(), 2, "a 429 means the request was not processed")
}

func TestOtherClientErrorsNeverRetried(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 409, 422, 501} {
		c, api := newTestAPI(t, always(status, `{"detail": "no"}`))
		_, err := c.Invoices.Get(context.Background(), invoiceID)
		require.Error(t, err)
		assert.Len(t, api.requests(), 1, "status %d", status)
	}
}

// mockClient routes the SDK through an httpmock transport (no global state).
func mockClient(t *testing.T, opts ...invoicing.Option) (*invoicing.Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	opts = append([]invoicing.Option{
		invoicing.WithHTTPClient(&http.Client{Transport: mt}),
		invoicing.WithRetryWait(time.Millisecond, 5*time.Millisecond),
	}, opts...)
	c, err := invoicing.NewClient("https://api.example.test"+prefix, testKey, opts...)
	require.NoError(t, err)
	return c, mt
}

func TestNetworkErrorsRetriedOnlyWhenSafe(t *testing.T) {
	c, mt := mockClient(t)
	reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	mt.RegisterResponder("GET", "https://api.example.test"+prefix+"/invoices/"+invoiceID,
		httpmock.NewErrorResponder(reset).Then(httpmock.NewStringResponder(200, fixture(t, "invoice.json"))))
	mt.RegisterResponder("POST", "https://api.example.test"+prefix+"/invoices", httpmock.NewErrorResponder(reset))

	inv, err := c.Invoices.Get(context.Background(), invoiceID)
	require.NoError(t, err)
	assert.Equal(t, "INV-0042", inv.InvoiceNumber)
	assert.Equal(t, 2, mt.GetCallCountInfo()["GET https://api.example.test"+prefix+"/invoices/"+invoiceID])

	_, err = c.Invoices.Create(context.Background(), validInvoice())
	require.Error(t, err)
	var opErr *net.OpError
	assert.ErrorAs(t, err, &opErr, "the transport error is wrapped, not swallowed")
	assert.Contains(t, err.Error(), "invoicing: POST /invoices")
	assert.Equal(t, 1, mt.GetCallCountInfo()["POST https://api.example.test"+prefix+"/invoices"])

	p := validInvoice()
	p.Reference = "r-9"
	_, err = c.Invoices.Create(context.Background(), p)
	require.Error(t, err)
	assert.Equal(t, 1+4, mt.GetCallCountInfo()["POST https://api.example.test"+prefix+"/invoices"], "with a reference: 1 try + 3 retries")
}

func TestRetriesDisabled(t *testing.T) {
	c, api := newTestAPI(t, always(503, `{"detail": "x"}`), invoicing.WithMaxRetries(0))
	_, err := c.Invoices.Get(context.Background(), invoiceID)
	require.ErrorIs(t, err, invoicing.ErrServer)
	assert.Len(t, api.requests(), 1)
}

func TestRetryAfterParsedOnError(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{{"7", 7 * time.Second}, {"0", 0}, {"-3", 0}, {"soon", 0}, {"", 0},
		{"99999999999", 365 * 24 * time.Hour}, {"Wed, 01 Oct 2200 00:00:00 GMT", 365 * 24 * time.Hour}} {
		c, _ := newTestAPI(t, always(429, `{}`, "Retry-After", tc.header), invoicing.WithMaxRetries(0))
		_, err := c.Invoices.Get(context.Background(), invoiceID)
		var apiErr *invoicing.Error
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, tc.want, apiErr.RetryAfter, "Retry-After %q", tc.header)
		assert.Equal(t, "Too Many Requests", apiErr.Detail)
	}
}
