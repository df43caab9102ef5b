package invoicing_test

// The resources API.md documents field by field, end to end: invoices
// (create with its defaults, dates, status, reference idempotency and
// numbers; get; list filters and pages; List over many pages with and
// without WithPrefetch; PDFs; exact money), catalog items, and quotes with
// their acceptance into an invoice (API.md 2.3 rule 3, 3.2).

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
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
	assert.Equal(t, res.Invoice, got, "GET returns the invoice the create returned (decoded from the same JSON: equal records)")
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
	assert.Equal(t, []string{first.ID}, e2eListIDs(t, c.Invoices.List(ctx, nil)), "no duplicate was created")

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
			assert.Equal(t, want(tc.keep), e2eListIDs(t, c.Invoices.List(ctx, tc.params)))
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
	assert.Equal(t, clientIDs, append(e2ePageIDs(p1), e2ePageIDs(p2)...), "two pages hold every match once, in order")

	def, err := c.Invoices.ListPage(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, 50, def.PageSize, "page_size defaults to 50")
	assert.Equal(t, len(created), def.Total)

	before := len(srv.Requests())
	_, err = c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{FromDate: feb20, ToDate: feb1})
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams, "to_date before from_date")
	for _, err := range c.Invoices.List(ctx, &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: invoicing.MaxPageSize + 1}}) {
		assert.ErrorIs(t, err, invoicing.ErrInvalidParams, "page_size above the documented maximum")
	}
	assert.Len(t, srv.Requests(), before, "nothing reached the service")
}

func TestE2EPaginationOverManyRecords(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)
	customer := srv.AddClient(invoicingtest.Contact{Name: "Volume Buyer Pty Ltd"})
	const n = 120

	require.NoError(t, testkit.Concurrently(n, 8, func(i int) error {
		_, err := c.Invoices.Create(ctx, e2eInvoice(customer, e2eLine("Order "+strconv.Itoa(i), "1", strconv.Itoa(i+1))))
		return err
	}))

	lists := func() []invoicingtest.Request { return e2eRequests(srv, http.MethodGet, "/invoices") }
	pageQuery := func(r invoicingtest.Request) url.Values {
		q, err := url.ParseQuery(r.RawQuery)
		require.NoError(t, err)
		if !q.Has("page") {
			q.Set("page", "1") // page 1 may be left out
		}
		return q
	}
	filter := &invoicing.InvoiceListParams{ClientID: customer}
	before := len(lists())
	all := e2eAll(t, c.Invoices.List(ctx, filter))
	require.Len(t, all, n)
	seen := map[string]bool{}
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
		q := pageQuery(r)
		assert.Equal(t, strconv.Itoa(invoicing.MaxPageSize), q.Get("page_size"))
		assert.Equal(t, strconv.Itoa(i+1), q.Get("page"))
		assert.Equal(t, customer, q.Get("client_id"))
	}
	allIDs := e2eIDs(all)

	t.Run("break fetches no further page", func(t *testing.T) {
		before := len(lists())
		count := 0
		for _, err := range c.Invoices.List(ctx, filter) {
			require.NoError(t, err)
			count++
			if count == 5 {
				break
			}
		}
		assert.Equal(t, 5, count)
		assert.Len(t, lists(), before+1)
	})

	t.Run("ListPage and a List from a later page", func(t *testing.T) {
		last, err := c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{ClientID: customer, ListParams: invoicing.ListParams{Page: 2, PageSize: 100}})
		require.NoError(t, err)
		assert.Equal(t, n, last.Total)
		assert.False(t, last.HasMore)
		assert.Equal(t, allIDs[100:], e2ePageIDs(last))
		fromPage2 := e2eListIDs(t, c.Invoices.List(ctx, &invoicing.InvoiceListParams{ClientID: customer, ListParams: invoicing.ListParams{Page: 2, PageSize: 50}}))
		assert.Equal(t, allIDs[50:], fromPage2, "List starts at the requested page")
	})

	t.Run("WithPrefetch yields the same records in order, each page fetched once", func(t *testing.T) {
		const size = 10
		pages := (n + size - 1) / size
		p := &invoicing.InvoiceListParams{ClientID: customer, ListParams: invoicing.ListParams{PageSize: size}}
		for _, ahead := range []int{1, 4, invoicing.MaxPrefetch} {
			before := len(lists())
			got := e2eListIDs(t, c.Invoices.List(ctx, p, invoicing.WithPrefetch(ahead)))
			assert.Equal(t, allIDs, got, "prefetch %d", ahead)
			reqs := lists()[before:]
			require.Len(t, reqs, pages, "prefetch %d: never a page past the last one", ahead)
			asked := map[string]bool{}
			for _, r := range reqs {
				asked[pageQuery(r).Get("page")] = true
			}
			assert.Len(t, asked, pages, "prefetch %d: every page once", ahead)
		}
		for _, bad := range []int{0, -1, invoicing.MaxPrefetch + 1} {
			before := len(lists())
			_, err := invoicing.Collect(c.Invoices.List(ctx, p, invoicing.WithPrefetch(bad)), 0)
			assert.ErrorIs(t, err, invoicing.ErrInvalidOption, "prefetch %d", bad)
			assert.Len(t, lists(), before)
		}
	})
}

