package invoicing_test

// End-to-end tests: every SDK method against the in-memory service of
// package invoicingtest, over real HTTP on loopback, with the API mounted
// under /api/v1/external. Expected values are computed from the rules of
// API.md (and, where API.md is silent, from the choices invoicingtest
// documents), never copied from a run.

import (
	"bytes"
	"context"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
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
	return invoicing.LineItemParams{Description: desc, Quantity: e2eD(qty), UnitPrice: e2eD(price)}
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

func e2eInvoiceID(i *invoicing.Invoice) string { return i.ID.String() }

// ---------------------------------------------------------------- invoices

func TestE2EInvoiceCreateDefaultsAndGet(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	gst := e2eTaxRate(t, c, invoicingtest.SeedGSTTaxCodeID)

	before := e2eToday(srv)
	res, err := c.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("Consulting", "2", "150")))
	after := e2eToday(srv)
	require.NoError(t, err)
	assert.True(t, res.Created, "a new invoice is 201 Created")
	assert.NotEqual(t, uuid.Nil, res.ID)
	assert.NotEmpty(t, res.InvoiceNumber, "the number is generated when omitted")
	assert.Equal(t, invoicing.InvoiceStatusDraft, res.Status, "status defaults to draft")
	assert.Equal(t, "AUD", res.Currency, "currency defaults to AUD")
	assert.Contains(t, []invoicing.Date{before, after}, res.IssueDate, "issue_date defaults to today")
	// API.md gives no default due date; invoicingtest uses the business's
	// default terms of 30 days.
	assert.Equal(t, res.IssueDate.AddDays(30), res.DueDate)
	client, err := c.Clients.Get(ctx, invoicingtest.SeedClientID)
	require.NoError(t, err)
	assert.Equal(t, invoicingtest.SeedClientID, res.ClientID)
	assert.Equal(t, client.Name, res.ClientName)
	assert.Nil(t, res.UpdatedAt, "never updated")
	assert.WithinDuration(t, srv.Now(), res.CreatedAt, 5*time.Second)

	net, tax, amount := e2eAmounts(e2eD("2"), e2eD("150"), gst)
	require.Len(t, res.LineItems, 1)
	l := res.LineItems[0]
	assert.NotEmpty(t, l.ID)
	assert.Equal(t, "Consulting", l.Description)
	e2eDecEqual(t, e2eD("2"), l.Quantity)
	e2eDecEqual(t, e2eD("150"), l.UnitPrice)
	e2eDecEqual(t, tax, l.TaxAmount)
	e2eDecEqual(t, amount, l.Amount)
	e2eDecEqual(t, net, res.Subtotal)
	e2eDecEqual(t, tax, res.TaxTotal)
	e2eDecEqual(t, amount, res.Total)
	e2eDecEqual(t, decimal.Zero, res.AmountPaid)
	e2eDecEqual(t, amount, res.AmountDue)

	got, err := c.Invoices.Get(ctx, res.ID.String())
	require.NoError(t, err)
	assert.Equal(t, res.Invoice, got, "GET returns the invoice the create returned")
	require.Len(t, got.LineItems, 1)
	require.NotNil(t, got.LineItems[0].AccountID)
	require.NotNil(t, got.LineItems[0].TaxCodeID)
	assert.Equal(t, invoicingtest.SeedRevenueAccountID, *got.LineItems[0].AccountID, "default_account_id applied to the line")
	assert.Equal(t, invoicingtest.SeedGSTTaxCodeID, *got.LineItems[0].TaxCodeID, "default_tax_code_id applied to the line")

	_, err = c.Invoices.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)
	e2eAPIError(t, err, http.StatusNotFound)
}

func TestE2EInvoiceDatesStatusAndCurrency(t *testing.T) {
	ctx := t.Context()
	_, c := e2eServer(t)
	issue := invoicing.NewDate(2026, time.January, 15)

	terms := 14
	p := e2eInvoice(invoicingtest.SeedClientID, e2eLine("Terms", "1", "10"))
	p.IssueDate, p.PaymentTermsDays = issue, &terms
	res, err := c.Invoices.Create(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, issue, res.IssueDate)
	assert.Equal(t, issue.AddDays(terms), res.DueDate, "due_date = issue_date + payment_terms_days")

	// payment_terms_days is used only when due_date is not provided.
	due := invoicing.NewDate(2026, time.March, 1)
	p = e2eInvoice(invoicingtest.SeedClientID, e2eLine("Explicit due date", "1", "10"))
	p.IssueDate, p.DueDate, p.PaymentTermsDays = issue, due, &terms
	res, err = c.Invoices.Create(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, due, res.DueDate)

	p = e2eInvoice(invoicingtest.SeedOtherClientID, e2eLine("Sent at once", "1", "10"))
	p.Status, p.Currency, p.Notes = invoicing.InvoiceStatusAwaitingPayment, "NZD", "Pay within 30 days"
	res, err = c.Invoices.Create(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, res.Status)
	assert.Equal(t, "NZD", res.Currency)
	assert.Equal(t, "Pay within 30 days", res.Notes)
	assert.Equal(t, invoicingtest.SeedOtherClientID, res.ClientID)

	// What the service validates and the SDK does not: a client of another
	// business (here: unknown).
	_, err = c.Invoices.Create(ctx, e2eInvoice(uuid.NewString(), e2eLine("Nobody", "1", "1")))
	assert.ErrorIs(t, err, invoicing.ErrValidation)
	e2eAPIError(t, err, http.StatusUnprocessableEntity)
}

func TestE2EInvoiceReferenceIsIdempotentAndNumbersAreUnique(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)

	p := e2eInvoice(invoicingtest.SeedClientID, e2eLine("Import row 17", "3", "19.99"))
	p.Reference = "ERP-7781"
	first, err := c.Invoices.Create(ctx, p)
	require.NoError(t, err)
	assert.True(t, first.Created)

	second, err := c.Invoices.Create(ctx, p)
	require.NoError(t, err)
	assert.False(t, second.Created, "an existing reference answers 200 with the existing invoice")
	assert.Equal(t, first.ID, second.ID)
	assert.Equal(t, first.InvoiceNumber, second.InvoiceNumber)
	e2eDecEqual(t, first.Total, second.Total)

	posts := e2eRequests(srv, http.MethodPost, "/invoices")
	require.Len(t, posts, 2)
	assert.Equal(t, http.StatusCreated, posts[0].Status)
	assert.Equal(t, http.StatusOK, posts[1].Status)
	all := e2eAll(t, c.Invoices.List(ctx, nil))
	assert.Equal(t, []string{first.ID.String()}, e2eIDs(all, e2eInvoiceID), "no duplicate was created")

	p = e2eInvoice(invoicingtest.SeedClientID, e2eLine("Numbered", "1", "5"))
	p.InvoiceNumber = "E2E-0001"
	numbered, err := c.Invoices.Create(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, "E2E-0001", numbered.InvoiceNumber, "a caller-supplied number is used")
	assert.NotEqual(t, first.InvoiceNumber, numbered.InvoiceNumber)

	p = e2eInvoice(invoicingtest.SeedOtherClientID, e2eLine("Same number", "1", "5"))
	p.InvoiceNumber = "E2E-0001"
	_, err = c.Invoices.Create(ctx, p)
	assert.ErrorIs(t, err, invoicing.ErrConflict)
	assert.NotErrorIs(t, err, invoicing.ErrItemCodeExists)
	e2eAPIError(t, err, http.StatusConflict)
	assert.Len(t, e2eRequests(srv, http.MethodPost, "/invoices"), 4, "a 409 is not retried")
	assert.Len(t, e2eAll(t, c.Invoices.List(ctx, nil)), 2)
}

