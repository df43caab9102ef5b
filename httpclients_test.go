package invoicing_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// wrappingTransport is a caller's RoundTripper that wraps another, as
// tracing and logging transports do.
type wrappingTransport struct{ next http.RoundTripper }

func (w wrappingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return w.next.RoundTrip(req)
}

// httpClientShapes are the common ways callers pass an http.Client: every
// typed error must come back the same through each.
var httpClientShapes = []struct {
	name string
	opts func() []invoicing.Option
}{
	{"default", func() []invoicing.Option { return nil }},
	{"empty http.Client", func() []invoicing.Option { return []invoicing.Option{invoicing.WithHTTPClient(&http.Client{})} }},
	{"http.Client with a Timeout", func() []invoicing.Option {
		return []invoicing.Option{invoicing.WithHTTPClient(&http.Client{Timeout: 30 * time.Second})}
	}},
	{"wrapping Transport", func() []invoicing.Option {
		return []invoicing.Option{invoicing.WithHTTPClient(&http.Client{Transport: wrappingTransport{http.DefaultTransport}})}
	}},
	{"Timeout and wrapping Transport", func() []invoicing.Option {
		return []invoicing.Option{invoicing.WithHTTPClient(&http.Client{Timeout: time.Minute, Transport: wrappingTransport{http.DefaultTransport}})}
	}},
}

// Every typed error keeps the service's body, detail, problems and
// Retry-After whatever http.Client the Client was given. (net/http wraps the
// response body of a client with a Timeout; the SDK once lost the body then.)
func TestTypedErrorsThroughEveryHTTPClientShape(t *testing.T) {
	ctx := context.Background()
	itemParams := &invoicing.ItemCreateParams{Name: "x", AccountID: "a", TaxCodeID: "t", UnitPrice: invoicing.Ptr(dec("1"))}
	cases := []struct {
		name     string
		status   int
		body     string
		header   []string
		call     func(*invoicing.Client) error
		is       []error
		detail   string
		problems int
		retry    time.Duration
	}{
		{name: "400", status: 400, body: `{"detail":"page must be >= 1"}`, is: []error{invoicing.ErrBadRequest}, detail: "page must be >= 1"},
		{name: "401", status: 401, body: `{"detail":"Invalid API key"}`, is: []error{invoicing.ErrUnauthorized}, detail: "Invalid API key"},
		{name: "403", status: 403, body: `{"detail":"Missing scope invoices:read"}`, is: []error{invoicing.ErrForbidden}, detail: "Missing scope invoices:read"},
		{name: "404", status: 404, body: `{"detail":"Invoice not found"}`, is: []error{invoicing.ErrNotFound}, detail: "Invoice not found"},
		{name: "409 item code", status: 409, body: `{"detail":"Item code already exists"}`,
			call: func(c *invoicing.Client) error { _, err := c.Items.Create(ctx, itemParams); return err },
			is:   []error{invoicing.ErrConflict, invoicing.ErrItemCodeExists}, detail: "Item code already exists"},
		{name: "422 unit price", status: 422, body: `{"detail":"unit_price is required for SALES and PURCHASE items"}`,
			call: func(c *invoicing.Client) error { _, err := c.Items.Create(ctx, itemParams); return err },
			is:   []error{invoicing.ErrValidation, invoicing.ErrUnitPriceRequired}, detail: "unit_price is required for SALES and PURCHASE items"},
		{name: "422 item type", status: 422, body: `{"detail":"item_type must be one of: SALES, PURCHASE, TEXT"}`,
			call: func(c *invoicing.Client) error { _, err := c.Items.Create(ctx, itemParams); return err },
			is:   []error{invoicing.ErrValidation, invoicing.ErrInvalidItemType}, detail: "item_type must be one of: SALES, PURCHASE, TEXT"},
		{name: "422 problems", status: 422, body: fixture(t, "error_422_array.json"),
			is: []error{invoicing.ErrValidation}, detail: "line_items.0.unit_price: field required; client_id: field required", problems: 2},
		{name: "429 beyond the maximum wait", status: 429, body: `{"detail":"Too many requests"}`, header: []string{"Retry-After", "3600"},
			is: []error{invoicing.ErrRateLimited}, detail: "Too many requests", retry: time.Hour},
		{name: "500", status: 500, body: `{"detail":"database unavailable"}`, is: []error{invoicing.ErrServer}, detail: "database unavailable"},
		{name: "502 HTML", status: 502, body: fixture(t, "error_502.html"), is: []error{invoicing.ErrServer}, detail: "Bad Gateway"},
	}
	for _, shape := range httpClientShapes {
		for _, tc := range cases {
			t.Run(shape.name+"/"+tc.name, func(t *testing.T) {
				opts := append(shape.opts(), invoicing.WithMaxRetries(0))
				c, _ := newTestAPI(t, always(tc.status, tc.body, tc.header...), opts...)
				call := tc.call
				if call == nil {
					call = func(c *invoicing.Client) error { _, err := c.Invoices.Get(ctx, invoiceID); return err }
				}
				err := call(c)
				var apiErr *invoicing.Error
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, tc.status, apiErr.StatusCode)
				assert.Equal(t, tc.detail, apiErr.Detail)
				assert.Equal(t, tc.body, string(apiErr.Body))
				assert.Len(t, apiErr.Problems, tc.problems)
				assert.Equal(t, tc.retry, apiErr.RetryAfter)
				for _, s := range tc.is {
					assert.ErrorIs(t, err, s)
				}
			})
		}
	}
}

// A record decodes the same through every http.Client shape, and so does
// an error after a retry (the last response's body is the one kept).
func TestSuccessAndRetriedErrorThroughEveryHTTPClientShape(t *testing.T) {
	for _, shape := range httpClientShapes {
		t.Run(shape.name, func(t *testing.T) {
			c, api := newTestAPI(t, sequence(
				always(200, fixture(t, "invoice.json")),
				always(503, `{"detail":"try later"}`),
				always(500, `{"detail":"still down"}`),
			), shape.opts()...)
			inv, err := c.Invoices.Get(context.Background(), invoiceID)
			require.NoError(t, err)
			assert.Equal(t, "INV-0042", inv.InvoiceNumber)

			_, err = c.Invoices.Get(context.Background(), invoiceID, invoicing.WithRetries(1))
			var apiErr *invoicing.Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 500, apiErr.StatusCode)
			assert.Equal(t, "still down", apiErr.Detail)
			assert.Equal(t, 2, apiErr.Attempts)
			assert.Len(t, api.requests(), 3)
		})
	}
}

// A middleware that replaces the body of an error response is honoured:
// the error is built from the body the middleware returned.
func TestMiddlewareReplacingAnErrorBody(t *testing.T) {
	mw := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err == nil && resp.StatusCode == 404 {
			resp.Body.Close()
			resp.Body = readCloser{strings.NewReader(`{"detail":"rewritten by middleware"}`)}
		}
		return resp, err
	}
	for _, shape := range httpClientShapes {
		t.Run(shape.name, func(t *testing.T) {
			c, _ := newTestAPI(t, always(404, `{"detail":"Invoice not found"}`), append(shape.opts(), invoicing.WithMiddleware(mw))...)
			_, err := c.Invoices.Get(context.Background(), invoiceID)
			var apiErr *invoicing.Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, "rewritten by middleware", apiErr.Detail)
			assert.True(t, errors.Is(err, invoicing.ErrNotFound))
		})
	}
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }
