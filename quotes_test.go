package invoicing_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

const quoteID = "7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d"

func validQuote() *invoicing.QuoteCreateParams {
	return &invoicing.QuoteCreateParams{
		ClientID:  "c0ffee00-1111-4222-8333-444455556666",
		LineItems: []invoicing.LineItemParams{{UnitPrice: dec("100"), AccountID: "4000", TaxCodeID: "ONE"}},
	}
}

func TestQuotesGetDecodes(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "quote.json")))
	q, err := c.Quotes.Get(context.Background(), quoteID)
	require.NoError(t, err)
	assert.Equal(t, "/quotes/"+quoteID, api.last(t).Path)
	assert.Equal(t, "QU-0007", q.QuoteNumber)
	assert.Equal(t, invoicing.QuoteStatusAccepted, q.Status)
	assert.Equal(t, "2026-12-03", q.ValidUntil.String())
	assert.Equal(t, "101", q.Total.String())
	require.Len(t, q.LineItems, 2)
	linked, plain := q.LineItems[0], q.LineItems[1]
	require.NotEmpty(t, linked.ItemID)
	assert.Equal(t, itemID, linked.ItemID)
	assert.Equal(t, "Widget", linked.ItemName)
	assert.Equal(t, "101", linked.Amount.String())
	assert.Equal(t, "1", linked.TaxAmount.String())
	assert.Empty(t, plain.ItemID)
	assert.Empty(t, plain.ItemCode)
	assert.Equal(t, "0.5", plain.Quantity.String())
	require.NotNil(t, q.UpdatedAt)
}

func TestQuotesListQueryAndKey(t *testing.T) {
	c, api := newTestAPI(t, always(200, `{"quotes": [`+fixture(t, "quote.json")+`], "total": 1, "page": 1, "page_size": 10, "has_more": false}`))
	p, err := c.Quotes.ListPage(context.Background(), &invoicing.QuoteListParams{
		ListParams: invoicing.ListParams{PageSize: 10}, Status: invoicing.QuoteStatusAccepted,
		ClientID: "c1", FromDate: invoicing.NewDate(2026, 11, 1),
	})
	require.NoError(t, err)
	assert.Equal(t, "client_id=c1&from_date=2026-11-01&page_size=10&status=accepted", api.last(t).Query)
	require.Len(t, p.Items, 1)
	assert.Equal(t, "QU-0007", p.Items[0].QuoteNumber)
	n := 0
	for q, err := range c.Quotes.List(context.Background(), &invoicing.QuoteListParams{ToDate: invoicing.NewDate(2026, 12, 31)}) {
		require.NoError(t, err)
		assert.Equal(t, "Website rebuild", q.Title)
		n++
	}
	assert.Equal(t, 1, n)
	assert.Equal(t, "page=1&page_size=100&to_date=2026-12-31", api.last(t).Query)
}

func TestQuotesCreateBody(t *testing.T) {
	c, api := newTestAPI(t, always(201, fixture(t, "quote.json")))
	p := validQuote()
	p.Title = "Website rebuild"
	p.IssueDate = invoicing.NewDate(2026, 11, 3)
	p.ValidDays = invoicing.Ptr(30)
	p.Currency = "AUD"
	p.Notes = "private"
	p.DefaultAccountID = "4000"
	p.DefaultTaxCodeID = "GST"
	p.LineItems = append(p.LineItems, invoicing.LineItemParams{ItemID: itemID, Quantity: invoicing.Ptr(dec("2")), UnitPrice: dec("19.999")})
	q, err := c.Quotes.Create(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, "QU-0007", q.QuoteNumber)
	r := api.last(t)
	assert.Equal(t, "POST", r.Method)
	assert.Equal(t, "/quotes", r.Path)
	assert.JSONEq(t, `{"client_id": "c0ffee00-1111-4222-8333-444455556666", "title": "Website rebuild",
		"issue_date": "2026-11-03", "valid_days": 30, "currency": "AUD", "notes": "private",
		"default_account_id": "4000", "default_tax_code_id": "GST",
		"line_items": [
			{"unit_price": 100, "account_id": "4000", "tax_code_id": "ONE"},
			{"item_id": "`+itemID+`", "quantity": 2, "unit_price": 19.999}
		]}`, string(r.Body))
	assert.NotContains(t, string(r.Body), `"id"`, "a line's own id is never sent")

	p = validQuote()
	p.ValidUntil = invoicing.NewDate(2027, 1, 31)
	_, err = c.Quotes.Create(context.Background(), p)
	require.NoError(t, err)
	assert.Contains(t, string(api.last(t).Body), `"valid_until":"2027-01-31"`)
}

func TestQuotesCreateValidation(t *testing.T) {
	c, api := newTestAPI(t, always(201, fixture(t, "quote.json")))
	for field, mutate := range map[string]func(*invoicing.QuoteCreateParams){
		"client_id":                 func(p *invoicing.QuoteCreateParams) { p.ClientID = "" },
		"line_items":                func(p *invoicing.QuoteCreateParams) { p.LineItems = []invoicing.LineItemParams{} },
		"line_items[0].account_id":  func(p *invoicing.QuoteCreateParams) { p.LineItems[0].AccountID = "" },
		"line_items[0].tax_code_id": func(p *invoicing.QuoteCreateParams) { p.LineItems[0].TaxCodeID = "" },
		"valid_days":                func(p *invoicing.QuoteCreateParams) { p.ValidDays = invoicing.Ptr(-5) },
	} {
		p := validQuote()
		mutate(p)
		_, err := c.Quotes.Create(context.Background(), p)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe, field)
		assert.Equal(t, field, pe.Field)
	}
	assert.Empty(t, api.requests())
}

func TestQuotesPDF(t *testing.T) {
	c, api := newTestAPI(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="../../etc/Quote-QU-0007.pdf"`)
		_, _ = io.WriteString(w, "%PDF-1.7\n%%EOF\n")
	})
	f, err := c.Quotes.PDF(context.Background(), quoteID)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "Quote-QU-0007.pdf", f.Filename, "directory parts are stripped")
	assert.Equal(t, int64(len("%PDF-1.7\n%%EOF\n")), f.Size)
	assert.Equal(t, "/quotes/"+quoteID+"/pdf", api.last(t).Path)
}