func TestE2EInvoiceListFiltersAndPages(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	client := srv.AddClient(invoicingtest.Contact{Name: "Filter Test Pty Ltd", Email: "ap@filter.example"})

	type spec struct {
		client string
		issue  invoicing.Date
		status invoicing.InvoiceStatus
	}
	specs := []spec{
		{client, invoicing.NewDate(2025, time.January, 10), invoicing.InvoiceStatusDraft},
		{client, invoicing.NewDate(2025, time.February, 10), invoicing.InvoiceStatusAwaitingPayment},
		{invoicingtest.SeedClientID, invoicing.NewDate(2025, time.February, 15), invoicing.InvoiceStatusAwaitingPayment},
		{client, invoicing.NewDate(2025, time.February, 20), invoicing.InvoiceStatusDraft},
		{client, invoicing.NewDate(2025, time.March, 10), invoicing.InvoiceStatusAwaitingPayment},
	}
	var created []*invoicing.Invoice
	for i, s := range specs {
		p := e2eInvoice(s.client, e2eLine("Line "+strconv.Itoa(i), "1", "100"))
		p.IssueDate, p.Status = s.issue, s.status
		res, err := c.Invoices.Create(ctx, p)
		require.NoError(t, err)
		created = append(created, res.Invoice)
	}
	// want filters the created invoices as the service's filters should
	// (dates on issue_date, both bounds inclusive, as invoicingtest
	// documents), in creation order.
	want := func(keep func(*invoicing.Invoice) bool) []string {
		var ids []string
		for _, inv := range created {
			if keep(inv) {
				ids = append(ids, inv.ID.String())
			}
		}
		require.NotEmpty(t, ids, "a filter case must select something")
		return ids
	}
	feb1, feb20 := invoicing.NewDate(2025, time.February, 1), invoicing.NewDate(2025, time.February, 20)
	for name, tc := range map[string]struct {
		params *invoicing.InvoiceListParams
		keep   func(*invoicing.Invoice) bool
	}{
		"client_id": {
			&invoicing.InvoiceListParams{ClientID: client},
			func(i *invoicing.Invoice) bool { return i.ClientID == client },
		},
		"status": {
			&invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusAwaitingPayment},
			func(i *invoicing.Invoice) bool { return i.Status == invoicing.InvoiceStatusAwaitingPayment },
		},
		"from_date and to_date inclusive": {
			&invoicing.InvoiceListParams{FromDate: specs[1].issue, ToDate: feb20},
			func(i *invoicing.Invoice) bool {
				return !i.IssueDate.Before(specs[1].issue) && !i.IssueDate.After(feb20)
			},
		},
		"every filter": {
			&invoicing.InvoiceListParams{ClientID: client, Status: invoicing.InvoiceStatusAwaitingPayment, FromDate: feb1},
			func(i *invoicing.Invoice) bool {
				return i.ClientID == client && i.Status == invoicing.InvoiceStatusAwaitingPayment && !i.IssueDate.Before(feb1)
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := e2eAll(t, c.Invoices.List(ctx, tc.params))
			assert.Equal(t, want(tc.keep), e2eIDs(got, e2eInvoiceID))
		})
	}

	clientIDs := want(func(i *invoicing.Invoice) bool { return i.ClientID == client })
	p1, err := c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{ClientID: client, ListParams: invoicing.ListParams{PageSize: 3}})
	require.NoError(t, err)
	assert.Equal(t, len(clientIDs), p1.Total)
	assert.Equal(t, 1, p1.Page)
	assert.Equal(t, 3, p1.PageSize)
	assert.True(t, p1.HasMore)
	p2, err := c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{ClientID: client, ListParams: invoicing.ListParams{Page: 2, PageSize: 3}})
	require.NoError(t, err)
	assert.Equal(t, 2, p2.Page)
	assert.False(t, p2.HasMore)
	var paged []string
	for _, inv := range append(p1.Items, p2.Items...) {
		paged = append(paged, inv.ID.String())
	}
	assert.Equal(t, clientIDs, paged, "two pages hold every match once, in order")

	def, err := c.Invoices.ListPage(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, 50, def.PageSize, "page_size defaults to 50")
	assert.Equal(t, len(created), def.Total)
}

func TestE2EInvoiceAndQuotePDF(t *testing.T) {
	ctx := t.Context()
	_, c := e2eServer(t)
	inv, err := c.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("Printed", "1", "42")))
	require.NoError(t, err)
	q, err := c.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
		ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID, LineItems: []invoicing.LineItemParams{e2eLine("Printed quote", "1", "42")},
	})
	require.NoError(t, err)

	for _, tc := range []struct {
		name, wantFile, number string
		get                    func() (*invoicing.File, error)
	}{
		{"invoice", "Invoice-" + inv.InvoiceNumber + ".pdf", inv.InvoiceNumber, func() (*invoicing.File, error) { return c.Invoices.PDF(ctx, inv.ID.String()) }},
		{"quote", "Quote-" + q.QuoteNumber + ".pdf", q.QuoteNumber, func() (*invoicing.File, error) { return c.Quotes.PDF(ctx, q.ID.String()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.get()
			require.NoError(t, err)
			defer f.Close()
			body, err := io.ReadAll(f)
			require.NoError(t, err)
			assert.Equal(t, tc.wantFile, f.Filename)
			assert.Equal(t, "application/pdf", f.ContentType)
			assert.True(t, bytes.HasPrefix(body, []byte("%PDF-")), "a PDF")
			assert.True(t, bytes.Contains(body, []byte(tc.number)), "the PDF shows the number")
			if f.Size >= 0 {
				assert.EqualValues(t, len(body), f.Size)
			}
		})
	}

	_, err = c.Invoices.PDF(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)
	_, err = c.Quotes.PDF(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)
}

func TestE2EExactDecimalTotals(t *testing.T) {
	ctx := t.Context()
	_, c := e2eServer(t)
	type line struct {
		qty, price string
		taxCode    string
	}
	lines := []line{
		{"1", "100", invoicingtest.SeedOnePercentTaxCodeID},      // API.md: amount 101, tax_amount 1
		{"3", "33.333", invoicingtest.SeedGSTTaxCodeID},          // 99.999 before tax
		{"3", "0.1", invoicingtest.SeedGSTFreeTaxCodeID},         // 0.30, not 0.30000000000000004
		{"2.5", "19.99", invoicingtest.SeedGSTTaxCodeID},         // 49.975: rounds half away from zero
		{"0.333333", "3", invoicingtest.SeedOnePercentTaxCodeID}, // six decimal places survive
	}
	p := &invoicing.InvoiceCreateParams{ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID}
	for i, l := range lines {
		p.LineItems = append(p.LineItems, invoicing.LineItemParams{
			Description: "line " + strconv.Itoa(i), Quantity: e2eD(l.qty), UnitPrice: e2eD(l.price), TaxCodeID: l.taxCode,
		})
	}
	res, err := c.Invoices.Create(ctx, p)
	require.NoError(t, err)
	got, err := c.Invoices.Get(ctx, res.ID.String())
	require.NoError(t, err)

	require.Len(t, got.LineItems, len(lines))
	var subtotal, taxTotal, total decimal.Decimal
	for i, l := range lines {
		net, tax, amount := e2eAmounts(e2eD(l.qty), e2eD(l.price), e2eTaxRate(t, c, l.taxCode))
		gl := got.LineItems[i]
		e2eDecEqual(t, e2eD(l.qty), gl.Quantity, "line %d quantity", i)
		e2eDecEqual(t, e2eD(l.price), gl.UnitPrice, "line %d unit_price", i)
		e2eDecEqual(t, tax, gl.TaxAmount, "line %d tax_amount", i)
		e2eDecEqual(t, amount, gl.Amount, "line %d amount", i)
		require.NotNil(t, gl.TaxCodeID)
		assert.Equal(t, l.taxCode, *gl.TaxCodeID, "the line's own tax code")
		subtotal, taxTotal, total = subtotal.Add(net), taxTotal.Add(tax), total.Add(amount)
	}
	// The documented example, spelled out.
	e2eDecEqual(t, e2eD("101"), got.LineItems[0].Amount)
	e2eDecEqual(t, e2eD("1"), got.LineItems[0].TaxAmount)
	e2eDecEqual(t, e2eD("0.3"), got.LineItems[2].Amount)

	e2eDecEqual(t, subtotal, got.Subtotal)
	e2eDecEqual(t, taxTotal, got.TaxTotal)
	e2eDecEqual(t, total, got.Total)
	e2eDecEqual(t, got.Subtotal.Add(got.TaxTotal), got.Total, "total = subtotal + tax_total")
	e2eDecEqual(t, got.Total, got.AmountDue)
}

// ------------------------------------------------------------------- items

