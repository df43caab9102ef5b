package invoicing_test

// What goes wrong, end to end: keys and scopes (API.md 5), the errors of
// API.md 7 and what a proxy or a rate limiter in front of the service
// sends, retries and their rules, deadlines (the context's for a call,
// WithTimeout's for each attempt), the per-key pause after a 429, and the
// first mistakes a new user makes.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

func TestE2EAuthentication(t *testing.T) {
	ctx := t.Context()
	srv, full := e2eServer(t)
	item := &invoicing.ItemCreateParams{
		Name: "Forbidden", UnitPrice: invoicing.Ptr(e2eD("1")),
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	}

	t.Run("read-only key: reads work, writes are 403", func(t *testing.T) {
		ro := newClient(t, srv.URL, srv.ReadOnlyKey, e2eFast)
		_, err := ro.Invoices.ListPage(ctx, nil)
		require.NoError(t, err)
		before := len(srv.Requests())
		_, err = ro.Items.Create(ctx, item)
		assert.ErrorIs(t, err, invoicing.ErrForbidden)
		e2eAPIError(t, err, http.StatusForbidden)
		_, err = ro.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("x", "1", "1")))
		assert.ErrorIs(t, err, invoicing.ErrForbidden)
		_, err = ro.Quotes.Create(ctx, e2eQuote(invoicingtest.SeedClientID, e2eLine("x", "1", "1")))
		assert.ErrorIs(t, err, invoicing.ErrForbidden)
		assert.Len(t, srv.Requests(), before+3, "a 403 is not retried")
		assert.Len(t, e2eAll(t, full.Items.List(ctx, nil)), 1, "nothing was created")
	})

	t.Run("bad key is 401", func(t *testing.T) {
		const badKey = "sk_test_not_a_key_of_this_business_0000"
		bad := newClient(t, srv.URL, badKey, e2eFast)
		before := len(srv.Requests())
		_, err := bad.Invoices.ListPage(ctx, nil)
		assert.ErrorIs(t, err, invoicing.ErrUnauthorized)
		e2eAPIError(t, err, http.StatusUnauthorized)
		assert.NotContains(t, err.Error(), badKey)
		assert.Len(t, srv.Requests(), before+1, "a 401 is not retried")
	})

	t.Run("scoped and revoked keys", func(t *testing.T) {
		key := srv.NewAPIKey(invoicingtest.ScopeInvoicesRead)
		scoped := newClient(t, srv.URL, key, e2eFast)
		_, err := scoped.Invoices.ListPage(ctx, nil)
		require.NoError(t, err)
		_, err = scoped.Quotes.ListPage(ctx, nil)
		assert.ErrorIs(t, err, invoicing.ErrForbidden, "quotes:read is missing")
		srv.RevokeAPIKey(key)
		_, err = scoped.Invoices.ListPage(ctx, nil)
		assert.ErrorIs(t, err, invoicing.ErrUnauthorized)
	})
}

