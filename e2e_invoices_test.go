package invoicing_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

func TestE2EInvoiceCreateDefaultsAndGet(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	gst := e2eTaxRate(t, c, invoicingtest.SeedGSTTaxCodeID)

	before := e2eToday(srv)
	res, err := c.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("Consulting", "2", "150")))
	after := e2eToday(srv)
	require.NoError(t, err)
	assert.True(t, res.Created, "a new invoice is 201 Created")
	assert.NotEmpty(t, res.ID)
	assert.NotEmpty(t, res.InvoiceNumber, "the number is generated when omitted")
	assert.Equal(t, invoicing.InvoiceStatusDraft, res.Status, "status defaults to draft")
	assert.Equal(t, "AUD", res.Currency, "currency defaults to AUD")
	assert.Contains(t, []invoicing.Date{before, after}, res.IssueDate, "issue_date defaults to today")
	// API.md gives no default due date; invoicingtest uses the business's
	// default terms of 30 days.
	assert.Equal(t, res.IssueDate.AddDays(30), res.DueDate)
	customer, err := c.Clients.Get(ctx, invoicingtest.SeedClientID)
	require.NoError(t, err)
	assert.Equal(t, invoicingtest.SeedClientID, res.ClientID)
	assert.Equal(t, customer.Name, res.ClientName)
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

	got, err := c.Invoices.Get(ctx, res.ID)
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

	// What the service validates and the SDK does not: a customer of another
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
	assert.Equal(t, []string{first.ID}, e2eIDs(all, e2eInvoiceID), "no duplicate was created")

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
	// The day after the last issue date below, before any due date: no
	// invoice awaiting payment is overdue yet.
	srv, c := e2eServer(t, invoicingtest.WithClock(invoicingtest.NewFakeClock(time.Date(2025, time.March, 11, 9, 0, 0, 0, time.UTC))))
	customer := srv.AddClient(invoicingtest.Contact{Name: "Filter Test Pty Ltd", Email: "ap@filter.example"})

	type spec struct {
		client string
		issue  invoicing.Date
		status invoicing.InvoiceStatus
	}
	specs := []spec{
		{customer, invoicing.NewDate(2025, time.January, 10), invoicing.InvoiceStatusDraft},
		{customer, invoicing.NewDate(2025, time.February, 10), invoicing.InvoiceStatusAwaitingPayment},
		{invoicingtest.SeedClientID, invoicing.NewDate(2025, time.February, 15), invoicing.InvoiceStatusAwaitingPayment},
		{customer, invoicing.NewDate(2025, time.February, 20), invoicing.InvoiceStatusDraft},
		{customer, invoicing.NewDate(2025, time.March, 10), invoicing.InvoiceStatusAwaitingPayment},
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
				ids = append(ids, inv.ID)
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
			&invoicing.InvoiceListParams{ClientID: customer},
			func(i *invoicing.Invoice) bool { return i.ClientID == customer },
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
			&invoicing.InvoiceListParams{ClientID: customer, Status: invoicing.InvoiceStatusAwaitingPayment, FromDate: feb1},
			func(i *invoicing.Invoice) bool {
				return i.ClientID == customer && i.Status == invoicing.InvoiceStatusAwaitingPayment && !i.IssueDate.Before(feb1)
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := e2eAll(t, c.Invoices.List(ctx, tc.params))
			assert.Equal(t, want(tc.keep), e2eIDs(got, e2eInvoiceID))
		})
	}

	clientIDs := want(func(i *invoicing.Invoice) bool { return i.ClientID == customer })
	p1, err := c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{ClientID: customer, ListParams: invoicing.ListParams{PageSize: 3}})
	require.NoError(t, err)
	assert.Equal(t, len(clientIDs), p1.Total)
	assert.Equal(t, 1, p1.Page)
	assert.Equal(t, 3, p1.PageSize)
	assert.True(t, p1.HasMore)
	p2, err := c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{ClientID: customer, ListParams: invoicing.ListParams{Page: 2, PageSize: 3}})
	require.NoError(t, err)
	assert.Equal(t, 2, p2.Page)
	assert.False(t, p2.HasMore)
	var paged []string
	for _, inv := range append(p1.Items, p2.Items...) {
		paged = append(paged, inv.ID)
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
		{"invoice", "Invoice-" + inv.InvoiceNumber + ".pdf", inv.InvoiceNumber, func() (*invoicing.File, error) { return c.Invoices.PDF(ctx, inv.ID) }},
		{"quote", "Quote-" + q.QuoteNumber + ".pdf", q.QuoteNumber, func() (*invoicing.File, error) { return c.Quotes.PDF(ctx, q.ID) }},
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
			Description: "line " + strconv.Itoa(i), Quantity: invoicing.Ptr(e2eD(l.qty)), UnitPrice: e2eD(l.price), TaxCodeID: l.taxCode,
		})
	}
	res, err := c.Invoices.Create(ctx, p)
	require.NoError(t, err)
	got, err := c.Invoices.Get(ctx, res.ID)
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

// A line the caller sets to quantity 0 bills nothing: the SDK sends the 0
// rather than dropping it, which would make the service use 1.
func TestE2EZeroQuantityLineBillsNothing(t *testing.T) {
	_, c := e2eServer(t)
	res, err := c.Invoices.Create(t.Context(), &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID, // 10%
		LineItems: []invoicing.LineItemParams{
			{Description: "billed", Quantity: invoicing.Ptr(e2eD("1")), UnitPrice: e2eD("100")},
			{Description: "not this month", Quantity: invoicing.Ptr(e2eD("0")), UnitPrice: e2eD("100")},
		},
	})
	require.NoError(t, err)
	e2eDecEqual(t, e2eD("110"), res.Total)
	require.Len(t, res.LineItems, 2)
	e2eDecEqual(t, e2eD("0"), res.LineItems[1].Amount)
}