func TestE2EItems(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)

	widget, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
		ItemCode: "E2E-WIDGET", Name: "Widget", Description: "A blue widget",
		UnitPrice: invoicing.Ptr(e2eD("12.345")),
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	})
	require.NoError(t, err)
	assert.NotEqual(t, uuid.Nil, widget.ID)
	assert.Equal(t, "E2E-WIDGET", widget.ItemCode)
	assert.Equal(t, "Widget", widget.Name)
	assert.Equal(t, "A blue widget", widget.Description)
	assert.Equal(t, invoicing.ItemTypeSales, widget.ItemType, "item_type defaults to SALES")
	e2eDecEqual(t, e2eD("12.345"), widget.UnitPrice)
	assert.True(t, widget.IsTaxable, "is_taxable defaults to true")
	assert.True(t, widget.IsActive)
	assert.Nil(t, widget.UpdatedAt)
	assert.Equal(t, invoicingtest.SeedRevenueAccountID, widget.AccountID)
	assert.Equal(t, invoicingtest.SeedGSTTaxCodeID, widget.TaxCodeID)
	assert.WithinDuration(t, srv.Now(), widget.CreatedAt, 5*time.Second)

	text, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
		ItemCode: "E2E-NOTE", Name: "Terms note", ItemType: invoicing.ItemTypeText,
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTFreeTaxCodeID,
	})
	require.NoError(t, err, "a TEXT item needs no unit_price")
	assert.Equal(t, invoicing.ItemTypeText, text.ItemType)
	assert.True(t, text.UnitPrice.IsZero())

	paper, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
		Name: "Printer paper", ItemType: invoicing.ItemTypePurchase, UnitPrice: invoicing.Ptr(decimal.Zero),
		IsTaxable: invoicing.Ptr(false),
		AccountID: invoicingtest.SeedExpenseAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	})
	require.NoError(t, err, "a zero price is a price")
	assert.Equal(t, invoicing.ItemTypePurchase, paper.ItemType)
	assert.False(t, paper.IsTaxable)
	assert.Empty(t, paper.ItemCode, "item_code is optional")

	got, err := c.Items.Get(ctx, widget.ID.String())
	require.NoError(t, err)
	assert.Equal(t, widget, got)
	_, err = c.Items.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	t.Run("duplicate code is 409 ErrItemCodeExists", func(t *testing.T) {
		before := len(e2eRequests(srv, http.MethodPost, "/items"))
		_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
			ItemCode: "E2E-WIDGET", Name: "Another", UnitPrice: invoicing.Ptr(e2eD("1")),
			AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		})
		assert.ErrorIs(t, err, invoicing.ErrItemCodeExists)
		assert.ErrorIs(t, err, invoicing.ErrConflict)
		apiErr := e2eAPIError(t, err, http.StatusConflict)
		assert.Equal(t, "Item code already exists", apiErr.Detail, "API.md section 7's text")
		assert.Len(t, e2eRequests(srv, http.MethodPost, "/items"), before+1, "not retried")
	})

	t.Run("what the SDK checks is not sent", func(t *testing.T) {
		before := len(srv.Requests())
		_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
			Name: "No price", AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		})
		assert.ErrorIs(t, err, invoicing.ErrUnitPriceRequired)
		assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
		_, err = c.Items.Create(ctx, &invoicing.ItemCreateParams{
			Name: "Odd type", ItemType: "SERVICE", UnitPrice: invoicing.Ptr(e2eD("1")),
			AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		})
		assert.ErrorIs(t, err, invoicing.ErrInvalidItemType)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "item_type", pe.Field)
		assert.Len(t, srv.Requests(), before, "nothing reached the service")
	})

	t.Run("422 from the service for what the SDK cannot check", func(t *testing.T) {
		_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
			Name: "Bad account", UnitPrice: invoicing.Ptr(e2eD("1")),
			AccountID: uuid.NewString(), TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		})
		assert.ErrorIs(t, err, invoicing.ErrValidation)
		assert.NotErrorIs(t, err, invoicing.ErrUnitPriceRequired)
		apiErr := e2eAPIError(t, err, http.StatusUnprocessableEntity)
		assert.Contains(t, apiErr.Detail, "account_id")
	})

	all := e2eAll(t, c.Items.List(ctx, nil))
	ids := func(items []*invoicing.Item) []uuid.UUID {
		var out []uuid.UUID
		for _, it := range items {
			out = append(out, it.ID)
		}
		return out
	}
	require.Len(t, all, 4, "the seed item and three new ones")
	assert.Equal(t, uuid.MustParse(invoicingtest.SeedItemID), all[0].ID)
	assert.Equal(t, []uuid.UUID{widget.ID, text.ID, paper.ID}, ids(all[1:]))
	for _, typ := range []invoicing.ItemType{invoicing.ItemTypeSales, invoicing.ItemTypePurchase, invoicing.ItemTypeText} {
		var want []uuid.UUID
		for _, it := range all {
			if it.ItemType == typ {
				want = append(want, it.ID)
			}
		}
		got := e2eAll(t, c.Items.List(ctx, &invoicing.ItemListParams{ItemType: typ}))
		assert.Equal(t, want, ids(got), "item_type=%s", typ)
	}

	page, err := c.Items.ListPage(ctx, &invoicing.ItemListParams{ListParams: invoicing.ListParams{Page: 2, PageSize: 3}})
	require.NoError(t, err)
	assert.Equal(t, len(all), page.Total)
	assert.False(t, page.HasMore)
	require.Len(t, page.Items, 1)
	assert.Equal(t, paper.ID, page.Items[0].ID)
}

// ------------------------------------------------------------------ quotes

func TestE2EQuotes(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	gst := e2eTaxRate(t, c, invoicingtest.SeedGSTTaxCodeID)
	quote := func(p *invoicing.QuoteCreateParams) *invoicing.Quote {
		t.Helper()
		if p.DefaultAccountID == "" {
			p.DefaultAccountID = invoicingtest.SeedOtherRevenueAccountID
		}
		p.DefaultTaxCodeID = invoicingtest.SeedGSTTaxCodeID
		q, err := c.Quotes.Create(ctx, p)
		require.NoError(t, err)
		return q
	}

	days := 14
	before := e2eToday(srv)
	q1 := quote(&invoicing.QuoteCreateParams{
		ClientID: invoicingtest.SeedClientID, ValidDays: &days,
		LineItems: []invoicing.LineItemParams{e2eLine("Website design", "1", "1200"), e2eLine("Hosting", "12", "19.90")},
	})
	assert.NotEmpty(t, q1.QuoteNumber)
	assert.Equal(t, invoicing.QuoteStatusDraft, q1.Status, "a new quote is always draft")
	assert.Equal(t, "Website design", q1.Title, "title defaults to the first line's description")
	assert.Contains(t, []invoicing.Date{before, e2eToday(srv)}, q1.IssueDate)
	assert.Equal(t, q1.IssueDate.AddDays(days), q1.ValidUntil, "valid_until = issue_date + valid_days")
	assert.Equal(t, "AUD", q1.Currency)
	var sub, tax, total decimal.Decimal
	for i, l := range []invoicing.LineItemParams{e2eLine("", "1", "1200"), e2eLine("", "12", "19.90")} {
		n, tx, a := e2eAmounts(l.Quantity, l.UnitPrice, gst)
		e2eDecEqual(t, a, q1.LineItems[i].Amount)
		e2eDecEqual(t, tx, q1.LineItems[i].TaxAmount)
		assert.Nil(t, q1.LineItems[i].ItemID, "not linked to the catalog")
		sub, tax, total = sub.Add(n), tax.Add(tx), total.Add(a)
	}
	e2eDecEqual(t, sub, q1.Subtotal)
	e2eDecEqual(t, tax, q1.TaxTotal)
	e2eDecEqual(t, total, q1.Total)

	// valid_days is ignored when valid_until is set.
	long := 60
	q2 := quote(&invoicing.QuoteCreateParams{
		ClientID: invoicingtest.SeedClientID, Title: "Explicit title", ValidDays: &long,
		IssueDate: invoicing.NewDate(2026, time.February, 1), ValidUntil: invoicing.NewDate(2026, time.February, 10),
		Currency: "NZD", Notes: "private",
		LineItems: []invoicing.LineItemParams{e2eLine("Audit", "1", "500")},
	})
	assert.Equal(t, "Explicit title", q2.Title)
	assert.Equal(t, invoicing.NewDate(2026, time.February, 10), q2.ValidUntil)
	assert.Equal(t, "NZD", q2.Currency)
	assert.Equal(t, "private", q2.Notes)

	// A line linked to a catalog item takes the item's name and, without a
	// description of its own, the item's description; the price is the
	// request's.
	catalog, err := c.Items.Get(ctx, invoicingtest.SeedItemID)
	require.NoError(t, err)
	q3 := quote(&invoicing.QuoteCreateParams{
		ClientID: invoicingtest.SeedClientID, Title: "Consulting block",
		LineItems: []invoicing.LineItemParams{{ItemID: catalog.ID, Quantity: e2eD("10"), UnitPrice: e2eD("140")}},
	})
	require.Len(t, q3.LineItems, 1)
	linked := q3.LineItems[0]
	require.NotNil(t, linked.ItemID)
	assert.Equal(t, catalog.ID, *linked.ItemID)
	assert.Equal(t, catalog.ItemCode, linked.ItemCode)
	assert.Equal(t, catalog.Name, linked.ItemName)
	assert.Equal(t, catalog.Description, linked.Description)
	e2eDecEqual(t, e2eD("140"), linked.UnitPrice)

	// No title and no description: the title is "Quote".
	q4 := quote(&invoicing.QuoteCreateParams{
		ClientID:  invoicingtest.SeedOtherClientID,
		LineItems: []invoicing.LineItemParams{{UnitPrice: e2eD("75")}},
	})
	assert.Equal(t, "Quote", q4.Title)
	e2eDecEqual(t, decimal.NewFromInt(1), q4.LineItems[0].Quantity, "quantity defaults to 1")

	got, err := c.Quotes.Get(ctx, q1.ID.String())
	require.NoError(t, err)
	assert.Equal(t, q1, got)
	_, err = c.Quotes.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	qids := func(qs []*invoicing.Quote) []uuid.UUID {
		var out []uuid.UUID
		for _, q := range qs {
			out = append(out, q.ID)
		}
		return out
	}
	assert.Equal(t, []uuid.UUID{q1.ID, q2.ID, q3.ID, q4.ID}, qids(e2eAll(t, c.Quotes.List(ctx, nil))))
	assert.Equal(t, []uuid.UUID{q4.ID}, qids(e2eAll(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{ClientID: invoicingtest.SeedOtherClientID}))))
	feb := invoicing.NewDate(2026, time.February, 1)
	assert.Equal(t, []uuid.UUID{q2.ID}, qids(e2eAll(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{FromDate: feb, ToDate: feb}))))
	assert.Empty(t, e2eAll(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{Status: invoicing.QuoteStatusAccepted})))
	page, err := c.Quotes.ListPage(ctx, &invoicing.QuoteListParams{ListParams: invoicing.ListParams{PageSize: 3}})
	require.NoError(t, err)
	assert.Equal(t, 4, page.Total, "total counts all matching quotes")
	assert.True(t, page.HasMore)
	assert.Equal(t, []uuid.UUID{q1.ID, q2.ID, q3.ID}, qids(e2ePtrs(page.Items)))

	t.Run("accepted quote becomes an invoice", func(t *testing.T) {
		res, err := srv.AcceptQuote(q1.ID.String(), invoicingtest.AcceptOptions{ByStaff: true})
		require.NoError(t, err)
		require.NotEmpty(t, res.InvoiceID)

		accepted, err := c.Quotes.Get(ctx, q1.ID.String())
		require.NoError(t, err)
		assert.Equal(t, invoicing.QuoteStatusAccepted, accepted.Status)
		e2eDecEqual(t, q1.Total, accepted.Total, "nothing optional: the accepted totals are the offered ones")
		assert.Equal(t, []uuid.UUID{q1.ID}, qids(e2eAll(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{Status: invoicing.QuoteStatusAccepted}))))

		inv, err := c.Invoices.Get(ctx, res.InvoiceID)
		require.NoError(t, err)
		assert.Equal(t, res.InvoiceNumber, inv.InvoiceNumber)
		assert.Equal(t, invoicing.InvoiceStatusDraft, inv.Status, "the default rule is 'create draft invoice'")
		assert.Equal(t, q1.ClientID, inv.ClientID)
		assert.Equal(t, q1.Currency, inv.Currency)
		e2eQuoteMatchesInvoice(t, accepted, inv)

		_, err = srv.AcceptQuote(q1.ID.String(), invoicingtest.AcceptOptions{ByStaff: true})
		assert.ErrorIs(t, err, invoicingtest.ErrInvalidState, "an accepted quote cannot be accepted again")
	})

	t.Run("accepted selection: excluded option and chosen quantity", func(t *testing.T) {
		srv.SetQuoteConversion(invoicingtest.ConvertToAwaitingPaymentInvoice)
		q := quote(&invoicing.QuoteCreateParams{
			ClientID: invoicingtest.SeedOtherClientID,
			LineItems: []invoicing.LineItemParams{
				e2eLine("Base package", "1", "1000"), e2eLine("Optional extra", "1", "250"), e2eLine("Training hours", "2", "95.50"),
			},
		})
		optional, editable := q.LineItems[1], q.LineItems[2]
		require.NoError(t, srv.SetQuoteLineOptions(q.ID.String(), optional.ID.String(), invoicingtest.QuoteLineOptions{Optional: true}))
		require.NoError(t, srv.SetQuoteLineOptions(q.ID.String(), editable.ID.String(), invoicingtest.QuoteLineOptions{QuantityEditable: true}))
		require.NoError(t, srv.SendQuote(q.ID.String()))
		chosen := e2eD("3.5")
		res, err := srv.AcceptQuote(q.ID.String(), invoicingtest.AcceptOptions{
			Exclude:    []string{optional.ID.String()},
			Quantities: map[string]decimal.Decimal{editable.ID.String(): chosen},
		})
		require.NoError(t, err)

		accepted, err := c.Quotes.Get(ctx, q.ID.String())
		require.NoError(t, err)
		// API.md 2.3 rule 3: excluded optional items are omitted and the
		// editable quantity is the accepted one.
		require.Len(t, accepted.LineItems, 2)
		assert.Equal(t, q.LineItems[0].ID, accepted.LineItems[0].ID)
		assert.Equal(t, editable.ID, accepted.LineItems[1].ID)
		e2eDecEqual(t, chosen, accepted.LineItems[1].Quantity)
		n0, t0, a0 := e2eAmounts(e2eD("1"), e2eD("1000"), gst)
		n1, t1, a1 := e2eAmounts(chosen, e2eD("95.50"), gst)
		e2eDecEqual(t, a1, accepted.LineItems[1].Amount)
		e2eDecEqual(t, n0.Add(n1), accepted.Subtotal)
		e2eDecEqual(t, t0.Add(t1), accepted.TaxTotal)
		e2eDecEqual(t, a0.Add(a1), accepted.Total)

		inv, err := c.Invoices.Get(ctx, res.InvoiceID)
		require.NoError(t, err)
		assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, inv.Status, "rule 'send approved invoice'")
		e2eQuoteMatchesInvoice(t, accepted, inv)
	})
}