// One Client serves several keys (WithAPIKey): each call is sent with its
// own key, held as secretly as the Client's, and a 429 pauses only the
// calls made with the key that met it.
func TestE2EPerCallAPIKey(t *testing.T) {
	ctx := t.Context()
	srv := invoicingtest.NewTestServer(t)
	keyA, keyB := srv.NewAPIKey(invoicingtest.AllScopes()...), srv.NewAPIKey(invoicingtest.AllScopes()...)
	// No retries, and Retry-After honoured up to a minute: a 429 pauses its
	// key, and the call that met it returns at once.
	c := newClient(t, srv.URL, srv.FullKey, invoicing.WithMaxRetries(0), invoicing.WithRetryWait(time.Millisecond, time.Minute))

	// The key decides: the read-only key cannot write, whitespace around a
	// key is trimmed, a revoked key is refused.
	_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
		Name: "x", UnitPrice: invoicing.Ptr(e2eD("1")), AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	}, invoicing.WithAPIKey(srv.ReadOnlyKey))
	assert.ErrorIs(t, err, invoicing.ErrForbidden)
	_, err = c.Invoices.ListPage(ctx, nil, invoicing.WithAPIKey(" "+keyB+"\n"))
	require.NoError(t, err)
	revoked := srv.NewAPIKey(invoicingtest.AllScopes()...)
	srv.RevokeAPIKey(revoked)
	_, err = c.Invoices.ListPage(ctx, nil, invoicing.WithAPIKey(revoked))
	assert.ErrorIs(t, err, invoicing.ErrUnauthorized)

	// Key A meets a 429 asking for 20 s: it returns at once (no retries),
	// and A's next call, whose deadline falls inside the pause, gets the
	// 429 without sending anything.
	srv.RateLimitNext(1, 20*time.Second)
	var info invoicing.Response
	_, err = c.Invoices.ListPage(ctx, nil, invoicing.WithAPIKey(keyA), invoicing.WithResponseInto(&info))
	apiErr := e2eAPIError(t, err, http.StatusTooManyRequests)
	assert.Equal(t, 20*time.Second, apiErr.RetryAfter)
	assert.Equal(t, 1, info.Attempts)
	sent := len(srv.Requests())
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = c.Invoices.ListPage(short, nil, invoicing.WithAPIKey(keyA), invoicing.WithResponseInto(&info))
	apiErr = e2eAPIError(t, err, http.StatusTooManyRequests)
	assert.ErrorIs(t, err, invoicing.ErrRateLimited, "A is paused")
	assert.Zero(t, apiErr.Attempts, "nothing was sent")
	assert.Zero(t, info.Attempts)
	assert.Positive(t, apiErr.RetryAfter, "what is left of the pause")
	assert.LessOrEqual(t, apiErr.RetryAfter, 20*time.Second)
	assert.Len(t, srv.Requests(), sent)
	// Key B and the Client's own key are not paused: a pause would outlast
	// the 5 s deadline and fail these calls at once.
	_, err = c.Invoices.ListPage(short, nil, invoicing.WithAPIKey(keyB))
	require.NoError(t, err)
	_, err = c.Invoices.ListPage(short, nil)
	require.NoError(t, err)
	assert.Len(t, srv.Requests(), sent+2)

	// A bad key is an invalid option; no key is ever shown.
	for _, bad := range []string{"Bearer " + keyA, "sk tenant", ""} {
		_, err = c.Invoices.ListPage(ctx, nil, invoicing.WithAPIKey(bad))
		require.ErrorIs(t, err, invoicing.ErrInvalidOption, bad)
		assert.NotContains(t, err.Error(), keyA)
	}
	assert.Len(t, srv.Requests(), sent+2)
	opt := invoicing.WithAPIKey(keyA)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		assert.NotContains(t, fmt.Sprintf(verb, opt), keyA, verb)
		assert.NotContains(t, fmt.Sprintf(verb, c), srv.FullKey, verb)
	}
}

// A 429's Retry-After is waited for before the retry: the service's has a
// resolution of 1 s, waited for real (in parallel with the other tests).
func TestE2ERetryAfterIsWaited(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := invoicingtest.NewTestServer(t)
	log := &logRecorder{}
	c := newClient(t, srv.URL, srv.FullKey, e2eFast, log.logger())
	inv, err := c.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("x", "1", "1")))
	require.NoError(t, err)
	srv.RateLimitNext(1, time.Second)
	var info invoicing.Response
	got, err := c.Invoices.Get(ctx, inv.ID, invoicing.WithResponseInto(&info))
	require.NoError(t, err)
	assert.Equal(t, inv.ID, got.ID)
	assert.Equal(t, 2, info.Attempts)
	assert.Equal(t, http.StatusOK, info.StatusCode)
	require.Len(t, log.waits(), 1)
	assert.GreaterOrEqual(t, log.waits()[0], time.Second, "the SDK waits for Retry-After")
	reqs := e2eRequests(srv, http.MethodGet, "/invoices/"+inv.ID)
	require.Len(t, reqs, 2)
	assert.Equal(t, http.StatusTooManyRequests, reqs[0].Status)
	assert.True(t, reqs[0].Fault)
	assert.Equal(t, http.StatusOK, reqs[1].Status)
	assert.GreaterOrEqual(t, reqs[1].At.Sub(reqs[0].At), time.Second, "the retry came after Retry-After")
	assert.GreaterOrEqual(t, info.Duration, time.Second)
}

