package invoicing_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// ------------------------------------------- which failures are retried

func TestRetriedOnlyWhenRepeatingIsSafe(t *testing.T) {
	ctx := context.Background()
	idem := []invoicing.RequestOption{invoicing.WithIdempotentRetry()}
	calls := map[string]func(*invoicing.Client, []invoicing.RequestOption) error{
		"GET": func(c *invoicing.Client, o []invoicing.RequestOption) error { return getInvoice(c, o...) },
		"invoice create": func(c *invoicing.Client, o []invoicing.RequestOption) error {
			_, err := c.Invoices.Create(ctx, svcValidInvoice(), o...)
			return err
		},
		"invoice create with reference": func(c *invoicing.Client, o []invoicing.RequestOption) error {
			p := svcValidInvoice()
			p.Reference = "ERP-7781"
			_, err := c.Invoices.Create(ctx, p, o...)
			return err
		},
		"quote create": func(c *invoicing.Client, o []invoicing.RequestOption) error {
			_, err := c.Quotes.Create(ctx, svcValidQuote(), o...)
			return err
		},
		"item create": func(c *invoicing.Client, o []invoicing.RequestOption) error {
			_, err := c.Items.Create(ctx, svcValidItem(), o...)
			return err
		},
	}
	for _, tc := range []struct {
		call   string
		status int
		opts   []invoicing.RequestOption
		sends  int // with WithMaxRetries(2)
	}{
		{"GET", 500, nil, 3}, {"GET", 502, nil, 3}, {"GET", 503, nil, 3}, {"GET", 504, nil, 3}, {"GET", 599, nil, 3},
		{"GET", 501, nil, 1},
		{"GET", 400, nil, 1}, {"GET", 401, nil, 1}, {"GET", 403, nil, 1}, {"GET", 404, nil, 1}, {"GET", 409, nil, 1}, {"GET", 422, nil, 1},
		{"GET", 429, nil, 3},
		{"invoice create", 500, nil, 1}, {"invoice create", 503, nil, 1}, {"invoice create", 429, nil, 3},
		{"invoice create with reference", 500, nil, 3}, {"invoice create with reference", 409, nil, 1},
		{"invoice create with reference", 501, nil, 1},
		{"quote create", 500, nil, 1}, {"quote create", 429, nil, 3}, {"item create", 502, nil, 1},
		{"quote create", 503, idem, 3}, {"item create", 500, idem, 3},
		{"invoice create", 409, idem, 1}, {"item create", 422, idem, 1}, {"quote create", 501, idem, 1},
	} {
		t.Run(fmt.Sprintf("%s %d %d", tc.call, tc.status, len(tc.opts)), func(t *testing.T) {
			c, api := newMock(t, always(tc.status, `{"detail": "no"}`), invoicing.WithMaxRetries(2))
			var resp invoicing.Response
			err := calls[tc.call](c, append(tc.opts, invoicing.WithResponseInto(&resp)))
			e := apiError(t, err)
			assert.Equal(t, tc.status, e.StatusCode)
			assert.Len(t, api.requests(), tc.sends)
			assert.Equal(t, tc.sends, e.Attempts)
			assert.Equal(t, tc.sends, resp.Attempts)
		})
	}
}

func TestRetriesDisabled(t *testing.T) {
	c, api := newMock(t, always(503, `{"detail": "x"}`), invoicing.WithMaxRetries(0))
	require.ErrorIs(t, getInvoice(c), invoicing.ErrServer)
	assert.Len(t, api.requests(), 1)
}

func TestInvoiceCreateWithReferenceIsRepeatedWithTheSameBody(t *testing.T) {
	c, api := newMock(t, sequence(always(500, `{"detail": "oops"}`), always(200, fixture(t, "invoice.json"))))
	p := svcValidInvoice()
	p.Reference = "ERP-7781"
	res, err := c.Invoices.Create(context.Background(), p)
	require.NoError(t, err)
	assert.False(t, res.Created, "200: the existing invoice")
	reqs := api.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].Body, reqs[1].Body, "the same body is sent again")
	assert.Contains(t, string(reqs[1].Body), `"reference":"ERP-7781"`)
}

func TestCreateRepeatedAfter429(t *testing.T) {
	c, api := newMock(t, sequence(always(429, `{"detail": "Rate limit exceeded"}`), always(201, fixture(t, "quote.json"))))
	q, err := c.Quotes.Create(context.Background(), svcValidQuote())
	require.NoError(t, err)
	assert.Equal(t, "QU-0007", q.QuoteNumber)
	assert.Len(t, api.requests(), 2, "a 429 means the request was not processed")
}

