package invoicingtest

import (
	"net/http"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

func TestCreateQuote(t *testing.T) {
	srv, _ := newServer(t)
	q := createQuote(t, srv, map[string]any{"notes": "internal"})
	assert.Equal(t, "QU-0001", q["quote_number"])
	assert.Equal(t, "Design work", q["title"], "title defaults to the first line's description")
	assert.Equal(t, SeedClientID, q["client_id"])
	assert.Equal(t, "Acme Pty Ltd", q["client_name"])
	assert.Equal(t, "draft", q["status"])
	assert.Equal(t, "2026-03-10", q["issue_date"])
	assert.Equal(t, "2026-04-09", q["valid_until"], "valid for 30 days by default")
	assert.Equal(t, "AUD", q["currency"])
	assert.Equal(t, "internal", q["notes"])
	assert.Equal(t, num("250.00"), q["subtotal"])
	assert.Equal(t, num("25.00"), q["tax_total"])
	assert.Equal(t, num("275.00"), q["total"])
	assert.Equal(t, "2026-03-10T09:30:00Z", q["created_at"])
	lines := list(t, q, "line_items")
	require.Len(t, lines, 2)
	assert.Equal(t, num("2"), lines[0]["quantity"])
	assert.Equal(t, num("220.00"), lines[0]["amount"])
	assert.Equal(t, num("20.00"), lines[0]["tax_amount"])
	for _, l := range lines {
		assert.NotContains(t, l, "item_id", "item fields only on linked lines")
		assert.NotContains(t, l, "item_code")
		assert.NotContains(t, l, "item_name")
	}

	got := get(t, srv, "/quotes/"+q["id"].(string)).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, q, got, "POST returns the same shape as GET")
}