func TestE2EFaults(t *testing.T) {
	ctx := t.Context()

	t.Run("429 asking longer than the maximum wait returns at once", func(t *testing.T) {
		srv := invoicingtest.NewTestServer(t)
		log := &logRecorder{}
		c := newClient(t, srv.URL, srv.FullKey, e2eFast, log.logger())
		srv.RateLimitNext(1, 30*time.Second)
		_, err := c.Quotes.ListPage(ctx, nil)
		assert.Empty(t, log.waits(), "no wait at all")
		assert.ErrorIs(t, err, invoicing.ErrRateLimited)
		apiErr := e2eAPIError(t, err, http.StatusTooManyRequests)
		assert.Equal(t, 30*time.Second, apiErr.RetryAfter)
		assert.Equal(t, "Rate limit exceeded", apiErr.Detail)
		assert.Len(t, e2eRequests(srv, http.MethodGet, "/quotes"), 1)
	})

	t.Run("500 on POST /quotes is not retried", func(t *testing.T) {
		srv, c := e2eServer(t)
		srv.FailNext(1, http.StatusInternalServerError)
		_, err := c.Quotes.Create(ctx, e2eQuote(invoicingtest.SeedClientID, e2eLine("x", "1", "1")))
		assert.ErrorIs(t, err, invoicing.ErrServer)
		e2eAPIError(t, err, http.StatusInternalServerError)
		assert.Len(t, e2eRequests(srv, http.MethodPost, "/quotes"), 1, "exactly one request")
		page, err := c.Quotes.ListPage(ctx, nil)
		require.NoError(t, err)
		assert.Zero(t, page.Total)
	})

	t.Run("500 on a GET is retried", func(t *testing.T) {
		srv, c := e2eServer(t)
		srv.FailNext(1, http.StatusInternalServerError)
		page, err := c.Items.ListPage(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, 1, page.Total, "the seed item")
		reqs := e2eRequests(srv, http.MethodGet, "/items")
		require.Len(t, reqs, 2)
		assert.Equal(t, http.StatusInternalServerError, reqs[0].Status)
		assert.Equal(t, http.StatusOK, reqs[1].Status)
	})

	t.Run("5xx on an invoice create is retried only with a reference", func(t *testing.T) {
		srv, c := e2eServer(t)
		srv.FailNext(1, http.StatusServiceUnavailable)
		p := e2eInvoice(invoicingtest.SeedClientID, e2eLine("Import", "1", "10"))
		p.Reference = "IMPORT-42"
		res, err := c.Invoices.Create(ctx, p)
		require.NoError(t, err)
		assert.True(t, res.Created)
		assert.Len(t, e2eRequests(srv, http.MethodPost, "/invoices"), 2)

		srv.FailNext(1, http.StatusServiceUnavailable)
		_, err = c.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("No reference", "1", "10")))
		assert.ErrorIs(t, err, invoicing.ErrServer)
		assert.Len(t, e2eRequests(srv, http.MethodPost, "/invoices"), 3, "without a reference a create is never repeated")

		srv.FailNext(1, http.StatusServiceUnavailable)
		_, err = c.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("Caller says safe", "1", "10")), invoicing.WithIdempotentRetry())
		require.NoError(t, err)
		assert.Len(t, e2eRequests(srv, http.MethodPost, "/invoices"), 5, "WithIdempotentRetry repeats it")
		assert.Len(t, e2eAll(t, c.Invoices.List(ctx, nil)), 2)
	})

	t.Run("proxy 502 page gives ErrServer with a useful detail", func(t *testing.T) {
		srv, c := e2eServer(t)
		srv.ProxyErrorNext(1)
		_, err := c.Quotes.Create(ctx, e2eQuote(invoicingtest.SeedClientID, e2eLine("x", "1", "1")))
		assert.ErrorIs(t, err, invoicing.ErrServer)
		apiErr := e2eAPIError(t, err, http.StatusBadGateway)
		assert.Equal(t, http.StatusText(http.StatusBadGateway), apiErr.Detail, "the HTML page is not the detail")
		assert.Equal(t, invoicingtest.ProxyErrorPage, string(apiErr.Body), "the raw page is kept")
		assert.Equal(t, http.MethodPost, apiErr.Method)
		assert.Equal(t, "/quotes", apiErr.Path)
		assert.Contains(t, err.Error(), "502")
		assert.Contains(t, err.Error(), "POST /quotes")
		assert.NotContains(t, err.Error(), "<html>")

		// A GET is retried; when the proxy keeps failing the last 502 surfaces.
		srv.ProxyErrorNext(e2eDefaultRetries + 1)
		var info invoicing.Response
		_, err = c.Invoices.ListPage(ctx, nil, invoicing.WithResponseInto(&info))
		assert.ErrorIs(t, err, invoicing.ErrServer)
		apiErr = e2eAPIError(t, err, http.StatusBadGateway)
		assert.Equal(t, e2eDefaultRetries+1, apiErr.Attempts)
		assert.Equal(t, e2eDefaultRetries+1, info.Attempts)
		assert.Len(t, e2eRequests(srv, http.MethodGet, "/invoices"), e2eDefaultRetries+1)
	})
}