func TestNetworkErrorsRetriedOnlyWhenSafe(t *testing.T) {
	ctx := context.Background()
	reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	invoice := httpmock.NewStringResponder(200, fixture(t, "invoice.json"))

	t.Run("GET", func(t *testing.T) {
		c, api := newMock(t, responders(httpmock.NewErrorResponder(reset), invoice))
		inv, err := c.Invoices.Get(ctx, idInvoice)
		require.NoError(t, err)
		assert.Equal(t, "INV-0042", inv.InvoiceNumber)
		assert.Equal(t, 2, len(api.requests()))
	})
	t.Run("create", func(t *testing.T) {
		c, api := newMock(t, httpmock.NewErrorResponder(reset))
		var resp invoicing.Response
		_, err := c.Invoices.Create(ctx, svcValidInvoice(), invoicing.WithResponseInto(&resp))
		var opErr *net.OpError
		require.ErrorAs(t, err, &opErr, "the transport error is wrapped, not swallowed")
		assert.Contains(t, err.Error(), "invoicing: POST /invoices: ")
		assert.Contains(t, err.Error(), "connection reset by peer")
		assert.Equal(t, 1, len(api.requests()))
		assert.Equal(t, invoicing.Response{Attempts: 1, Duration: resp.Duration}, resp, "no status, no header")
	})
	t.Run("create with reference", func(t *testing.T) {
		c, api := newMock(t, httpmock.NewErrorResponder(reset), invoicing.WithMaxRetries(2))
		p := svcValidInvoice()
		p.Reference = "r-9"
		_, err := c.Invoices.Create(ctx, p)
		require.ErrorContains(t, err, "connection reset by peer")
		assert.True(t, strings.HasSuffix(err.Error(), "(after 3 attempts)"), err.Error())
		assert.Equal(t, 3, len(api.requests()))
	})
	t.Run("create with WithIdempotentRetry", func(t *testing.T) {
		c, api := newMock(t, httpmock.NewErrorResponder(reset))
		_, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{SupplierID: idInvoice}, invoicing.WithIdempotentRetry())
		require.Error(t, err)
		assert.Equal(t, 1+3, len(api.requests()), "1 try + the default 3 retries")
	})
	t.Run("body cut short", func(t *testing.T) {
		cut := func(r *http.Request) (*http.Response, error) {
			resp := httpmock.NewStringResponse(200, "")
			resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"id": "`), iotestErr{io.ErrUnexpectedEOF}))
			return resp, nil
		}
		c, api := newMock(t, responders(cut, invoice))
		inv, err := c.Invoices.Get(ctx, idInvoice)
		require.NoError(t, err, "a broken body is a network error: a GET is repeated")
		assert.Equal(t, "INV-0042", inv.InvoiceNumber)
		assert.Equal(t, 2, len(api.requests()))

		c, api = newMock(t, responders(cut, invoice))
		_, err = c.Invoices.Create(ctx, svcValidInvoice())
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.Contains(t, err.Error(), "invoicing: reading POST /invoices response")
		assert.Equal(t, 1, len(api.requests()), "a create is not")
	})
}

type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

// Failures that a second try cannot mend are not retried, even for a GET.
func TestPermanentTransportErrorsAreNotRetried(t *testing.T) {
	for name, failure := range map[string]error{
		"certificate":      &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}},
		"unknown CA":       x509.UnknownAuthorityError{},
		"invalid cert":     x509.CertificateInvalidError{Reason: x509.Expired},
		"host name":        x509.HostnameError{Host: "api.invoicing.test", Certificate: &x509.Certificate{}},
		"not TLS":          tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"},
		"scheme mismatch":  http.ErrSchemeMismatch,
		"response too big": fmt.Errorf("middleware: %w", invoicing.ErrResponseTooLarge),
	} {
		t.Run(name, func(t *testing.T) {
			c, api := newMock(t, httpmock.NewErrorResponder(failure))
			err := getInvoice(c)
			require.Error(t, err)
			assert.Equal(t, 1, len(api.requests()))
		})
	}
}

// ------------------------------------------------------------------ waits