func TestCreateQuoteTitleAndDates(t *testing.T) {
	srv, _ := newServer(t)
	q := createQuote(t, srv, map[string]any{
		"title": "Website rebuild", "issue_date": "2026-02-01", "valid_days": 14,
	})
	assert.Equal(t, "Website rebuild", q["title"])
	assert.Equal(t, "2026-02-15", q["valid_until"])

	q = createQuote(t, srv, map[string]any{"valid_until": "2026-05-01", "valid_days": 14})
	assert.Equal(t, "2026-05-01", q["valid_until"], "valid_days is ignored when valid_until is set")

	q = createQuote(t, srv, map[string]any{"line_items": []any{map[string]any{"unit_price": 10}}})
	assert.Equal(t, "Quote", q["title"], "no title and no description give Quote")

	post(t, srv, "/quotes", quoteBody(map[string]any{"valid_until": "2026-01-01"})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/quotes", quoteBody(map[string]any{"valid_days": -3})).requireStatus(t, http.StatusUnprocessableEntity)
}

func TestCreateQuoteWithCatalogItem(t *testing.T) {
	srv, _ := newServer(t)
	rc := newReceiver(t)
	srv.AddWebhookEndpoint(rc.URL, webhooks.EventQuoteCreated)
	for _, key := range []string{"item_id", "itemId", "Id"} {
		q := createQuote(t, srv, map[string]any{
			"line_items": []any{map[string]any{key: SeedItemID, "quantity": 3, "unit_price": jsonNumber("150.00")}},
		})
		l := list(t, q, "line_items")[0]
		assert.Equal(t, SeedItemID, l["item_id"], key)
		assert.Equal(t, "CONSULT", l["item_code"])
		assert.Equal(t, "Consulting hour", l["item_name"])
		assert.Equal(t, "One hour of consulting", l["description"])
		assert.Equal(t, num("495.00"), l["amount"])
		assert.NotEqual(t, SeedItemID, l["id"])
		assert.Equal(t, "One hour of consulting", q["title"])
	}
	line := list(t, decodeObject(t, rc.deliveries()[0].body), "line_items")[0]
	assert.Equal(t, "CONSULT", line["item_code"])
	assert.Equal(t, "Consulting hour", line["title"], "the webhook line title is the item name")
	assert.Equal(t, "One hour of consulting", line["description"])

	// A linked item without a code still shows the three item fields.
	it := post(t, srv, "/items", itemBody(map[string]any{"item_code": "", "name": "Codeless"})).requireStatus(t, http.StatusCreated).object(t)
	q := createQuote(t, srv, map[string]any{"line_items": []any{map[string]any{"item_id": it["id"], "unit_price": 1}}})
	l := list(t, q, "line_items")[0]
	assert.Equal(t, it["id"], l["item_id"])
	assert.Contains(t, l, "item_code")
	assert.Equal(t, "", l["item_code"])
	assert.Equal(t, "Codeless", l["item_name"])
	assert.Equal(t, "Codeless", l["description"], "no catalog description: the name is used")
}

func TestCreateQuoteRules(t *testing.T) {
	srv, _ := newServer(t)
	r := post(t, srv, "/quotes", quoteBody(map[string]any{
		"line_items": []any{map[string]any{"id": SeedItemID, "unit_price": 1}},
	})).requireStatus(t, http.StatusUnprocessableEntity)
	assert.Equal(t, "line_items[0]: id must not be sent; use item_id to link a catalog item", r.detail(t))

	r = post(t, srv, "/quotes", quoteBody(map[string]any{"client_id": "nobody"})).requireStatus(t, http.StatusUnprocessableEntity)
	assert.Equal(t, "client_id nobody does not belong to the business", r.detail(t))
	post(t, srv, "/quotes", quoteBody(map[string]any{"default_tax_code_id": ""})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/quotes", quoteBody(map[string]any{"line_items": nil})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/quotes", `{"client_id":`).requireStatus(t, http.StatusBadRequest)
	assert.Equal(t, "Quote not found", get(t, srv, "/quotes/missing").requireStatus(t, http.StatusNotFound).detail(t))
	assert.Equal(t, num("0"), get(t, srv, "/quotes").object(t)["total"])
}

func TestListQuotesFiltersAndPages(t *testing.T) {
	srv, _ := newServer(t)
	a := createQuote(t, srv, map[string]any{"issue_date": "2026-01-05"})
	b := createQuote(t, srv, map[string]any{"issue_date": "2026-02-05", "client_id": SeedOtherClientID})
	c := createQuote(t, srv, map[string]any{"issue_date": "2026-03-05"})
	require.NoError(t, srv.SendQuote(c["id"].(string)))

	ids := func(query string) []any {
		page := get(t, srv, "/quotes?"+query).requireStatus(t, http.StatusOK).object(t)
		var out []any
		for _, q := range list(t, page, "quotes") {
			out = append(out, q["id"])
		}
		return out
	}
	assert.Equal(t, []any{a["id"], b["id"]}, ids("status=draft"))
	assert.Equal(t, []any{c["id"]}, ids("status=sent"))
	assert.Equal(t, []any{b["id"]}, ids("client_id="+SeedOtherClientID))
	assert.Equal(t, []any{b["id"], c["id"]}, ids("from_date=2026-02-01"))
	assert.Equal(t, []any{a["id"]}, ids("to_date=2026-01-31"))
	get(t, srv, "/quotes?status=open").requireStatus(t, http.StatusBadRequest)

	page := get(t, srv, "/quotes?page=2&page_size=2").object(t)
	assert.Equal(t, num("3"), page["total"])
	assert.Equal(t, false, page["has_more"])
	assert.Equal(t, []any{c["id"]}, []any{list(t, page, "quotes")[0]["id"]})
	assert.Equal(t, true, get(t, srv, "/quotes?page_size=2").object(t)["has_more"])
	get(t, srv, "/quotes?page_size=101").requireStatus(t, http.StatusBadRequest)
}

func TestAcceptedQuoteShowsTheAcceptedSelection(t *testing.T) {
	srv, _ := newServer(t)
	q := createQuote(t, srv, nil)
	id := q["id"].(string)
	lines := list(t, q, "line_items")
	design, support := lines[0]["id"].(string), lines[1]["id"].(string)
	require.NoError(t, srv.SetQuoteLineOptions(id, design, QuoteLineOptions{QuantityEditable: true}))
	require.NoError(t, srv.SetQuoteLineOptions(id, support, QuoteLineOptions{Optional: true}))
	require.NoError(t, srv.SendQuote(id))

	// Before acceptance the quote keeps every offered line.
	assert.Equal(t, num("275.00"), get(t, srv, "/quotes/"+id).object(t)["total"])

	res, err := srv.AcceptQuote(id, AcceptOptions{
		Exclude:    []string{support},
		Quantities: map[string]decimal.Decimal{design: dec("3")},
	})
	require.NoError(t, err)

	got := get(t, srv, "/quotes/"+id).object(t)
	assert.Equal(t, "accepted", got["status"])
	accepted := list(t, got, "line_items")
	require.Len(t, accepted, 1, "the excluded optional line is omitted")
	assert.Equal(t, design, accepted[0]["id"])
	assert.Equal(t, num("3"), accepted[0]["quantity"], "the editable quantity uses the accepted value")
	assert.Equal(t, num("330.00"), accepted[0]["amount"])
	assert.Equal(t, num("300.00"), got["subtotal"])
	assert.Equal(t, num("30.00"), got["tax_total"])
	assert.Equal(t, num("330.00"), got["total"])
	assert.NotNil(t, got["updated_at"])

	inv := get(t, srv, "/invoices/"+res.InvoiceID).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, "draft", inv["status"])
	assert.Equal(t, res.InvoiceNumber, inv["invoice_number"])
	assert.Equal(t, num("330.00"), inv["total"])
	assert.Equal(t, SeedClientID, inv["client_id"])

	// Undoing the acceptance returns the quote to sent with every line.
	require.NoError(t, srv.UnacceptQuote(id))
	got = get(t, srv, "/quotes/"+id).object(t)
	assert.Equal(t, "sent", got["status"])
	assert.Len(t, list(t, got, "line_items"), 2)
	assert.Equal(t, num("275.00"), got["total"])
}