// A call's own deadline is its context's; every attempt also has the
// Client's WithTimeout, after which a GET is retried.
func TestE2EDeadlines(t *testing.T) {
	ctx := t.Context()
	srv := invoicingtest.NewTestServer(t)
	srv.SetLatency(time.Minute, 0) // a service that does not answer

	t.Run("the context's deadline ends the call", func(t *testing.T) {
		c := newClient(t, srv.URL, srv.FullKey, e2eFast)
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.Invoices.ListPage(short, nil)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 30*time.Second, "not the service's minute")
	})

	t.Run("a cancelled context sends nothing", func(t *testing.T) {
		c := newClient(t, srv.URL, srv.FullKey, e2eFast)
		done, cancel := context.WithCancel(ctx)
		cancel()
		var info invoicing.Response
		_, err := c.Invoices.Get(done, uuid.NewString(), invoicing.WithResponseInto(&info))
		assert.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, info.Attempts)
		for _, err := range c.Invoices.List(done, nil) {
			assert.ErrorIs(t, err, context.Canceled)
		}
	})

	t.Run("WithTimeout bounds each attempt; a GET is retried, a create is not", func(t *testing.T) {
		c := newClient(t, srv.URL, srv.FullKey, e2eFast, invoicing.WithTimeout(50*time.Millisecond), invoicing.WithMaxRetries(1))
		var info invoicing.Response
		_, err := c.Invoices.ListPage(ctx, nil, invoicing.WithResponseInto(&info))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, ctx.Err(), context.DeadlineExceeded, "the caller's context is fine")
		assert.Equal(t, 2, info.Attempts)
		assert.Contains(t, err.Error(), "after 2 attempts")

		// A server that answers a create after the attempt's deadline (net/http
		// cannot tell that the client went away before reading the body, so
		// invoicingtest handles it after its latency): the create may have
		// happened, and is not repeated.
		slow := invoicingtest.NewTestServer(t, invoicingtest.WithLatency(300*time.Millisecond, 0))
		c = newClient(t, slow.URL, slow.FullKey, e2eFast, invoicing.WithTimeout(50*time.Millisecond), invoicing.WithMaxRetries(1))
		_, err = c.Quotes.Create(ctx, e2eQuote(invoicingtest.SeedClientID, e2eLine("x", "1", "1")), invoicing.WithResponseInto(&info))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 1, info.Attempts, "a create that may have happened is not repeated")
	})
}

