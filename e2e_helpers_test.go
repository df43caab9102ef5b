package invoicing_test

// End-to-end tests: every SDK method against the in-memory service of
// package invoicingtest, over real HTTP on loopback, with the API mounted
// under /api/v1/external. Expected values are computed from the rules of
// API.md (and, where API.md is silent, from the choices invoicingtest
// documents), never copied from a run.

import (
	"iter"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// e2eFast keeps retries fast: backoff from 1 ms, and Retry-After waits of up
// to 2 s are honoured.
var e2eFast = invoicing.WithRetryWait(time.Millisecond, 2*time.Second)

// e2eServer starts a fake service for one test and an SDK client for it
// with the full-scope key.
func e2eServer(t *testing.T, opts ...invoicingtest.Option) (*invoicingtest.Server, *invoicing.Client) {
	t.Helper()
	srv := invoicingtest.NewTestServer(t, opts...)
	return srv, srv.Client(e2eFast)
}

func e2eD(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// e2eDecEqual asserts that two decimals are equal in value.
func e2eDecEqual(t *testing.T, want, got decimal.Decimal, msgAndArgs ...any) {
	t.Helper()
	if !want.Equal(got) {
		assert.Fail(t, "decimal mismatch: want "+want.String()+", got "+got.String(), msgAndArgs...)
	}
}

// e2eAll drains a List iterator, failing the test on an error.
func e2eAll[T any](t *testing.T, seq iter.Seq2[*T, error]) []*T {
	t.Helper()
	var out []*T
	for v, err := range seq {
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

// e2eRequests returns the logged requests with method and path (relative to
// the base URL).
func e2eRequests(srv *invoicingtest.Server, method, path string) []invoicingtest.Request {
	var out []invoicingtest.Request
	for _, r := range srv.Requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// e2eToday is the service's "today" (UTC on its clock), the default
// issue_date.
func e2eToday(srv *invoicingtest.Server) invoicing.Date {
	return invoicing.DateOf(srv.Now().UTC())
}

// e2eAPIError asserts that err is an *invoicing.Error with the status.
func e2eAPIError(t *testing.T, err error, status int) *invoicing.Error {
	t.Helper()
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, status, apiErr.StatusCode, "error: %v", err)
	return apiErr
}

func e2eLine(desc, qty, price string) invoicing.LineItemParams {
	return invoicing.LineItemParams{Description: desc, Quantity: invoicing.Ptr(e2eD(qty)), UnitPrice: e2eD(price)}
}

// e2eInvoice is a create request for client with the Sales account and GST
// as defaults.
func e2eInvoice(clientID string, lines ...invoicing.LineItemParams) *invoicing.InvoiceCreateParams {
	return &invoicing.InvoiceCreateParams{
		ClientID:         clientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        lines,
	}
}

// e2eAmounts is a line's net amount, tax and amount by API.md's rule
// (amount = quantity x unit_price + tax), rounded to cents per line half
// away from zero as invoicingtest documents. ratePercent is 10 for 10%.
func e2eAmounts(qty, price, ratePercent decimal.Decimal) (net, tax, amount decimal.Decimal) {
	gross := qty.Mul(price)
	net = gross.Round(2)
	tax = gross.Mul(ratePercent).Div(decimal.NewFromInt(100)).Round(2)
	return net, tax, net.Add(tax)
}

// e2eTaxRate reads a tax code's rate through the API.
func e2eTaxRate(t *testing.T, c *invoicing.Client, id string) decimal.Decimal {
	t.Helper()
	tc, err := c.TaxCodes.Get(t.Context(), id)
	require.NoError(t, err)
	return tc.Rate
}

func e2eIDs[T any](recs []*T, id func(*T) string) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, id(r))
	}
	return out
}

func e2eInvoiceID(i *invoicing.Invoice) string { return i.ID }
