package invoicing_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

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
	assert.Equal(t, q1, got)
	_, err = c.Quotes.Get(ctx, uuid.NewString())
	assert.ErrorIs(t, err, invoicing.ErrNotFound)

	qids := func(qs []*invoicing.Quote) []string {
		var out []string
		for _, q := range qs {
			out = append(out, q.ID)
		}
		return out
	}
	assert.Equal(t, []string{q1.ID, q2.ID, q3.ID, q4.ID}, qids(e2eAll(t, c.Quotes.List(ctx, nil))))
	assert.Equal(t, []string{q4.ID}, qids(e2eAll(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{ClientID: invoicingtest.SeedOtherClientID}))))
	feb := invoicing.NewDate(2026, time.February, 1)
	assert.Equal(t, []string{q2.ID}, qids(e2eAll(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{FromDate: feb, ToDate: feb}))))
	assert.Empty(t, e2eAll(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{Status: invoicing.QuoteStatusAccepted})))
	page, err := c.Quotes.ListPage(ctx, &invoicing.QuoteListParams{ListParams: invoicing.ListParams{PageSize: 3}})
	require.NoError(t, err)
	assert.Equal(t, 4, page.Total, "total counts all matching quotes")
	assert.True(t, page.HasMore)
	assert.Equal(t, []string{q1.ID, q2.ID, q3.ID}, qids(e2ePtrs(page.Items)))

	t.Run("accepted quote becomes an invoice", func(t *testing.T) {
		res, err := srv.AcceptQuote(q1.ID, invoicingtest.AcceptOptions{ByStaff: true})
		require.NoError(t, err)
		require.NotEmpty(t, res.InvoiceID)

		accepted, err := c.Quotes.Get(ctx, q1.ID)
		require.NoError(t, err)
		assert.Equal(t, invoicing.QuoteStatusAccepted, accepted.Status)
		e2eDecEqual(t, q1.Total, accepted.Total, "nothing optional: the accepted totals are the offered ones")
		assert.Equal(t, []string{q1.ID}, qids(e2eAll(t, c.Quotes.List(ctx, &invoicing.QuoteListParams{Status: invoicing.QuoteStatusAccepted}))))

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