// e2ePtrs turns a page's values into pointers, to share helpers with
// List's results.
func e2ePtrs[T any](v []T) []*T {
	out := make([]*T, len(v))
	for i := range v {
		out[i] = &v[i]
	}
	return out
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

// ------------------------------------------------------- clients, suppliers

// e2eContacts is what ClientService and SupplierService have in common.
type e2eContacts interface {
	List(context.Context, *invoicing.ContactListParams) iter.Seq2[*invoicing.Contact, error]
	ListPage(context.Context, *invoicing.ContactListParams) (*invoicing.Page[invoicing.Contact], error)
	Get(context.Context, string) (*invoicing.Contact, error)
	Create(context.Context, *invoicing.ContactCreateParams) (*invoicing.Contact, error)
}

func TestE2EClientsAndSuppliers(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	for _, tc := range []struct {
		path string
		svc  e2eContacts
		seed []string
	}{
		{"/clients", c.Clients, []string{invoicingtest.SeedClientID, invoicingtest.SeedOtherClientID}},
		{"/suppliers", c.Suppliers, []string{invoicingtest.SeedSupplierID, invoicingtest.SeedOtherSupplierID}},
	} {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			first, err := tc.svc.ListPage(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, len(tc.seed), first.Total)

			created, err := tc.svc.Create(ctx, &invoicing.ContactCreateParams{
				Name: "Harbour Lane Bakery", Email: "accounts@harbourlane.example", Phone: "+61 3 6200 0000",
				Extra: map[string]any{"address": map[string]any{"address_line1": "9 Wharf Rd", "city": "Hobart", "country": "AU"}},
			})
			require.NoError(t, err)
			assert.NotEqual(t, uuid.Nil, created.ID)
			assert.Equal(t, "Harbour Lane Bakery", created.Name)
			assert.Equal(t, "accounts@harbourlane.example", created.Email)
			assert.Equal(t, "+61 3 6200 0000", created.Phone)
			assert.Nil(t, created.UpdatedAt)
			assert.WithinDuration(t, srv.Now(), created.CreatedAt, 5*time.Second)
			assert.True(t, created.Has("id"), "the raw object is kept")

			got, err := tc.svc.Get(ctx, created.ID.String())
			require.NoError(t, err)
			assert.Equal(t, created.ID, got.ID)
			assert.Equal(t, created.Name, got.Name)
			assert.Equal(t, created.Email, got.Email)
			assert.JSONEq(t, string(created.Raw()), string(got.Raw()))

			all := e2eAll(t, tc.svc.List(ctx, nil))
			var ids []string
			for _, ct := range all {
				ids = append(ids, ct.ID.String())
			}
			assert.Equal(t, append(slices.Clone(tc.seed), created.ID.String()), ids)

			last, err := tc.svc.ListPage(ctx, &invoicing.ContactListParams{
				ListParams: invoicing.ListParams{Page: len(all), PageSize: 1},
				Extra:      url.Values{"search": {"Harbour"}},
			})
			require.NoError(t, err)
			assert.Equal(t, len(all), last.Total)
			assert.False(t, last.HasMore)
			require.Len(t, last.Items, 1)
			assert.Equal(t, created.ID, last.Items[0].ID)
			reqs := e2eRequests(srv, http.MethodGet, tc.path)
			q, err := url.ParseQuery(reqs[len(reqs)-1].RawQuery)
			require.NoError(t, err)
			assert.Equal(t, "Harbour", q.Get("search"), "Extra query values are sent")

			before := len(srv.Requests())
			_, err = tc.svc.Create(ctx, &invoicing.ContactCreateParams{Name: "Clash", Extra: map[string]any{"name": "Other"}})
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
			_, err = tc.svc.Get(ctx, "not-a-uuid")
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
			assert.Len(t, srv.Requests(), before, "nothing reached the service")

			_, err = tc.svc.Create(ctx, &invoicing.ContactCreateParams{Email: "nameless@example.com"})
			assert.ErrorIs(t, err, invoicing.ErrValidation, "the service requires a name")
			_, err = tc.svc.Get(ctx, uuid.NewString())
			assert.ErrorIs(t, err, invoicing.ErrNotFound)
		})
	}

	// The address sent through Extra reached the service: quote webhooks
	// carry the client's address.
	clients := e2eAll(t, c.Clients.List(ctx, nil))
	bakery := clients[len(clients)-1]
	_, err := c.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
		ClientID: bakery.ID.String(), DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{e2eLine("Bread", "1", "5")},
	})
	require.NoError(t, err)
	events := srv.Events()
	last := events[len(events)-1]
	require.Equal(t, invoicingtest.EventQuoteCreated, last.Name)
	ev, err := webhooks.Parse(webhooks.EventQuoteCreated, last.Body)
	require.NoError(t, err)
	qc := ev.(*webhooks.QuoteCreated)
	assert.Equal(t, "Hobart", qc.ClientAddress.City)
	assert.Equal(t, "9 Wharf Rd", qc.ClientAddress.AddressLine1)
	assert.Equal(t, bakery.Email, qc.ClientEmail)
}