func TestBackoffGrowsFromASmallFirstWait(t *testing.T) {
	for _, tc := range []struct {
		name     string
		min, max time.Duration
		want     []time.Duration
	}{
		{"min set", 10 * time.Millisecond, 80 * time.Millisecond, []time.Duration{10, 20, 40, 80, 80}},
		{"min zero: a 32nd of max", 0, 320 * time.Millisecond, []time.Duration{10, 20, 40, 80, 160}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logRecorder{}
			var arr arrivals
			c, _ := newMock(t, arr.wrap(always(503, `{"detail": "busy"}`)),
				invoicing.WithRetryWait(tc.min, tc.max), invoicing.WithMaxRetries(5), logs.logger())
			require.ErrorIs(t, getInvoice(c), invoicing.ErrServer)
			for i := range tc.want {
				tc.want[i] *= time.Millisecond
			}
			assert.Equal(t, tc.want, logs.waits(), "exponential, capped at max")
			// Equal jitter: the wait before retry n is at least half its bound.
			at := arr.times()
			require.Len(t, at, 6)
			for i, w := range tc.want {
				assert.GreaterOrEqual(t, at[i+1].Sub(at[i]), w/2, "retry %d", i+1)
			}
		})
	}
}

func TestRetryAfterSecondsIsHonouredWithAtMostTenPercentJitter(t *testing.T) {
	t.Parallel() // waits a second
	logs := &logRecorder{}
	var arr arrivals
	c, _ := newMock(t, arr.wrap(sequence(
		always(429, `{"detail": "Rate limit exceeded"}`, "Retry-After", "1"),
		always(200, fixture(t, "invoice.json")),
	)), invoicing.WithRetryWait(time.Millisecond, 5*time.Second), logs.logger())
	inv, err := c.Invoices.Get(context.Background(), idInvoice)
	require.NoError(t, err)
	assert.Equal(t, "INV-0042", inv.InvoiceNumber)
	at := arr.times()
	require.Len(t, at, 2)
	assert.GreaterOrEqual(t, at[1].Sub(at[0]), time.Second, "Retry-After: 1 is honoured")
	assert.Equal(t, []time.Duration{1100 * time.Millisecond}, logs.waits(), "plus at most 10%")
}

func TestRetryAfterHTTPDateIsHonoured(t *testing.T) {
	t.Parallel() // waits one to two seconds
	logs := &logRecorder{}
	var arr arrivals
	c, _ := newMock(t, arr.wrap(sequence(
		func(w http.ResponseWriter, _ *http.Request) {
			reply(w, 429, `{"detail": "slow down"}`, "Retry-After", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))
		},
		always(200, fixture(t, "invoice.json")),
	)), invoicing.WithRetryWait(time.Millisecond, 5*time.Second), logs.logger())
	require.NoError(t, getInvoice(c))
	at := arr.times()
	require.Len(t, at, 2)
	// The date has 1-second resolution: it is more than 1 s after the 429.
	assert.Greater(t, at[1].Sub(at[0]), time.Second)
	waits := logs.waits()
	require.Len(t, waits, 1)
	assert.Positive(t, waits[0])
	assert.LessOrEqual(t, waits[0], 2200*time.Millisecond)
}

func TestRetryAfterBeyondTheMaximumWaitReturnsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		status   int
		header   string
		want     time.Duration
		sentinel error
	}{
		{429, "120", 120 * time.Second, invoicing.ErrRateLimited},
		{429, "99999999999999999999", 365 * 24 * time.Hour, invoicing.ErrRateLimited}, // too large to parse: longer than any wait
		{503, "120", 120 * time.Second, invoicing.ErrServer},
	} {
		t.Run(strconv.Itoa(tc.status)+" "+tc.header, func(t *testing.T) {
			logs := &logRecorder{}
			c, api := newMock(t, always(tc.status, `{"detail": "Rate limit exceeded"}`, "Retry-After", tc.header),
				invoicing.WithRetryWait(time.Millisecond, 10*time.Second), logs.logger())
			err := getInvoice(c)
			require.ErrorIs(t, err, tc.sentinel)
			e := apiError(t, err)
			assert.Equal(t, tc.want, e.RetryAfter)
			assert.Equal(t, 1, e.Attempts)
			assert.Contains(t, err.Error(), "retry after "+tc.want.String())
			assert.Empty(t, logs.waits(), "no wait at all")
			assert.Len(t, api.requests(), 1)
		})
	}
}

func TestRetryAfterBeyondTheDeadlineReturnsAtOnce(t *testing.T) {
	logs := &logRecorder{}
	c, api := newMock(t, always(429, `{"detail": "x"}`, "Retry-After", "5"),
		invoicing.WithRetryWait(time.Millisecond, time.Minute), logs.logger())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.Invoices.Get(ctx, idInvoice)
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 5*time.Second, apiError(t, err).RetryAfter)
	assert.Empty(t, logs.waits())
	assert.Len(t, api.requests(), 1)
}