// The first mistakes a new user makes explain themselves, against the
// service itself (errors_test.go has the same checks against a mock).
func TestE2EFirstHour(t *testing.T) {
	ctx := t.Context()
	srv := invoicingtest.NewTestServer(t)
	id := uuid.NewString()

	t.Run("a base URL without /api/v1/external says so", func(t *testing.T) {
		root := strings.TrimSuffix(srv.URL, invoicingtest.BasePath)
		for _, base := range []string{root, root + "/api/v1", root + "/"} {
			_, err := newClient(t, base, srv.FullKey).Invoices.Get(ctx, id)
			require.ErrorIs(t, err, invoicing.ErrNotFound)
			want := "invoicing: GET /invoices/" + id + ": 404 Not Found (the base URL must end in /api/v1/external; this Client uses " + strings.TrimRight(base, "/") + ")"
			assert.Equal(t, want, err.Error(), base)
		}
		// With the prefix, a 404 is about the record: no advice.
		_, err := newClient(t, srv.URL, srv.FullKey).Invoices.Get(ctx, id)
		assert.Equal(t, "invoicing: GET /invoices/"+id+`: 404 Not Found: "Invoice not found"`, err.Error())
	})

	t.Run("a service that cannot be reached: the attempts are counted, the key never shown", func(t *testing.T) {
		down := newClient(t, "http://127.0.0.1:1"+invoicingtest.BasePath, srv.FullKey, e2eFast, invoicing.WithMaxRetries(2))
		_, err := down.Invoices.Get(ctx, id)
		require.Error(t, err)
		assert.True(t, strings.HasSuffix(err.Error(), "(after 3 attempts)"), err.Error())
		assert.NotContains(t, err.Error(), srv.FullKey)
	})
}

// Collect gathers a list, with a cap; First takes its first record.
func TestE2ECollectAndFirst(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	var ids []string
	for i := range 3 {
		res, err := c.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine(fmt.Sprint("line ", i), "1", "1")))
		require.NoError(t, err)
		ids = append(ids, res.ID)
	}

	all, err := invoicing.Collect(c.Invoices.List(ctx, nil), 0)
	require.NoError(t, err)
	assert.Equal(t, ids, e2eIDs(all))

	capped, err := invoicing.Collect(c.Invoices.List(ctx, nil), 2)
	require.ErrorIs(t, err, invoicing.ErrTooManyRecords)
	assert.Contains(t, err.Error(), "more than 2", "the error names the limit")
	assert.Equal(t, ids[:2], e2eIDs(capped), "the first 2 come with the error")

	exact, err := invoicing.Collect(c.Invoices.List(ctx, nil), 3)
	require.NoError(t, err, "exactly the cap is no error")
	assert.Len(t, exact, 3)

	lists := func() int { return len(e2eRequests(srv, http.MethodGet, "/invoices")) }
	before := lists()
	first, err := invoicing.First(c.Invoices.List(ctx, &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 1}}))
	require.NoError(t, err)
	assert.Equal(t, ids[0], first.ID)
	assert.Equal(t, before+1, lists(), "First fetches only the first page")

	_, err = invoicing.First(c.Invoices.List(ctx, &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusPaid}))
	require.ErrorIs(t, err, invoicing.ErrNotFound, "an empty list reads like a Get of nothing")
	assert.ErrorIs(t, err, invoicing.ErrEmptyList)
	assert.EqualError(t, err, "invoicing: the list is empty")

	failing := newClient(t, srv.URL, srv.FullKey, invoicing.WithMaxRetries(0))
	srv.FailNext(1, http.StatusInternalServerError)
	got, err := invoicing.Collect(failing.Invoices.List(ctx, nil), 0)
	assert.Empty(t, got)
	e2eAPIError(t, err, http.StatusInternalServerError)
	srv.FailNext(1, http.StatusInternalServerError)
	_, err = invoicing.First(failing.Invoices.List(ctx, nil))
	e2eAPIError(t, err, http.StatusInternalServerError)
	assert.False(t, errors.Is(err, invoicing.ErrNotFound))
	assert.True(t, slices.Equal(ids, e2eListIDs(t, c.Invoices.List(ctx, nil))), "nothing changed")
}