// ------------------------------------------------------------------- bills

func TestE2EBills(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	gst := e2eTaxRate(t, c, invoicingtest.SeedGSTTaxCodeID)
	supplier, err := c.Suppliers.Get(ctx, invoicingtest.SeedSupplierID)
	require.NoError(t, err)

	b1, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID, BillNumber: "OS-1001",
		IssueDate: invoicing.NewDate(2026, time.March, 1), DueDate: invoicing.NewDate(2026, time.March, 31),
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{
			e2eLine("Paper, boxes", "10", "5.50"),
			{Description: "Toner", Quantity: e2eD("2"), UnitPrice: e2eD("89.99"), AccountID: invoicingtest.SeedOtherExpenseAccountID},
		},
	})
	require.NoError(t, err)
	assert.NotEqual(t, uuid.Nil, b1.ID)
	assert.Equal(t, "OS-1001", b1.BillNumber)
	assert.Equal(t, invoicingtest.SeedSupplierID, b1.SupplierID)
	assert.Equal(t, supplier.Name, b1.SupplierName)
	assert.Equal(t, invoicing.BillStatusDraft, b1.Status, "invoicingtest's default bill status")
	assert.Equal(t, invoicing.NewDate(2026, time.March, 1), b1.IssueDate)
	assert.Equal(t, invoicing.NewDate(2026, time.March, 31), b1.DueDate)
	assert.Equal(t, "AUD", b1.Currency)
	n0, t0, a0 := e2eAmounts(e2eD("10"), e2eD("5.50"), gst)
	n1, t1, a1 := e2eAmounts(e2eD("2"), e2eD("89.99"), gst)
	require.Len(t, b1.LineItems, 2)
	e2eDecEqual(t, a0, b1.LineItems[0].Amount)
	e2eDecEqual(t, t1, b1.LineItems[1].TaxAmount)
	require.NotNil(t, b1.LineItems[1].AccountID)
	assert.Equal(t, invoicingtest.SeedOtherExpenseAccountID, *b1.LineItems[1].AccountID, "the line's account overrides the default")
	e2eDecEqual(t, n0.Add(n1), b1.Subtotal)
	e2eDecEqual(t, t0.Add(t1), b1.TaxTotal)
	e2eDecEqual(t, a0.Add(a1), b1.Total)

	b2, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedOtherSupplierID, BillNumber: "OS-1001", Status: invoicing.BillStatusAwaitingApproval,
		DefaultAccountID: invoicingtest.SeedOtherExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{e2eLine("Hosting, March", "1", "49")},
		Extra:     map[string]any{"reference": "CH-3"},
	})
	require.NoError(t, err, "another supplier may use the same bill number")
	assert.Equal(t, invoicing.BillStatusAwaitingApproval, b2.Status)

	_, err = c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID, BillNumber: "OS-1001",
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{e2eLine("Again", "1", "1")},
	})
	assert.ErrorIs(t, err, invoicing.ErrConflict)
	_, err = c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID,
		LineItems:  []invoicing.LineItemParams{e2eLine("No account", "1", "1")},
	})
	assert.ErrorIs(t, err, invoicing.ErrValidation, "the service, not the SDK, requires an account and a tax code")

	got, err := c.Bills.Get(ctx, b1.ID.String())
	require.NoError(t, err)
	assert.JSONEq(t, string(b1.Raw()), string(got.Raw()))
	_, err = c.Bills.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	bids := func(bs []*invoicing.Bill) []uuid.UUID {
		var out []uuid.UUID
		for _, b := range bs {
			out = append(out, b.ID)
		}
		return out
	}
	assert.Equal(t, []uuid.UUID{b1.ID, b2.ID}, bids(e2eAll(t, c.Bills.List(ctx, nil))))
	assert.Equal(t, []uuid.UUID{b2.ID}, bids(e2eAll(t, c.Bills.List(ctx, &invoicing.BillListParams{Status: invoicing.BillStatusAwaitingApproval}))))
	assert.Equal(t, []uuid.UUID{b1.ID}, bids(e2eAll(t, c.Bills.List(ctx, &invoicing.BillListParams{SupplierID: invoicingtest.SeedSupplierID}))))
	page, err := c.Bills.ListPage(ctx, &invoicing.BillListParams{ListParams: invoicing.ListParams{PageSize: 1}})
	require.NoError(t, err)
	assert.Equal(t, 2, page.Total)
	assert.True(t, page.HasMore)
	assert.Equal(t, []uuid.UUID{b1.ID}, bids(e2ePtrs(page.Items)))

	require.NoError(t, srv.ApproveBill(b1.ID.String()))
	got, err = c.Bills.Get(ctx, b1.ID.String())
	require.NoError(t, err)
	assert.Equal(t, invoicing.BillStatusApproved, got.Status)
	assert.NotNil(t, got.UpdatedAt)
}

// ------------------------------------------------- accounts and tax codes

func TestE2EAccountsAndTaxCodes(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	closed := srv.AddAccount(invoicingtest.Account{Code: "4900", Name: "Old revenue", Type: invoicingtest.AccountRevenue, Inactive: true})

	all := e2eAll(t, c.Accounts.List(ctx, nil))
	require.NotEmpty(t, all)
	byID := map[string]*invoicing.Account{}
	for _, a := range all {
		byID[a.ID.String()] = a
	}
	assert.Len(t, byID, len(all), "ids are unique")
	for _, typ := range []invoicing.AccountType{invoicing.AccountTypeRevenue, invoicing.AccountTypeExpense, invoicing.AccountTypeAsset} {
		var want []uuid.UUID
		for _, a := range all {
			if a.Type == typ {
				want = append(want, a.ID)
			}
		}
		require.NotEmpty(t, want, typ)
		var got []uuid.UUID
		for _, a := range e2eAll(t, c.Accounts.List(ctx, &invoicing.AccountListParams{Type: typ})) {
			got = append(got, a.ID)
		}
		assert.Equal(t, want, got, "type=%s", typ)
		page, err := c.Accounts.ListPage(ctx, &invoicing.AccountListParams{Type: typ, ListParams: invoicing.ListParams{PageSize: 1}})
		require.NoError(t, err)
		assert.Equal(t, len(want), page.Total)
	}

	sales, err := c.Accounts.Get(ctx, invoicingtest.SeedRevenueAccountID)
	require.NoError(t, err)
	assert.Equal(t, byID[invoicingtest.SeedRevenueAccountID].Raw(), sales.Raw())
	assert.Equal(t, invoicing.AccountTypeRevenue, sales.Type)
	assert.NotEmpty(t, sales.Code)
	assert.NotEmpty(t, sales.Name)
	require.NotNil(t, sales.IsActive)
	assert.True(t, *sales.IsActive)
	old, err := c.Accounts.Get(ctx, closed)
	require.NoError(t, err)
	require.NotNil(t, old.IsActive)
	assert.False(t, *old.IsActive)
	assert.Equal(t, "4900", old.Code)
	_, err = c.Accounts.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	fancy := srv.AddTaxCode(invoicingtest.TaxCode{Code: "ODD", Name: "Odd rate", Rate: e2eD("12.345"), Region: "NZ"})
	codes := e2eAll(t, c.TaxCodes.List(ctx, nil))
	for _, region := range []string{"AU", "NZ"} {
		var want []uuid.UUID
		for _, tc := range codes {
			if strings.EqualFold(tc.Region, region) {
				want = append(want, tc.ID)
			}
		}
		require.NotEmpty(t, want, region)
		var got []uuid.UUID
		for _, tc := range e2eAll(t, c.TaxCodes.List(ctx, &invoicing.TaxCodeListParams{Region: region})) {
			got = append(got, tc.ID)
		}
		assert.Equal(t, want, got, "region=%s", region)
	}
	page, err := c.TaxCodes.ListPage(ctx, &invoicing.TaxCodeListParams{Region: "NZ", ListParams: invoicing.ListParams{PageSize: 1}})
	require.NoError(t, err)
	assert.Equal(t, 2, page.Total)
	assert.True(t, page.HasMore)

	levy, err := c.TaxCodes.Get(ctx, invoicingtest.SeedOnePercentTaxCodeID)
	require.NoError(t, err)
	e2eDecEqual(t, e2eD("1"), levy.Rate, "the 1% tax code of API.md's example")
	odd, err := c.TaxCodes.Get(ctx, fancy)
	require.NoError(t, err)
	e2eDecEqual(t, e2eD("12.345"), odd.Rate, "rates are exact")
	assert.Equal(t, "ODD", odd.Code)
	_, err = c.TaxCodes.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)
}

// ----------------------------------------------------------------- reports