func TestRateLimitStormReturnsTheLastTypedError(t *testing.T) {
	logs := &logRecorder{}
	c, api := newMock(t, always(429, `{"detail": "Rate limit exceeded"}`, "X-Request-Id", "req-9"),
		invoicing.WithMaxRetries(3), logs.logger())
	err := getInvoice(c)
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	e := apiError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, e.StatusCode)
	assert.Equal(t, "Rate limit exceeded", e.Detail)
	assert.Equal(t, 4, e.Attempts)
	assert.Equal(t, "req-9", e.RequestID)
	assert.NotContains(t, err.Error(), "giving up")
	assert.Equal(t, "invoicing: GET /invoices/"+idInvoice+`: 429 Too Many Requests: "Rate limit exceeded" (after 4 attempts)`, err.Error())
	assert.Len(t, api.requests(), 4, "1 try + 3 retries")
	assert.Len(t, logs.waits(), 3)
}

// ------------------------------------------------ the pause after a 429

// shortDeadline returns a context whose deadline, half a second away,
// comes before a 1-second pause ends.
func shortDeadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

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

	// The call that meets the 429 cannot wait a second: it returns at once.
	_, err := c.Invoices.Get(shortDeadline(t), idInvoice, invoicing.WithHeader("X-Test", "limit"))
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	assert.Equal(t, 1, apiError(t, err).Attempts)
	mu.Lock()
	limited := seen[0].at
	mu.Unlock()

	// The next call with the same key, whose deadline comes before the
	// pause ends, sends nothing and gets the 429 at once.
	var resp invoicing.Response
	_, err = c.Items.Get(shortDeadline(t), idItem, invoicing.WithResponseInto(&resp))
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
	_, err = c.Invoices.Get(shortDeadline(t), idInvoice, invoicing.WithAPIKey(tenant))
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
	_, err := c.Invoices.Get(shortDeadline(t), idInvoice, invoicing.WithAPIKey(tenantA), invoicing.WithHeader("X-Test", "limit"))
	require.ErrorIs(t, err, invoicing.ErrRateLimited)
	limited := arr.times()[0]

	_, err = c.Invoices.Get(shortDeadline(t), idInvoice, invoicing.WithAPIKey(tenantA))
	require.ErrorIs(t, err, invoicing.ErrRateLimited, "A is paused")
	assert.Zero(t, apiError(t, err).Attempts)
	assert.EqualValues(t, 1, sent.Load())

	_, err = c.Invoices.Get(shortDeadline(t), idInvoice, invoicing.WithAPIKey(tenantB))
	require.NoError(t, err, "B is not")
	_, err = c.Invoices.Get(shortDeadline(t), idInvoice)
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

// ------------------------------------------------------------ rate limit

func TestRateLimitSpacesRequests(t *testing.T) {
	var arr arrivals
	c, _ := newMock(t, arr.wrap(always(200, fixture(t, "invoice.json"))), invoicing.WithRateLimit(20, 2))
	start := time.Now()
	for range 6 {
		require.NoError(t, getInvoice(c))
	}
	at := arr.times()
	require.Len(t, at, 6)
	// A burst of 2, then one request every 50 ms.
	for k := 2; k < 6; k++ {
		assert.GreaterOrEqual(t, at[k].Sub(start), time.Duration(k-1)*50*time.Millisecond-time.Millisecond, "request %d", k+1)
	}

	// Every attempt counts, retries included.
	var arr2 arrivals
	c, _ = newMock(t, arr2.wrap(sequence(always(503, `{"detail": "busy"}`), always(200, fixture(t, "invoice.json")))),
		invoicing.WithRateLimit(20, 1), invoicing.WithRetryWait(0, 0))
	start = time.Now()
	require.NoError(t, getInvoice(c))
	at = arr2.times()
	require.Len(t, at, 2)
	assert.GreaterOrEqual(t, at[1].Sub(start), 49*time.Millisecond)
}

func TestRateLimitWaitEndsWithTheContext(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "invoice.json")), invoicing.WithRateLimit(0.01, 1))
	require.NoError(t, getInvoice(c))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Invoices.Get(ctx, idInvoice)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Len(t, api.requests(), 1)
}

// ------------------------------------------------- per-attempt deadline

func TestStalledServerEndsEachAttempt(t *testing.T) {
	c, api := newMock(t, stallHeaders, invoicing.WithTimeout(100*time.Millisecond), invoicing.WithMaxRetries(2))
	var resp invoicing.Response
	err := getInvoice(c, invoicing.WithResponseInto(&resp))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var netErr net.Error
	require.ErrorAs(t, err, &netErr)
	assert.True(t, netErr.Timeout())
	assert.Contains(t, err.Error(), "no complete response within 100ms (per-attempt timeout)")
	assert.Equal(t, 3, len(api.requests()), "a stall is a network error: a GET is repeated")
	assert.Equal(t, 3, resp.Attempts)
	assert.Zero(t, resp.StatusCode)

	c, api = newMock(t, stallHeaders, invoicing.WithTimeout(100*time.Millisecond))
	_, err = c.Quotes.Create(context.Background(), svcValidQuote(), invoicing.WithResponseInto(&resp))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 1, len(api.requests()), "a create without a reference is not repeated")
	assert.Equal(t, 1, resp.Attempts)
}

