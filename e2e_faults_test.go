package invoicing_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

func TestE2EFaults(t *testing.T) {
	ctx := t.Context()

	t.Run("429 then success after Retry-After", func(t *testing.T) {
		srv, _ := e2eServer(t)
		clk := newFakeClock() // the waits are recorded, not slept
		c := srv.Client(e2eFast, invoicing.WithClock(clk))
		inv, err := c.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("x", "1", "1")))
		require.NoError(t, err)
		path := "/invoices/" + inv.ID
		srv.RateLimitNext(1, time.Second)
		got, err := c.Invoices.Get(ctx, inv.ID)
		require.NoError(t, err)
		assert.Equal(t, inv.ID, got.ID)
		require.Len(t, clk.waits(), 1)
		assert.GreaterOrEqual(t, clk.waits()[0], time.Second, "the SDK waited for Retry-After")
		reqs := e2eRequests(srv, http.MethodGet, path)
		require.Len(t, reqs, 2)
		assert.Equal(t, http.StatusTooManyRequests, reqs[0].Status)
		assert.True(t, reqs[0].Fault)
		assert.Equal(t, http.StatusOK, reqs[1].Status)
	})

	t.Run("429 asking longer than the maximum wait returns at once", func(t *testing.T) {
		srv, _ := e2eServer(t)
		clk := newFakeClock()
		c := srv.Client(e2eFast, invoicing.WithClock(clk))
		srv.RateLimitNext(1, 30*time.Second)
		_, err := c.Quotes.ListPage(ctx, nil)
		assert.Empty(t, clk.waits(), "no wait at all")
		assert.ErrorIs(t, err, invoicing.ErrRateLimited)
		apiErr := e2eAPIError(t, err, http.StatusTooManyRequests)
		assert.Equal(t, 30*time.Second, apiErr.RetryAfter)
		assert.Len(t, e2eRequests(srv, http.MethodGet, "/quotes"), 1)
	})

	t.Run("500 on POST /quotes is not retried", func(t *testing.T) {
		srv, c := e2eServer(t)
		srv.FailNext(1, http.StatusInternalServerError)
		_, err := c.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
			ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID,
			DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID, LineItems: []invoicing.LineItemParams{e2eLine("x", "1", "1")},
		})
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
		assert.Equal(t, 1, page.Total)
		reqs := e2eRequests(srv, http.MethodGet, "/items")
		require.Len(t, reqs, 2)
		assert.Equal(t, http.StatusInternalServerError, reqs[0].Status)
		assert.Equal(t, http.StatusOK, reqs[1].Status)
	})

	t.Run("500 on an invoice create with a reference is retried", func(t *testing.T) {
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
		assert.Len(t, e2eAll(t, c.Invoices.List(ctx, nil)), 1)
	})

	t.Run("proxy 502 page gives ErrServer with a useful detail", func(t *testing.T) {
		srv, c := e2eServer(t)
		srv.ProxyErrorNext(1)
		_, err := c.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
			ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID,
			DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID, LineItems: []invoicing.LineItemParams{e2eLine("x", "1", "1")},
		})
		assert.ErrorIs(t, err, invoicing.ErrServer)
		apiErr := e2eAPIError(t, err, http.StatusBadGateway)
		assert.Equal(t, http.StatusText(http.StatusBadGateway), apiErr.Detail, "the HTML page is not the detail")
		assert.Contains(t, string(apiErr.Body), "502 Bad Gateway", "the raw page is kept")
		assert.Equal(t, http.MethodPost, apiErr.Method)
		assert.Equal(t, "/quotes", apiErr.Path)
		assert.Contains(t, err.Error(), "502")
		assert.Contains(t, err.Error(), "POST /quotes")
		assert.NotContains(t, err.Error(), "<html>")

		// A GET is retried; when the proxy keeps failing the last 502 surfaces.
		srv.ProxyErrorNext(invoicing.DefaultMaxRetries + 1)
		_, err = c.Invoices.ListPage(ctx, nil)
		assert.ErrorIs(t, err, invoicing.ErrServer)
		e2eAPIError(t, err, http.StatusBadGateway)
		assert.Len(t, e2eRequests(srv, http.MethodGet, "/invoices"), invoicing.DefaultMaxRetries+1)
	})
}