func TestE2EReports(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	today := e2eToday(srv)

	// Two invoices that post to the ledger, a draft that does not, an
	// approved bill and a partial payment.
	var posted []*invoicing.Invoice
	for _, lines := range [][]invoicing.LineItemParams{
		{e2eLine("Design", "1", "1200"), e2eLine("Hosting", "12", "19.90")},
		{e2eLine("Support", "3", "33.333")},
	} {
		p := e2eInvoice(invoicingtest.SeedClientID, lines...)
		p.IssueDate, p.Status = today, invoicing.InvoiceStatusAwaitingPayment
		res, err := c.Invoices.Create(ctx, p)
		require.NoError(t, err)
		posted = append(posted, res.Invoice)
	}
	draft := e2eInvoice(invoicingtest.SeedClientID, e2eLine("Not yet sent", "1", "999"))
	draft.IssueDate = today
	_, err := c.Invoices.Create(ctx, draft)
	require.NoError(t, err)
	bill, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID, IssueDate: today,
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{e2eLine("Stationery", "4", "12.25")},
	})
	require.NoError(t, err)
	require.NoError(t, srv.ApproveBill(bill.ID.String()))
	payment := e2eD("500")
	_, err = srv.RecordPayment(posted[0].ID.String(), invoicingtest.Payment{Amount: payment})
	require.NoError(t, err)

	var revenue, sales, salesTax decimal.Decimal
	for _, inv := range posted {
		revenue = revenue.Add(inv.Subtotal)
		sales = sales.Add(inv.Total)
		salesTax = salesTax.Add(inv.TaxTotal)
	}
	amount := func(r *invoicing.Report, name string) decimal.Decimal {
		t.Helper()
		v, err := r.Totals.Amount(name)
		require.NoError(t, err, "total %q", name)
		return v
	}
	line := func(r *invoicing.Report, accountID string) invoicing.ReportLine {
		t.Helper()
		for _, l := range r.Lines {
			if l.AccountID == accountID {
				return l
			}
		}
		require.Failf(t, "no report line", "account %s", accountID)
		return invoicing.ReportLine{}
	}

	t.Run("trial balance", func(t *testing.T) {
		tb, err := c.Reports.TrialBalance(ctx, &invoicing.TrialBalanceParams{AsAt: today})
		require.NoError(t, err)
		assert.Equal(t, today, tb.AsAt)
		debit, credit := amount(tb, "debit"), amount(tb, "credit")
		e2eDecEqual(t, debit, credit, "debits equal credits")
		var sumDebit, sumCredit decimal.Decimal
		for _, l := range tb.Lines {
			sumDebit, sumCredit = sumDebit.Add(l.Debit), sumCredit.Add(l.Credit)
			e2eDecEqual(t, l.Debit.Sub(l.Credit), l.Balance, "account %s", l.AccountName)
		}
		e2eDecEqual(t, debit, sumDebit)
		e2eDecEqual(t, credit, sumCredit)
		ar := line(tb, invoicingtest.SeedReceivablesAccountID)
		e2eDecEqual(t, sales, ar.Debit, "receivables are debited with the posted invoices' totals")
		e2eDecEqual(t, payment, ar.Credit, "and credited with the payment")
		e2eDecEqual(t, payment, line(tb, invoicingtest.SeedBankLedgerAccountID).Debit)
		e2eDecEqual(t, revenue, line(tb, invoicingtest.SeedRevenueAccountID).Credit, "the draft is not posted")

		empty, err := c.Reports.TrialBalance(ctx, &invoicing.TrialBalanceParams{AsAt: today.AddDays(-1)})
		require.NoError(t, err)
		assert.Empty(t, empty.Lines, "nothing was posted before today")
		e2eDecEqual(t, decimal.Zero, amount(empty, "debit"))
	})

	t.Run("profit and loss", func(t *testing.T) {
		pl, err := c.Reports.ProfitAndLoss(ctx, &invoicing.ProfitAndLossParams{FromDate: today, ToDate: today})
		require.NoError(t, err)
		assert.Equal(t, today, pl.FromDate)
		assert.Equal(t, today, pl.ToDate)
		e2eDecEqual(t, revenue, amount(pl, "revenue"), "revenue equals the posted invoices' subtotals")
		e2eDecEqual(t, bill.Subtotal, amount(pl, "expenses"), "expenses equal the approved bill's subtotal")
		e2eDecEqual(t, revenue.Sub(bill.Subtotal), amount(pl, "net_profit"))

		before, err := c.Reports.ProfitAndLoss(ctx, &invoicing.ProfitAndLossParams{FromDate: today.AddDays(-10), ToDate: today.AddDays(-1)})
		require.NoError(t, err)
		e2eDecEqual(t, decimal.Zero, amount(before, "revenue"))
	})

	t.Run("balance sheet", func(t *testing.T) {
		bs, err := c.Reports.BalanceSheet(ctx, &invoicing.BalanceSheetParams{AsAt: today})
		require.NoError(t, err)
		assets, liabilities, equity := amount(bs, "assets"), amount(bs, "liabilities"), amount(bs, "equity")
		e2eDecEqual(t, assets, liabilities.Add(equity), "assets = liabilities + equity")
		e2eDecEqual(t, sales, assets, "receivables less the payment, plus the payment in the bank")
		e2eDecEqual(t, bill.Total.Add(salesTax).Sub(bill.TaxTotal), liabilities, "payables plus net GST")
		e2eDecEqual(t, revenue.Sub(bill.Subtotal), equity, "profit to date")
	})

	t.Run("defaults", func(t *testing.T) {
		tb, err := c.Reports.TrialBalance(ctx, nil)
		require.NoError(t, err)
		assert.Contains(t, []invoicing.Date{today, e2eToday(srv)}, tb.AsAt, "as at today by default")
		_, err = c.Reports.ProfitAndLoss(ctx, nil)
		require.NoError(t, err)
		_, err = c.Reports.BalanceSheet(ctx, nil)
		require.NoError(t, err)
		for _, p := range []string{"/reports/trial-balance", "/reports/profit-loss", "/reports/balance-sheet"} {
			assert.NotEmpty(t, e2eRequests(srv, http.MethodGet, p), p)
		}
	})
}

// -------------------------------------------------------------------- bank

func TestE2EBankAccountsAndTransactions(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	opening := e2eD("250.00")
	acct := srv.AddBankAccount(invoicingtest.BankAccount{Name: "E2E Float", AccountNumber: "062-999 0001", OpeningBalance: opening})
	jan := func(d int) time.Time { return time.Date(2026, time.January, d, 0, 0, 0, 0, time.UTC) }
	tx1 := srv.AddBankTransaction(invoicingtest.BankTransaction{BankAccountID: acct, Date: jan(3), Description: "Float top-up", Amount: e2eD("100.10")})
	tx2 := srv.AddBankTransaction(invoicingtest.BankTransaction{BankAccountID: acct, Date: jan(20), Description: "Petty cash", Amount: e2eD("-50.05"), Reference: "PC-1"})

	txns := e2eAll(t, c.BankTransactions.List(ctx, nil))
	sumFor := func(account string) decimal.Decimal {
		var sum decimal.Decimal
		for _, tx := range txns {
			if tx.BankAccountID == account {
				sum = sum.Add(tx.Amount)
			}
		}
		return sum
	}

	accounts := e2eAll(t, c.BankAccounts.List(ctx, nil))
	require.Len(t, accounts, 3)
	var mine *invoicing.BankAccount
	for _, a := range accounts {
		if a.ID == acct {
			mine = a
		}
	}
	require.NotNil(t, mine)
	assert.Equal(t, "E2E Float", mine.Name)
	assert.Equal(t, "062-999 0001", mine.AccountNumber)
	assert.Equal(t, "AUD", mine.Currency)
	e2eDecEqual(t, opening.Add(sumFor(acct)), mine.Balance, "balance = opening balance + transactions")
	e2eDecEqual(t, e2eD("300.05"), mine.Balance)
	page, err := c.BankAccounts.ListPage(ctx, &invoicing.BankAccountListParams{ListParams: invoicing.ListParams{PageSize: 2}})
	require.NoError(t, err)
	assert.Equal(t, 3, page.Total)
	assert.True(t, page.HasMore)
	assert.Len(t, page.Items, 2)

	txIDs := func(ts []*invoicing.BankTransaction) []string {
		var out []string
		for _, tx := range ts {
			out = append(out, tx.ID.String())
		}
		return out
	}
	assert.Equal(t, []string{tx1, tx2}, txIDs(e2eAll(t, c.BankTransactions.List(ctx, &invoicing.BankTransactionListParams{BankAccountID: acct}))))

	from, to := invoicing.NewDate(2026, time.January, 1), invoicing.NewDate(2026, time.January, 12)
	var want []string
	for _, tx := range txns {
		if tx.BankAccountID == invoicingtest.SeedBankAccountID && !tx.Date.Before(from) && !tx.Date.After(to) {
			want = append(want, tx.ID.String())
		}
	}
	require.NotEmpty(t, want)
	filtered := e2eAll(t, c.BankTransactions.List(ctx, &invoicing.BankTransactionListParams{
		BankAccountID: invoicingtest.SeedBankAccountID, FromDate: from, ToDate: to,
	}))
	assert.Equal(t, want, txIDs(filtered))
	tpage, err := c.BankTransactions.ListPage(ctx, &invoicing.BankTransactionListParams{FromDate: from, ToDate: to, ListParams: invoicing.ListParams{PageSize: 1}})
	require.NoError(t, err)
	assert.True(t, tpage.HasMore)
	assert.Len(t, tpage.Items, 1)

	got, err := c.BankTransactions.Get(ctx, tx2)
	require.NoError(t, err)
	assert.Equal(t, acct, got.BankAccountID)
	assert.Equal(t, invoicing.NewDate(2026, time.January, 20), got.Date)
	e2eDecEqual(t, e2eD("-50.05"), got.Amount, "money out is negative")
	assert.Equal(t, "Petty cash", got.Description)
	assert.Equal(t, "PC-1", got.Reference)
	assert.Equal(t, invoicingtest.BankTransactionUnreconciled, got.Status)
	_, err = c.BankTransactions.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)
	before := len(srv.Requests())
	_, err = c.BankTransactions.ListPage(ctx, &invoicing.BankTransactionListParams{FromDate: to, ToDate: from})
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams, "to_date before from_date")
	assert.Len(t, srv.Requests(), before, "nothing reached the service")
}