// A context deadline shorter than WithTimeout ends the call with the
// context's error, and nothing is repeated after it.
func TestContextDeadlineBeforeTheAttemptDeadline(t *testing.T) {
	c, api := newMock(t, stallHeaders, invoicing.WithTimeout(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Invoices.Get(ctx, idInvoice)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotContains(t, err.Error(), "per-attempt")
	assert.Contains(t, err.Error(), "invoicing: GET /invoices/"+idInvoice+": context deadline exceeded")
	assert.Equal(t, 1, len(api.requests()))
}

// ------------------------------------------------------------- contexts

func TestEndedContextSendsNothing(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "invoice.json")))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	var resp invoicing.Response
	_, err := c.Invoices.Get(cancelled, idInvoice, invoicing.WithResponseInto(&resp))
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, resp.Attempts)

	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err = c.Invoices.Create(expired, svcValidInvoice())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, c.Do(expired, "GET", "/invoices", nil, nil), context.DeadlineExceeded)
	assert.Empty(t, api.requests())

	var none context.Context
	_, err = c.Invoices.Get(none, idInvoice)
	assert.EqualError(t, err, "invoicing: nil context")
}

func TestContextCancelledDuringARequest(t *testing.T) {
	arrived := make(chan struct{})
	c, api := newMock(t, func(r *http.Request) (*http.Response, error) {
		close(arrived)
		<-r.Context().Done()
		return nil, r.Context().Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := c.Invoices.Get(ctx, idInvoice)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "invoicing: GET /invoices/"+idInvoice+": ")
	assert.Equal(t, 1, len(api.requests()), "not repeated")
}

func TestContextCancelledDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	logs := &logRecorder{on: func(r slog.Record) {
		if r.Message == "invoicing: retrying" {
			cancel() // the client is about to wait before its retry
		}
	}}
	c, api := newMock(t, always(503, `{"detail": "busy"}`, "Retry-After", "10"),
		invoicing.WithRetryWait(time.Millisecond, 30*time.Second), logs.logger())
	start := time.Now()
	_, err := c.Invoices.Get(ctx, idInvoice)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 5*time.Second, "the wait ended with the context")
	require.Len(t, logs.waits(), 1)
	assert.GreaterOrEqual(t, logs.waits()[0], 10*time.Second, "the wait was Retry-After's")
	assert.Len(t, api.requests(), 1, "nothing more is sent")
	assert.Contains(t, err.Error(), "invoicing: GET /invoices/"+idInvoice)
}

// ------------------------------------------------- error and odd bodies

func TestHTMLErrorPageGivesAUsefulError(t *testing.T) {
	html := fixture(t, "error_502.html")
	c, api := newMock(t, always(502, html, "Content-Type", "text/html"), invoicing.WithMaxRetries(1))
	err := getInvoice(c)
	require.ErrorIs(t, err, invoicing.ErrServer)
	e := apiError(t, err)
	assert.Equal(t, 502, e.StatusCode)
	assert.Equal(t, "Bad Gateway", e.Detail, "the status text, not the page")
	assert.Equal(t, html, string(e.Body), "the page is kept")
	assert.Equal(t, "text/html", e.Header.Get("Content-Type"))
	assert.Equal(t, "invoicing: GET /invoices/"+idInvoice+": 502 Bad Gateway (after 2 attempts)", err.Error())
	assert.Len(t, api.requests(), 2, "a GET is retried after a 5xx")
}

func TestMalformedSuccessBodyIsADecodeErrorNotRetried(t *testing.T) {
	for name, body := range map[string]string{
		"truncated": `{"id": "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f", "total": 1`,
		"html":      `<html>ok</html>`,
		"bad money": `{"total": "twelve"}`,
		"bad date":  `{"issue_date": "01/11/2026"}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, api := newMock(t, always(200, body))
			err := getInvoice(c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "invoicing: decoding GET /invoices/"+idInvoice+" response: ")
			var e *invoicing.Error
			assert.False(t, errors.As(err, &e), "a decode failure is not an API error")
			assert.Len(t, api.requests(), 1)
		})
	}
	// A body that is not an object: TestServicesNonObjectSuccessIsAnError.
}