func TestE2EInvoiceAndQuotePDF(t *testing.T) {
	ctx := t.Context()
	_, c := e2eServer(t)
	inv, err := c.Invoices.Create(ctx, e2eInvoice(invoicingtest.SeedClientID, e2eLine("Printed", "1", "42")))
	require.NoError(t, err)
	q, err := c.Quotes.Create(ctx, e2eQuote(invoicingtest.SeedClientID, e2eLine("Printed quote", "1", "42")))
	require.NoError(t, err)

	for _, tc := range []struct {
		name, wantFile, number string
		get                    func() (*invoicing.File, error)
	}{
		// API.md 4.2 and 4.4: Invoice-<invoice_number>.pdf, Quote-<number>.pdf.
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
	_, err = c.Invoices.PDF(ctx, "../items")
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams, "an id cannot change the path")
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
	gst := e2eTaxRate(t, c, invoicingtest.SeedGSTTaxCodeID)
	res, err := c.Invoices.Create(t.Context(), e2eInvoice(invoicingtest.SeedClientID,
		e2eLine("billed", "1", "100"), e2eLine("not this month", "0", "100")))
	require.NoError(t, err)
	_, _, billed := e2eAmounts(e2eD("1"), e2eD("100"), gst)
	e2eDecEqual(t, billed, res.Total)
	require.Len(t, res.LineItems, 2)
	e2eDecEqual(t, decimal.Zero, res.LineItems[1].Amount)
	e2eDecEqual(t, decimal.Zero, res.LineItems[1].Quantity)
}