// -------------------------------------------------------------------- auth

func TestE2EAuthentication(t *testing.T) {
	ctx := t.Context()
	srv, full := e2eServer(t)
	item := &invoicing.ItemCreateParams{
		Name: "Forbidden", UnitPrice: invoicing.Ptr(e2eD("1")),
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	}

	t.Run("read-only key: reads work, writes are 403", func(t *testing.T) {
		ro := srv.ClientWithKey(srv.ReadOnlyKey, e2eFast)
		_, err := ro.Invoices.ListPage(ctx, nil)
		require.NoError(t, err)
		before := len(srv.Requests())
		_, err = ro.Items.Create(ctx, item)
		assert.ErrorIs(t, err, invoicing.ErrForbidden)
		e2eAPIError(t, err, http.StatusForbidden)
		_, err = ro.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("x", "1", "1")))
		assert.ErrorIs(t, err, invoicing.ErrForbidden)
		_, err = ro.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
			ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID,
			DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID, LineItems: []invoicing.LineItemParams{e2eLine("x", "1", "1")},
		})
		assert.ErrorIs(t, err, invoicing.ErrForbidden)
		assert.Len(t, srv.Requests(), before+3, "a 403 is not retried")
		items := e2eAll(t, full.Items.List(ctx, nil))
		assert.Len(t, items, 1, "nothing was created")
	})

	t.Run("bad key is 401", func(t *testing.T) {
		const badKey = "sk_test_not_a_key_of_this_business_0000"
		bad := srv.ClientWithKey(badKey, e2eFast)
		before := len(srv.Requests())
		_, err := bad.Invoices.ListPage(ctx, nil)
		assert.ErrorIs(t, err, invoicing.ErrUnauthorized)
		e2eAPIError(t, err, http.StatusUnauthorized)
		assert.NotContains(t, err.Error(), badKey)
		assert.Len(t, srv.Requests(), before+1, "a 401 is not retried")
	})

	t.Run("scoped and revoked keys", func(t *testing.T) {
		key := srv.NewAPIKey(invoicingtest.ScopeInvoicesRead)
		scoped := srv.ClientWithKey(key, e2eFast)
		_, err := scoped.Invoices.ListPage(ctx, nil)
		require.NoError(t, err)
		_, err = scoped.Quotes.ListPage(ctx, nil)
		assert.ErrorIs(t, err, invoicing.ErrForbidden, "quotes:read is missing")
		srv.RevokeAPIKey(key)
		_, err = scoped.Invoices.ListPage(ctx, nil)
		assert.ErrorIs(t, err, invoicing.ErrUnauthorized)
	})
}

// ------------------------------------------------------------------ faults

func TestE2EFaults(t *testing.T) {
	ctx := t.Context()

	t.Run("429 then success after Retry-After", func(t *testing.T) {
		srv, c := e2eServer(t)
		inv, err := c.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("x", "1", "1")))
		require.NoError(t, err)
		path := "/invoices/" + inv.ID.String()
		srv.RateLimitNext(1, time.Second)
		start := time.Now()
		got, err := c.Invoices.Get(ctx, inv.ID.String())
		elapsed := time.Since(start)
		require.NoError(t, err)
		assert.Equal(t, inv.ID, got.ID)
		assert.GreaterOrEqual(t, elapsed, time.Second, "the SDK waited for Retry-After")
		reqs := e2eRequests(srv, http.MethodGet, path)
		require.Len(t, reqs, 2)
		assert.Equal(t, http.StatusTooManyRequests, reqs[0].Status)
		assert.True(t, reqs[0].Fault)
		assert.Equal(t, http.StatusOK, reqs[1].Status)
	})

	t.Run("429 asking longer than the maximum wait returns at once", func(t *testing.T) {
		srv, c := e2eServer(t)
		srv.RateLimitNext(1, 30*time.Second)
		start := time.Now()
		_, err := c.Quotes.ListPage(ctx, nil)
		assert.Less(t, time.Since(start), 5*time.Second)
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

// -------------------------------------------------------------- pagination

func TestE2EPaginationOverManyRecords(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	client := srv.AddClient(invoicingtest.Contact{Name: "Volume Buyer Pty Ltd"})
	const n = 120

	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				_, err := c.Invoices.Create(ctx, e2eInvoice(client, e2eLine("Order "+strconv.Itoa(i), "1", strconv.Itoa(i+1))))
				errs <- err
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	lists := func() []invoicingtest.Request { return e2eRequests(srv, http.MethodGet, "/invoices") }
	before := len(lists())
	all := e2eAll(t, c.Invoices.List(ctx, &invoicing.InvoiceListParams{ClientID: client}))
	require.Len(t, all, n)
	seen := map[uuid.UUID]bool{}
	var sum decimal.Decimal
	for _, inv := range all {
		assert.False(t, seen[inv.ID], "invoice %s listed twice", inv.InvoiceNumber)
		seen[inv.ID] = true
		sum = sum.Add(inv.Subtotal)
	}
	e2eDecEqual(t, decimal.NewFromInt(n*(n+1)/2), sum, "every invoice once: subtotals 1..120")
	reqs := lists()[before:]
	require.Len(t, reqs, 2, "pages of 100: two requests for 120 records")
	for i, r := range reqs {
		q, err := url.ParseQuery(r.RawQuery)
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(invoicing.MaxPageSize), q.Get("page_size"))
		assert.Equal(t, strconv.Itoa(i+1), e2eOr(q.Get("page"), "1"))
		assert.Equal(t, client, q.Get("client_id"))
	}

	before = len(lists())
	count := 0
	for _, err := range c.Invoices.List(ctx, &invoicing.InvoiceListParams{ClientID: client}) {
		require.NoError(t, err)
		count++
		if count == 5 {
			break
		}
	}
	assert.Equal(t, 5, count)
	assert.Len(t, lists(), before+1, "breaking early fetches no further page")

	last, err := c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{ClientID: client, ListParams: invoicing.ListParams{Page: 2, PageSize: 100}})
	require.NoError(t, err)
	assert.Equal(t, n, last.Total)
	assert.False(t, last.HasMore)
	assert.Equal(t, e2eIDs(all[100:], e2eInvoiceID), e2eIDs(e2ePtrs(last.Items), e2eInvoiceID))

	fromPage2 := e2eAll(t, c.Invoices.List(ctx, &invoicing.InvoiceListParams{ClientID: client, ListParams: invoicing.ListParams{Page: 2, PageSize: 50}}))
	assert.Equal(t, e2eIDs(all[50:], e2eInvoiceID), e2eIDs(fromPage2, e2eInvoiceID), "List starts at the requested page")
}

// e2eOr returns v, or def when v is empty (page 1 may be left out).
func e2eOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// ---------------------------------------------------------------- webhooks

// e2eReceiver is a webhook receiver running webhooks.Handler behind a
// handler that can be swapped (to change the secret it verifies with).
type e2eReceiver struct {
	srv     *httptest.Server
	handler atomic.Pointer[http.Handler]

	mu  sync.Mutex
	got []*webhooks.Delivery
}

func e2eNewReceiver(t *testing.T) *e2eReceiver {
	r := &e2eReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		(*r.handler.Load()).ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// verifyWith makes the receiver verify deliveries with secret.
func (r *e2eReceiver) verifyWith(t *testing.T, secret string) {
	t.Helper()
	v, err := webhooks.NewVerifier(secret)
	require.NoError(t, err)
	h := webhooks.Handler(v, func(_ context.Context, d *webhooks.Delivery) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, d)
		return nil
	})
	r.handler.Store(&h)
}

func (r *e2eReceiver) deliveries() []*webhooks.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func e2eEventAs[E webhooks.Event](t *testing.T, d *webhooks.Delivery) E {
	t.Helper()
	e, ok := d.Event.(E)
	require.True(t, ok, "delivery %s is %T (%s)", d.ID, d.Event, d.Type)
	return e
}

