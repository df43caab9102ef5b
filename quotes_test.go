package invoicing_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
)

func TestQuotesGet(t *testing.T) {
	q, body := getFixture(t, "quote.json", "/quotes/"+idQuote, "", func(c *invoicing.Client) (*invoicing.Quote, error) {
		return c.Quotes.Get(context.Background(), idQuote)
	})
	assert.Equal(t, idQuote, q.ID)
	assert.Equal(t, "QU-0007", q.QuoteNumber)
	assert.Equal(t, "Website rebuild", q.Title)
	assert.Equal(t, "Acme Pty Ltd", q.ClientName)
	assert.Equal(t, invoicing.QuoteStatusAccepted, q.Status)
	assert.Equal(t, invoicing.NewDate(2026, 11, 3), q.IssueDate)
	assert.Equal(t, "2026-12-03", q.ValidUntil.String())
	assert.Equal(t, "100", q.Subtotal.String())
	assert.Equal(t, "1", q.TaxTotal.String())
	assert.Equal(t, "101", q.Total.String())
	assert.Equal(t, "private", q.Notes)
	require.Len(t, q.LineItems, 2)
	linked, plain := q.LineItems[0], q.LineItems[1]
	assert.Equal(t, idItem, linked.ItemID)
	assert.Equal(t, "WIDGET-01", linked.ItemCode)
	assert.Equal(t, "Widget", linked.ItemName)
	assert.Equal(t, "101", linked.Amount.String(), "amount includes tax: 100 at 1%")
	assert.Equal(t, "1", linked.TaxAmount.String())
	assert.Empty(t, plain.ItemID, "an unlinked line has no item")
	assert.Empty(t, plain.ItemCode)
	assert.Empty(t, plain.ItemName)
	assert.Equal(t, "0.5", plain.Quantity.String())
	assert.Equal(t, time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC), q.CreatedAt)
	require.NotNil(t, q.UpdatedAt)
	assert.Equal(t, time.Date(2026, 11, 4, 8, 0, 0, 0, time.UTC), *q.UpdatedAt)
	assert.JSONEq(t, body, string(rawJSON(t, q)), "the unlinked line writes no item members")
}

func TestQuotesListQueryAndKey(t *testing.T) {
	c, api := newMock(t, always(200, `{"quotes": [`+fixture(t, "quote.json")+`], "total": 1, "page": 1, "page_size": 10, "has_more": false}`))
	p, err := c.Quotes.ListPage(context.Background(), &invoicing.QuoteListParams{
		ListParams: invoicing.ListParams{PageSize: 10}, Status: invoicing.QuoteStatusAccepted,
		ClientID: "c1", FromDate: invoicing.NewDate(2026, 11, 1),
	})
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/quotes", "client_id=c1&from_date=2026-11-01&page_size=10&status=accepted")
	require.Len(t, p.Items, 1)
	assert.Equal(t, "QU-0007", p.Items[0].QuoteNumber)
	assert.Equal(t, 1, p.Total)
	got := testkit.Collect(t, c.Quotes.List(context.Background(), &invoicing.QuoteListParams{ToDate: invoicing.NewDate(2026, 12, 31)}))
	require.Len(t, got, 1)
	assert.Equal(t, "Website rebuild", got[0].Title)
	svcAssertGET(t, api.last(t), "/quotes", "page=1&page_size=100&to_date=2026-12-31")
}