func TestE2EItems(t *testing.T) {
	ctx := t.Context()
	srv, c := e2eServer(t)

	widget, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
		ItemCode: "E2E-WIDGET", Name: "Widget", Description: "A blue widget",
		UnitPrice: invoicing.Ptr(e2eD("12.345")),
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	})
	require.NoError(t, err)
	assert.NotEmpty(t, widget.ID)
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

	got, err := c.Items.Get(ctx, widget.ID)
	require.NoError(t, err)
	assert.Equal(t, widget, got, "decoded from the same JSON: equal records")
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
	require.Len(t, all, 4, "the seed item and three new ones")
	assert.Equal(t, invoicingtest.SeedItemID, all[0].ID)
	assert.Equal(t, []string{widget.ID, text.ID, paper.ID}, e2eIDs(all[1:]))
	for _, typ := range []invoicing.ItemType{invoicing.ItemTypeSales, invoicing.ItemTypePurchase, invoicing.ItemTypeText} {
		var want []string
		for _, it := range all {
			if it.ItemType == typ {
				want = append(want, it.ID)
			}
		}
		assert.Equal(t, want, e2eListIDs(t, c.Items.List(ctx, &invoicing.ItemListParams{ItemType: typ})), "item_type=%s", typ)
	}

	page, err := c.Items.ListPage(ctx, &invoicing.ItemListParams{ListParams: invoicing.ListParams{Page: 2, PageSize: 3}})
	require.NoError(t, err)
	assert.Equal(t, len(all), page.Total)
	assert.False(t, page.HasMore)
	assert.Equal(t, []string{paper.ID}, e2ePageIDs(page))
}

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
		n, tx, a := e2eAmounts(*l.Quantity, l.UnitPrice, gst)
		e2eDecEqual(t, a, q1.LineItems[i].Amount)
		e2eDecEqual(t, tx, q1.LineItems[i].TaxAmount)
		assert.Empty(t, q1.LineItems[i].ItemID, "not linked to the catalog")
		assert.NotContains(t, string(rawJSON(t, q1.LineItems[i])), `"item_id"`, "item_id is present only for linked lines")
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
		LineItems: []invoicing.LineItemParams{{ItemID: catalog.ID, Quantity: invoicing.Ptr(e2eD("10")), UnitPrice: e2eD("140")}},
	})
	require.Len(t, q3.LineItems, 1)
	linked := q3.LineItems[0]
	require.NotEmpty(t, linked.ItemID)
	assert.Equal(t, catalog.ID, linked.ItemID)
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

	got, err := c.Quotes.Get(ctx, q1.ID)
	require.NoError(t, err)
	assert.Equal(t, q1, got, "decoded from the same JSON: equal records")
	_, err = c.Quotes.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	assert.Equal(t, []string{q1.ID, q2.ID, q3.ID, q4.ID}, e2eListIDs(t, c.Quotes.List(ctx, nil)))
	assert.Equal(t, []string{q4.ID}, e2eListIDs(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{ClientID: invoicingtest.SeedOtherClientID})))
	feb := invoicing.NewDate(2026, time.February, 1)
	assert.Equal(t, []string{q2.ID}, e2eListIDs(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{FromDate: feb, ToDate: feb})))
	assert.Empty(t, e2eAll(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{Status: invoicing.QuoteStatusAccepted})))
	page, err := c.Quotes.ListPage(ctx, &invoicing.QuoteListParams{ListParams: invoicing.ListParams{PageSize: 3}})
	require.NoError(t, err)
	assert.Equal(t, 4, page.Total, "total counts all matching quotes")
	assert.True(t, page.HasMore)
	assert.Equal(t, []string{q1.ID, q2.ID, q3.ID}, e2ePageIDs(page))

	t.Run("what the SDK checks is not sent", func(t *testing.T) {
		before := len(srv.Requests())
		for _, p := range []*invoicing.QuoteCreateParams{
			nil,
			{ClientID: invoicingtest.SeedClientID}, // no lines
			{ClientID: invoicingtest.SeedClientID, LineItems: []invoicing.LineItemParams{e2eLine("no account", "1", "1")}},
			e2eQuote(invoicingtest.SeedClientID, invoicing.LineItemParams{UnitPrice: e2eD("1"), ItemID: "not-a-uuid"}),
		} {
			_, err := c.Quotes.Create(ctx, p)
			assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
		}
		assert.Len(t, srv.Requests(), before)
	})

	t.Run("accepted quote becomes an invoice", func(t *testing.T) {
		res, err := srv.AcceptQuote(q1.ID, invoicingtest.AcceptOptions{ByStaff: true})
		require.NoError(t, err)
		require.NotEmpty(t, res.InvoiceID)

		accepted, err := c.Quotes.Get(ctx, q1.ID)
		require.NoError(t, err)
		assert.Equal(t, invoicing.QuoteStatusAccepted, accepted.Status)
		e2eDecEqual(t, q1.Total, accepted.Total, "nothing optional: the accepted totals are the offered ones")
		assert.Equal(t, []string{q1.ID}, e2eListIDs(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{Status: invoicing.QuoteStatusAccepted})))

		inv, err := c.Invoices.Get(ctx, res.InvoiceID)
		require.NoError(t, err)
		assert.Equal(t, res.InvoiceNumber, inv.InvoiceNumber)
		assert.Equal(t, invoicing.InvoiceStatusDraft, inv.Status, "the default rule is 'create draft invoice'")
		assert.Equal(t, q1.ClientID, inv.ClientID)
		assert.Equal(t, q1.Currency, inv.Currency)
		e2eQuoteMatchesInvoice(t, accepted, inv)

		_, err = srv.AcceptQuote(q1.ID, invoicingtest.AcceptOptions{ByStaff: true})
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
		require.NoError(t, srv.SetQuoteLineOptions(q.ID, optional.ID, invoicingtest.QuoteLineOptions{Optional: true}))
		require.NoError(t, srv.SetQuoteLineOptions(q.ID, editable.ID, invoicingtest.QuoteLineOptions{QuantityEditable: true}))
		require.NoError(t, srv.SendQuote(q.ID))
		chosen := e2eD("3.5")
		res, err := srv.AcceptQuote(q.ID, invoicingtest.AcceptOptions{
			Exclude:    []string{optional.ID},
			Quantities: map[string]decimal.Decimal{editable.ID: chosen},
		})
		require.NoError(t, err)

		accepted, err := c.Quotes.Get(ctx, q.ID)
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
