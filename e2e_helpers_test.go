package invoicing_test

// End-to-end tests: every SDK method against the in-memory service of
// package invoicingtest, over real HTTP on loopback, with the API mounted
// under /api/v1/external. Expected values are computed from the rules of
// API.md (and, where API.md is silent, from the choices invoicingtest
// documents), never copied from a run. This file holds the helpers every
// e2e_*_test.go shares.

import (
	"iter"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// e2eFast keeps retries fast: backoff from 1 ms, and Retry-After waits of up
// to 2 s are honoured (the service's Retry-After has a resolution of 1 s).
var e2eFast = invoicing.WithRetryWait(time.Millisecond, 2*time.Second)

// e2eDefaultRetries is WithMaxRetries's documented default: a call is sent
// at most 1+3 times.
const e2eDefaultRetries = 3

// e2eServer starts a fake service for one test and an SDK client for it
// with the full-scope key, fast retries and opts.
func e2eServer(t testing.TB, opts ...invoicingtest.Option) (*invoicingtest.Server, *invoicing.Client) {
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
	out, err := invoicing.Collect(seq, 0)
	require.NoError(t, err)
	return out
}

// e2eIDs returns the ID field of each record, in order.
func e2eIDs[T any](recs []*T) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, reflect.ValueOf(r).Elem().FieldByName("ID").String())
	}
	return out
}

// e2eListIDs drains a List and returns the ids of its records.
func e2eListIDs[T any](t *testing.T, seq iter.Seq2[*T, error]) []string {
	t.Helper()
	return e2eIDs(e2eAll(t, seq))
}

// e2ePageIDs returns the ids of a page's records.
func e2ePageIDs[T any](p *invoicing.Page[T]) []string {
	out := make([]*T, len(p.Items))
	for i := range p.Items {
		out[i] = &p.Items[i]
	}
	return e2eIDs(out)
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

// e2eQuote is a quote create request for client with the Sales account and
// GST as defaults.
func e2eQuote(clientID string, lines ...invoicing.LineItemParams) *invoicing.QuoteCreateParams {
	p := e2eInvoice(clientID, lines...)
	return &invoicing.QuoteCreateParams{ClientID: p.ClientID, DefaultAccountID: p.DefaultAccountID, DefaultTaxCodeID: p.DefaultTaxCodeID, LineItems: p.LineItems}
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

// e2eQuoteMatchesInvoice asserts that an invoice converted from an accepted
// quote has the quote's accepted lines and totals.
func e2eQuoteMatchesInvoice(t *testing.T, q *invoicing.Quote, inv *invoicing.Invoice) {
	t.Helper()
	require.Len(t, inv.LineItems, len(q.LineItems))
	for i, ql := range q.LineItems {
		il := inv.LineItems[i]
		assert.Equal(t, ql.Description, il.Description)
		e2eDecEqual(t, ql.Quantity, il.Quantity)
		e2eDecEqual(t, ql.UnitPrice, il.UnitPrice)
		e2eDecEqual(t, ql.Amount, il.Amount)
		e2eDecEqual(t, ql.TaxAmount, il.TaxAmount)
	}
	e2eDecEqual(t, q.Subtotal, inv.Subtotal)
	e2eDecEqual(t, q.TaxTotal, inv.TaxTotal)
	e2eDecEqual(t, q.Total, inv.Total)
	e2eDecEqual(t, q.Total, inv.AmountDue)
}