func TestE2EWebhooks(t *testing.T) {
	ctx := t.Context()
	clock := invoicingtest.NewFakeClock(time.Now())
	srv, c := e2eServer(t, invoicingtest.WithClock(clock), invoicingtest.WithQuoteConversion(invoicingtest.ConvertToAwaitingPaymentInvoice))
	rcv := e2eNewReceiver(t)
	ep := srv.AddWebhookEndpoint(rcv.srv.URL + "/hooks")
	rcv.verifyWith(t, ep.Secret())

	q, err := c.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
		ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedOtherRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{e2eLine("Kitchen fit-out", "1", "4200"), e2eLine("Site visits", "3", "180")},
	})
	require.NoError(t, err)
	accepted, err := srv.AcceptQuote(q.ID.String(), invoicingtest.AcceptOptions{ByStaff: true, OrderNumber: "PO-778"})
	require.NoError(t, err)
	inv, err := c.Invoices.Get(ctx, accepted.InvoiceID)
	require.NoError(t, err)
	require.Equal(t, invoicing.InvoiceStatusAwaitingPayment, inv.Status)

	partial := inv.Total.Div(decimal.NewFromInt(3)).Round(2)
	rest := inv.Total.Sub(partial)
	_, err = srv.RecordPayment(inv.ID.String(), invoicingtest.Payment{Amount: partial})
	require.NoError(t, err)
	mid, err := c.Invoices.Get(ctx, inv.ID.String())
	require.NoError(t, err)
	e2eDecEqual(t, partial, mid.AmountPaid)
	e2eDecEqual(t, rest, mid.AmountDue)
	assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, mid.Status, "a partial payment leaves a balance")
	_, err = srv.RecordPayment(inv.ID.String(), invoicingtest.Payment{Amount: rest, Method: invoicingtest.PaymentCard})
	require.NoError(t, err)

	paid, err := c.Invoices.Get(ctx, inv.ID.String())
	require.NoError(t, err)
	assert.Equal(t, invoicing.InvoiceStatusPaid, paid.Status)
	e2eDecEqual(t, inv.Total, paid.AmountPaid)
	assert.True(t, paid.AmountDue.IsZero())

	// Deliveries are synchronous: every event has arrived, in order.
	got := rcv.deliveries()
	var types []webhooks.EventType
	for _, d := range got {
		types = append(types, d.Type)
	}
	require.Equal(t, []webhooks.EventType{
		webhooks.EventQuoteCreated, webhooks.EventQuoteAccepted, webhooks.EventInvoiceCreated,
		webhooks.EventPaymentReceived, webhooks.EventPaymentReceived, webhooks.EventInvoicePaid,
	}, types)

	qc := e2eEventAs[*webhooks.QuoteCreated](t, got[0])
	assert.Equal(t, q.ID.String(), qc.QuoteID)
	assert.Equal(t, q.QuoteNumber, qc.QuoteNumber)
	assert.Equal(t, invoicing.QuoteStatusDraft, qc.Status)
	assert.Equal(t, q.ClientName, qc.ClientName)
	assert.Equal(t, q.IssueDate, qc.IssueDate)
	assert.Equal(t, q.ValidUntil, qc.ValidUntil)
	e2eDecEqual(t, q.Subtotal, qc.Subtotal)
	e2eDecEqual(t, q.TaxTotal, qc.TaxAmount)
	e2eDecEqual(t, q.Total, qc.Total)
	require.Len(t, qc.LineItems, len(q.LineItems))
	for i, l := range q.LineItems {
		assert.Equal(t, l.ID.String(), qc.LineItems[i].ID)
		e2eDecEqual(t, l.Amount, qc.LineItems[i].Total)
		e2eDecEqual(t, l.TaxAmount, qc.LineItems[i].TaxAmount)
	}
	assert.Nil(t, qc.QuotePublicURL, "never sent: no share link yet")

	qa := e2eEventAs[*webhooks.QuoteAccepted](t, got[1])
	assert.Equal(t, q.ID.String(), qa.QuoteID)
	assert.Equal(t, invoicing.QuoteStatusAccepted, qa.Status)
	assert.Nil(t, qa.AcceptingContact, "accepted by staff")
	assert.Equal(t, "PO-778", qa.AcceptanceOrderNumber)
	require.NotNil(t, qa.InvoiceID)
	require.NotNil(t, qa.InvoiceNumber)
	require.NotNil(t, qa.InvoiceStatus)
	assert.Equal(t, inv.ID.String(), *qa.InvoiceID)
	assert.Equal(t, inv.InvoiceNumber, *qa.InvoiceNumber)
	assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, *qa.InvoiceStatus)
	assert.NotNil(t, qa.InvoiceShareURL, "an awaiting_payment conversion has a payment link")
	e2eDecEqual(t, inv.Total, qa.Total)

	ic := e2eEventAs[*webhooks.InvoiceCreated](t, got[2])
	assert.Equal(t, inv.ID.String(), ic.InvoiceID)
	assert.Equal(t, inv.InvoiceNumber, ic.InvoiceNumber)
	assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, ic.Status)
	e2eDecEqual(t, inv.Total, ic.Total)

	for i, want := range []struct {
		amount decimal.Decimal
		method webhooks.PaymentMethod
	}{{partial, webhooks.PaymentMethodBankTransfer}, {rest, invoicingtest.PaymentCard}} {
		pr := e2eEventAs[*webhooks.PaymentReceived](t, got[3+i])
		assert.Equal(t, inv.ID.String(), pr.InvoiceID)
		e2eDecEqual(t, want.amount, pr.Amount)
		assert.Equal(t, want.method, pr.PaymentMethod)
		require.NotNil(t, pr.InvoiceNumber)
		assert.Equal(t, inv.InvoiceNumber, *pr.InvoiceNumber)
	}
	ip := e2eEventAs[*webhooks.InvoicePaid](t, got[5])
	assert.Equal(t, inv.ID.String(), ip.InvoiceID)
	e2eDecEqual(t, inv.Total, ip.AmountPaid)

	sent := ep.Deliveries()
	require.Len(t, sent, len(got))
	for i, d := range sent {
		assert.Equal(t, d.ID, got[i].ID, "the delivery id reaches the handler")
		assert.Equal(t, invoicingtest.DeliverySucceeded, d.Status)
		require.Len(t, d.Attempts, 1)
		assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
	}

	t.Run("tampered body is rejected", func(t *testing.T) {
		body := got[2].Body
		tampered := bytes.Replace(body, []byte(`"total":"`), []byte(`"total":"1`), 1)
		require.NotEqual(t, body, tampered)
		post := func(b []byte) int {
			ts, sig := webhooks.Sign(ep.Secret(), time.Now(), body) // signed over the original body
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, rcv.srv.URL+"/hooks", bytes.NewReader(b))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(webhooks.HeaderEvent, string(webhooks.EventInvoiceCreated))
			req.Header.Set(webhooks.HeaderDelivery, uuid.NewString())
			req.Header.Set(webhooks.HeaderTimestamp, ts)
			req.Header.Set(webhooks.HeaderSignature, sig)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		n := len(rcv.deliveries())
		assert.Equal(t, http.StatusUnauthorized, post(tampered))
		assert.Len(t, rcv.deliveries(), n, "the handler function never saw it")
		assert.Equal(t, http.StatusOK, post(body), "the untouched body with the same headers passes")
	})

	t.Run("rotated secret: old secret answers 401, the retry succeeds with the new one", func(t *testing.T) {
		oldSecret := ep.Secret()
		newSecret := ep.RotateSecret()
		require.NotEqual(t, oldSecret, newSecret)
		n := len(rcv.deliveries())

		created, err := c.Clients.Create(ctx, &invoicing.ContactCreateParams{Name: "Rotation Test Ltd", Email: "ap@rotation.example"})
		require.NoError(t, err)
		last := ep.Deliveries()[len(ep.Deliveries())-1]
		assert.Equal(t, invoicingtest.EventContactCreated, last.Event)
		assert.Equal(t, invoicingtest.DeliveryPending, last.Status)
		require.Len(t, last.Attempts, 1)
		assert.Equal(t, http.StatusUnauthorized, last.Attempts[0].StatusCode, "the receiver still on the old secret refuses it")
		assert.Equal(t, last.Attempts[0].At.Add(invoicingtest.RetrySchedule()[0]), last.NextRetryAt, "a retry is scheduled after 1 minute")
		assert.Len(t, rcv.deliveries(), n)

		rcv.verifyWith(t, newSecret)
		clock.Advance(time.Minute)
		retried := ep.Deliveries()[len(ep.Deliveries())-1]
		assert.Equal(t, last.ID, retried.ID)
		assert.Equal(t, invoicingtest.DeliverySucceeded, retried.Status)
		require.Len(t, retried.Attempts, 2)
		assert.Equal(t, http.StatusOK, retried.Attempts[1].StatusCode)

		now := rcv.deliveries()
		require.Len(t, now, n+1)
		assert.Equal(t, last.ID, now[n].ID, "same delivery id on the retry")
		cc := e2eEventAs[*webhooks.ContactCreated](t, now[n])
		assert.Equal(t, created.ID.String(), cc.ContactID)
		assert.Equal(t, webhooks.ContactTypeClient, cc.ContactType)
		assert.Equal(t, "Rotation Test Ltd", cc.Name)
	})
}