func TestQuotesCreateBody(t *testing.T) {
	c, api := newMock(t, always(201, fixture(t, "quote.json")))
	p := svcValidQuote()
	p.Title = "Website rebuild"
	p.IssueDate = invoicing.NewDate(2026, 11, 3)
	p.ValidDays = invoicing.Ptr(30)
	p.Currency = "AUD"
	p.Notes = "private"
	p.DefaultAccountID = "4000"
	p.DefaultTaxCodeID = "GST"
	p.LineItems = append(p.LineItems, invoicing.LineItemParams{ItemID: idItem, Quantity: invoicing.Ptr(svcDec("2")), UnitPrice: svcDec("19.999")})
	q, err := c.Quotes.Create(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, "QU-0007", q.QuoteNumber)
	assert.Equal(t, idQuote, q.ID)
	svcAssertPOST(t, api.last(t), "/quotes", `{"client_id":"c0ffee00-1111-4222-8333-444455556666","title":"Website rebuild",`+
		`"issue_date":"2026-11-03","valid_days":30,"currency":"AUD","notes":"private","default_account_id":"4000","default_tax_code_id":"GST",`+
		`"line_items":[{"unit_price":100,"account_id":"4000","tax_code_id":"ONE"},{"quantity":2,"unit_price":19.999,"item_id":"`+idItem+`"}]}`)
	assert.NotContains(t, string(api.last(t).Body), `"id"`, "a line's own id is never sent")

	p = svcValidQuote()
	p.ValidUntil = invoicing.NewDate(2027, 1, 31)
	p.ValidDays = invoicing.Ptr(0)
	_, err = c.Quotes.Create(context.Background(), p)
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/quotes", `{"client_id":"c0ffee00-1111-4222-8333-444455556666","valid_until":"2027-01-31","valid_days":0,`+
		`"line_items":[{"unit_price":100,"account_id":"4000","tax_code_id":"ONE"}]}`)
}

func TestQuotesCreateValidatedBeforeSending(t *testing.T) {
	c, api := newMock(t, always(201, fixture(t, "quote.json")))
	for field, mutate := range map[string]func(*invoicing.QuoteCreateParams){
		"client_id":                 func(p *invoicing.QuoteCreateParams) { p.ClientID = "" },
		"line_items":                func(p *invoicing.QuoteCreateParams) { p.LineItems = []invoicing.LineItemParams{} },
		"line_items[0].account_id":  func(p *invoicing.QuoteCreateParams) { p.LineItems[0].AccountID = "" },
		"line_items[0].tax_code_id": func(p *invoicing.QuoteCreateParams) { p.LineItems[0].TaxCodeID = "" },
		"line_items[0].item_id":     func(p *invoicing.QuoteCreateParams) { p.LineItems[0].ItemID = "../items" },
		"valid_days":                func(p *invoicing.QuoteCreateParams) { p.ValidDays = invoicing.Ptr(-5) },
		"title":                     func(p *invoicing.QuoteCreateParams) { p.Title = "T"; p.Extra = map[string]any{"title": "U"} },
	} {
		p := svcValidQuote()
		mutate(p)
		q, err := c.Quotes.Create(context.Background(), p)
		assert.Nil(t, q)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe, field)
		assert.Equal(t, field, pe.Field)
	}
	_, err := c.Quotes.Create(context.Background(), nil)
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
	assert.Empty(t, api.requests())

	// A default on the request covers lines without their own.
	p := svcValidQuote()
	p.LineItems[0].AccountID, p.LineItems[0].TaxCodeID = "", ""
	p.DefaultAccountID, p.DefaultTaxCodeID = "4000", "GST"
	_, err = c.Quotes.Create(context.Background(), p)
	assert.NoError(t, err)
}

// A quote create is never repeated after a 5xx or a network error.
func TestQuotesCreateNotRepeated(t *testing.T) {
	c, api := newMock(t, always(500, `{"detail": "boom"}`))
	_, err := c.Quotes.Create(context.Background(), svcValidQuote())
	assert.ErrorIs(t, err, invoicing.ErrServer)
	assert.Len(t, api.requests(), 1)
}

func TestQuotesPDF(t *testing.T) {
	c, api := newMock(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="../../etc/Quote-QU-0007.pdf"`)
		w.Header().Set("Content-Length", "15")
		_, _ = io.WriteString(w, "%PDF-1.7\n%%EOF\n")
	})
	f, err := c.Quotes.PDF(context.Background(), idQuote)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "Quote-QU-0007.pdf", f.Filename, "directory parts are stripped")
	assert.Equal(t, int64(len("%PDF-1.7\n%%EOF\n")), f.Size)
	assert.Equal(t, "/quotes/"+idQuote+"/pdf", api.last(t).Path)

	c, _ = newMock(t, always(200, "<html>login</html>", "Content-Type", "text/html"))
	_, err = c.Quotes.PDF(context.Background(), idQuote)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unexpected content type "text/html"`)
}