func TestAcceptQuoteRefusals(t *testing.T) {
	srv, _ := newServer(t)
	q := createQuote(t, srv, nil)
	id := q["id"].(string)
	line := list(t, q, "line_items")[0]["id"].(string)

	_, err := srv.AcceptQuote(id, AcceptOptions{})
	assert.ErrorIs(t, err, ErrInvalidState, "a recipient needs a share link, which sending creates")
	_, err = srv.AcceptQuote(id, AcceptOptions{ByStaff: true, Exclude: []string{line}})
	assert.ErrorIs(t, err, ErrInvalidState, "only optional lines can be excluded")
	_, err = srv.AcceptQuote(id, AcceptOptions{ByStaff: true, Quantities: map[string]decimal.Decimal{line: dec("2")}})
	assert.ErrorIs(t, err, ErrInvalidState, "only editable quantities can change")
	_, err = srv.AcceptQuote("nope", AcceptOptions{ByStaff: true})
	assert.ErrorIs(t, err, ErrNotFound)
	assert.ErrorIs(t, srv.UnacceptQuote(id), ErrInvalidState)
	assert.ErrorIs(t, srv.ViewQuote(id, nil), ErrInvalidState, "no share link before sending")

	_, err = srv.AcceptQuote(id, AcceptOptions{ByStaff: true})
	require.NoError(t, err)
	_, err = srv.AcceptQuote(id, AcceptOptions{ByStaff: true})
	assert.ErrorIs(t, err, ErrInvalidState, "already accepted")
	assert.ErrorIs(t, srv.SendQuote(id), ErrInvalidState)
	assert.ErrorIs(t, srv.DeclineQuote(id), ErrInvalidState)

	other := createQuote(t, srv, nil)["id"].(string)
	require.NoError(t, srv.DeclineQuote(other))
	assert.Equal(t, "declined", get(t, srv, "/quotes/"+other).object(t)["status"])
	third := createQuote(t, srv, nil)["id"].(string)
	require.NoError(t, srv.ExpireQuote(third))
	assert.Equal(t, num("1"), get(t, srv, "/quotes?status=expired").object(t)["total"])
}
