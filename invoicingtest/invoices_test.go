package invoicingtest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

func TestCreateInvoiceDefaultsAndTotals(t *testing.T) {
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, nil)

	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, inv["id"])
	assert.Equal(t, "INV-0001", inv["invoice_number"])
	assert.Equal(t, SeedClientID, inv["client_id"])
	assert.Equal(t, "Acme Pty Ltd", inv["client_name"])
	assert.Equal(t, "draft", inv["status"])
	assert.Equal(t, "AUD", inv["currency"])
	assert.Equal(t, "2026-03-10", inv["issue_date"], "issue_date defaults to today on the server's clock")
	assert.Equal(t, "2026-04-09", inv["due_date"], "due_date defaults to 30 days after issue")
	assert.Equal(t, "2026-03-10T09:30:00Z", inv["created_at"])
	assert.Nil(t, inv["updated_at"])
	assert.Contains(t, inv, "updated_at", "updated_at is present as null")

	// A line of 100 with a 1% tax code has amount 101 and tax_amount 1;
	// decimals are JSON numbers.
	assert.Equal(t, num("100.00"), inv["subtotal"])
	assert.Equal(t, num("1.00"), inv["tax_total"])
	assert.Equal(t, num("101.00"), inv["total"])
	assert.Equal(t, num("0.00"), inv["amount_paid"])
	assert.Equal(t, num("101.00"), inv["amount_due"])
	lines := list(t, inv, "line_items")
	require.Len(t, lines, 1)
	l := lines[0]
	assert.NotEmpty(t, l["id"])
	assert.Equal(t, "Widget", l["description"])
	assert.Equal(t, num("1"), l["quantity"], "quantity defaults to 1")
	assert.Equal(t, num("100.00"), l["unit_price"])
	assert.Equal(t, num("101.00"), l["amount"])
	assert.Equal(t, num("1.00"), l["tax_amount"])
	assert.Equal(t, SeedRevenueAccountID, l["account_id"])
	assert.Equal(t, SeedOnePercentTaxCodeID, l["tax_code_id"])

	got := get(t, srv, "/invoices/"+inv["id"].(string)).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, inv, got)
}

func TestCreateInvoiceRoundsTaxPerLineToCents(t *testing.T) {
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, map[string]any{
		"default_tax_code_id": SeedGSTTaxCodeID,
		"line_items": []any{
			// 2.5 x 10.10 = 25.25; 10% = 2.525, rounded half away from zero to 2.53.
			map[string]any{"quantity": jsonNumber("2.5"), "unit_price": jsonNumber("10.10")},
			// 3 x 0.15 = 0.45; 10% = 0.045 -> 0.05.
			map[string]any{"quantity": jsonNumber("3"), "unit_price": jsonNumber("0.15")},
		},
	})
	lines := list(t, inv, "line_items")
	assert.Equal(t, num("2.5"), lines[0]["quantity"])
	assert.Equal(t, num("10.10"), lines[0]["unit_price"])
	assert.Equal(t, num("2.53"), lines[0]["tax_amount"])
	assert.Equal(t, num("27.78"), lines[0]["amount"])
	assert.Equal(t, num("0.05"), lines[1]["tax_amount"])
	assert.Equal(t, num("0.50"), lines[1]["amount"])
	assert.Equal(t, num("25.70"), inv["subtotal"])
	assert.Equal(t, num("2.58"), inv["tax_total"])
	assert.Equal(t, num("28.28"), inv["total"])
}

func TestCreateInvoiceZeroQuantityLineBillsNothing(t *testing.T) {
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, map[string]any{
		"default_tax_code_id": SeedGSTTaxCodeID,
		"line_items": []any{
			map[string]any{"description": "Billed", "quantity": 1, "unit_price": 100},
			map[string]any{"description": "Not billed", "quantity": 0, "unit_price": 100},
		},
	})
	assert.Equal(t, num("100.00"), inv["subtotal"])
	assert.Equal(t, num("10.00"), inv["tax_total"])
	assert.Equal(t, num("110.00"), inv["total"])
	zero := list(t, inv, "line_items")[1]
	assert.Equal(t, num("0"), zero["quantity"])
	assert.Equal(t, num("100.00"), zero["unit_price"])
	assert.Equal(t, num("0.00"), zero["tax_amount"])
	assert.Equal(t, num("0.00"), zero["amount"])
}

func TestCreateInvoiceKeepsUnitPricePrecision(t *testing.T) {
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, map[string]any{
		"line_items": []any{map[string]any{"quantity": jsonNumber("4"), "unit_price": jsonNumber("0.125")}},
	})
	l := list(t, inv, "line_items")[0]
	assert.Equal(t, num("0.125"), l["unit_price"])
	assert.Equal(t, num("0.51"), l["amount"], "net 0.50 + tax 0.005 rounded to 0.01")
}

func TestCreateInvoiceDates(t *testing.T) {
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, map[string]any{"issue_date": "2026-01-31", "payment_terms_days": 14})
	assert.Equal(t, "2026-01-31", inv["issue_date"])
	assert.Equal(t, "2026-02-14", inv["due_date"])

	inv = createInvoice(t, srv, map[string]any{"issue_date": "2026-01-31", "due_date": "2026-03-01", "payment_terms_days": 14})
	assert.Equal(t, "2026-03-01", inv["due_date"], "due_date wins over payment_terms_days")

	r := post(t, srv, "/invoices", invoiceBody(map[string]any{"issue_date": "31/01/2026"})).requireStatus(t, http.StatusUnprocessableEntity)
	assert.Contains(t, r.detail(t), "issue_date")
	r = post(t, srv, "/invoices", invoiceBody(map[string]any{"issue_date": "2026-02-01", "due_date": "2026-01-01"})).requireStatus(t, http.StatusUnprocessableEntity)
	assert.Contains(t, r.detail(t), "due_date")
	post(t, srv, "/invoices", invoiceBody(map[string]any{"payment_terms_days": -1})).requireStatus(t, http.StatusUnprocessableEntity)
}

func TestCreateInvoiceStatusAndCurrency(t *testing.T) {
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "currency": "NZD", "notes": "Thanks"})
	assert.Equal(t, "awaiting_payment", inv["status"])
	assert.Equal(t, "NZD", inv["currency"])
	assert.Equal(t, "Thanks", inv["notes"])

	r := post(t, srv, "/invoices", invoiceBody(map[string]any{"status": "paid"})).requireStatus(t, http.StatusUnprocessableEntity)
	assert.Equal(t, "status must be one of: draft, awaiting_payment", r.detail(t))
	post(t, srv, "/invoices", invoiceBody(map[string]any{"currency": "dollars"})).requireStatus(t, http.StatusUnprocessableEntity)
}

func TestInvoiceReferenceIsIdempotent(t *testing.T) {
	srv, _ := newServer(t)
	rc := newReceiver(t)
	srv.AddWebhookEndpoint(rc.URL, webhooks.EventInvoiceCreated)

	first := post(t, srv, "/invoices", invoiceBody(map[string]any{"reference": "IMPORT-42"})).requireStatus(t, http.StatusCreated).object(t)
	// A retried import with the same reference (even a different body) gets
	// the existing invoice with 200 and creates nothing.
	second := post(t, srv, "/invoices", invoiceBody(map[string]any{
		"reference":  "IMPORT-42",
		"line_items": []any{map[string]any{"unit_price": jsonNumber("999")}},
	})).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, first, second)

	all := get(t, srv, "/invoices").object(t)
	assert.Equal(t, num("1"), all["total"])
	assert.Len(t, rc.only(webhooks.EventInvoiceCreated), 1, "no invoice.created for the idempotent repeat")

	other := post(t, srv, "/invoices", invoiceBody(map[string]any{"reference": "IMPORT-43"})).requireStatus(t, http.StatusCreated).object(t)
	assert.NotEqual(t, first["id"], other["id"])
}

func TestConcurrentImportsWithOneReferenceCreateOneInvoice(t *testing.T) {
	srv, clock := newServer(t)
	rc := newReceiver(t, 500, 500, 500)
	srv.AddWebhookEndpoint(rc.URL)

	const n = 20
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			statuses <- post(t, srv, "/invoices", invoiceBody(map[string]any{"reference": "BATCH-1"})).status
		})
		wg.Go(func() { get(t, srv, "/invoices") })
	}
	wg.Go(func() { clock.Advance(10 * time.Minute) })
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	assert.Equal(t, map[int]int{http.StatusCreated: 1, http.StatusOK: n - 1}, count)
	assert.Equal(t, num("1"), get(t, srv, "/invoices").object(t)["total"])
	assert.Len(t, srv.Events(), 1)
}

func TestInvoiceNumberConflict(t *testing.T) {
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, map[string]any{"invoice_number": "INV-0002"})
	assert.Equal(t, "INV-0002", inv["invoice_number"])

	r := post(t, srv, "/invoices", invoiceBody(map[string]any{"invoice_number": "INV-0002"})).requireStatus(t, http.StatusConflict)
	assert.NotEmpty(t, r.detail(t))

	// Generated numbers skip the one the caller took.
	assert.Equal(t, "INV-0001", createInvoice(t, srv, nil)["invoice_number"])
	assert.Equal(t, "INV-0003", createInvoice(t, srv, nil)["invoice_number"])
	assert.Equal(t, num("3"), get(t, srv, "/invoices").object(t)["total"])
}

func TestCreateInvoiceValidation(t *testing.T) {
	srv, _ := newServer(t)
	cases := []struct {
		name   string
		body   map[string]any
		detail string
	}{
		{"missing client", invoiceBody(map[string]any{"client_id": ""}), "client_id is required"},
		{"foreign client", invoiceBody(map[string]any{"client_id": "00000000-0000-4000-8000-000000000000"}),
			"client_id 00000000-0000-4000-8000-000000000000 does not belong to the business"},
		{"supplier is not a client", invoiceBody(map[string]any{"client_id": SeedSupplierID}), "does not belong to the business"},
		{"no lines", invoiceBody(map[string]any{"line_items": []any{}}), "line_items must contain at least one line"},
		{"lines omitted", map[string]any{"client_id": SeedClientID}, "line_items must contain at least one line"},
		{"no unit price", invoiceBody(map[string]any{"line_items": []any{map[string]any{"description": "x"}}}),
			"line_items[0]: unit_price is required"},
		{"negative quantity", invoiceBody(map[string]any{"line_items": []any{map[string]any{"quantity": -1, "unit_price": 1}}}),
			"line_items[0]: quantity must not be negative"},
		{"no account anywhere", invoiceBody(map[string]any{"default_account_id": ""}),
			"line_items[0]: account_id is required: set it on the line or as default_account_id"},
		{"no tax code anywhere", invoiceBody(map[string]any{"default_tax_code_id": ""}),
			"line_items[0]: tax_code_id is required: set it on the line or as default_tax_code_id"},
		{"unknown account", invoiceBody(map[string]any{"default_account_id": "nope"}), "account_id nope does not match"},
		{"unknown tax code", invoiceBody(map[string]any{"line_items": []any{map[string]any{"unit_price": 1, "tax_code_id": "nope"}}}),
			"tax_code_id nope does not match"},
		{"unknown item", invoiceBody(map[string]any{"line_items": []any{map[string]any{"unit_price": 1, "item_id": "nope"}}}),
			"line_items[0]: item_id nope does not match a catalog item of the business"},
		{"absurd number", invoiceBody(map[string]any{"line_items": []any{map[string]any{"unit_price": jsonNumber("1e400")}}}),
			"unit_price must be less than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, srv, "/invoices", c.body).requireStatus(t, http.StatusUnprocessableEntity)
			assert.Contains(t, r.detail(t), c.detail)
		})
	}
	assert.Equal(t, num("0"), get(t, srv, "/invoices").object(t)["total"], "no invalid request stored anything")
}

func TestCreateInvoiceLineValuesOverrideDefaults(t *testing.T) {
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, map[string]any{
		"default_account_id": "", "default_tax_code_id": SeedGSTTaxCodeID,
		"line_items": []any{
			map[string]any{"unit_price": 100, "account_id": SeedOtherRevenueAccountID, "tax_code_id": SeedGSTFreeTaxCodeID},
			map[string]any{"unit_price": 100, "account_id": SeedRevenueAccountID},
		},
	})
	lines := list(t, inv, "line_items")
	assert.Equal(t, SeedOtherRevenueAccountID, lines[0]["account_id"])
	assert.Equal(t, SeedGSTFreeTaxCodeID, lines[0]["tax_code_id"])
	assert.Equal(t, num("0.00"), lines[0]["tax_amount"])
	assert.Equal(t, SeedGSTTaxCodeID, lines[1]["tax_code_id"])
	assert.Equal(t, num("10.00"), lines[1]["tax_amount"])
}

func TestCreateInvoiceLinksCatalogItemsThroughEveryAlias(t *testing.T) {
	srv, _ := newServer(t)
	for _, key := range []string{"item_id", "itemId", "Id"} {
		t.Run(key, func(t *testing.T) {
			inv := createInvoice(t, srv, map[string]any{
				"line_items": []any{map[string]any{key: SeedItemID, "unit_price": 150}},
			})
			l := list(t, inv, "line_items")[0]
			assert.Equal(t, "One hour of consulting", l["description"], "description comes from the catalog when omitted")
			assert.NotEqual(t, SeedItemID, l["id"], "the line has its own id")
		})
	}
	inv := createInvoice(t, srv, map[string]any{
		"line_items": []any{map[string]any{"item_id": SeedItemID, "unit_price": 150, "description": "Custom text"}},
	})
	assert.Equal(t, "Custom text", list(t, inv, "line_items")[0]["description"])
}

func TestCreateInvoiceMalformedBodyIs400(t *testing.T) {
	srv, _ := newServer(t)
	for name, body := range map[string]string{
		"not json":            `{"client_id": `,
		"empty":               ``,
		"array":               `[]`,
		"trailing data":       `{} {}`,
		"string quantity":     `{"client_id":"` + SeedClientID + `","line_items":[{"unit_price":1,"quantity":"2"}]}`,
		"string unit price":   `{"client_id":"` + SeedClientID + `","line_items":[{"unit_price":"1"}]}`,
		"line not an object":  `{"client_id":"` + SeedClientID + `","line_items":[1]}`,
		"wrong type for days": `{"client_id":"` + SeedClientID + `","payment_terms_days":"14"}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := call(t, srv, http.MethodPost, "/invoices", srv.FullKey, body).requireStatus(t, http.StatusBadRequest)
			assert.Contains(t, r.detail(t), "Malformed JSON body")
		})
	}
}

// TestCreateInvoiceBodyJSONRules pins how a request body is read (see
// decodeBody): names match exactly, the last of a repeated name wins,
// invalid UTF-8 becomes U+FFFD, and a line must be an object.
func TestCreateInvoiceBodyJSONRules(t *testing.T) {
	srv, _ := newServer(t)
	create := func(body string) response {
		return call(t, srv, http.MethodPost, "/invoices", srv.FullKey, body)
	}
	defaults := `"default_account_id":"` + SeedRevenueAccountID + `","default_tax_code_id":"` + SeedGSTTaxCodeID + `"`
	r := create(`{"CLIENT_ID":"` + SeedClientID + `",` + defaults + `,"line_items":[{"unit_price":1}]}`)
	r.requireStatus(t, http.StatusUnprocessableEntity)
	assert.Equal(t, "client_id is required", r.detail(t), "CLIENT_ID is not client_id")

	r = create(`{"client_id":"` + SeedClientID + `",` + defaults + `,"notes":"first","notes":"second","line_items":[{"unit_price":1,"unit_price":2}]}`)
	inv := r.requireStatus(t, http.StatusCreated).object(t)
	assert.Equal(t, "second", inv["notes"])
	assert.Equal(t, num("2.00"), list(t, inv, "line_items")[0]["unit_price"])

	r = create(`{"client_id":"` + SeedClientID + `",` + defaults + `,"notes":"a` + "\xff" + `b","line_items":[{"unit_price":1}]}`)
	assert.Equal(t, "a\ufffdb", r.requireStatus(t, http.StatusCreated).object(t)["notes"])

	r = create(`{"client_id":"` + SeedClientID + `",` + defaults + `,"line_items":[{"unit_price":1},null]}`)
	assert.Equal(t, "Malformed JSON body: line_items[1] must be an object", r.requireStatus(t, http.StatusBadRequest).detail(t))
	r = create(`{"client_id":"` + SeedClientID + `",` + defaults + `,"line_items":[{"unit_price":1,"quantity":"2"}]}`)
	assert.Equal(t, "Malformed JSON body: line_items[0].quantity: decimal fields must be JSON numbers", r.requireStatus(t, http.StatusBadRequest).detail(t))
	r = create(`{"client_id":"` + SeedClientID + `",` + defaults + `,"payment_terms_days":"14","line_items":[{"unit_price":1}]}`)
	assert.Equal(t, "Malformed JSON body: field payment_terms_days has the wrong type", r.requireStatus(t, http.StatusBadRequest).detail(t))
	r = create(`{"client_id":"` + SeedClientID + `"} x`)
	assert.Equal(t, "Malformed JSON body: unexpected data after the JSON object", r.requireStatus(t, http.StatusBadRequest).detail(t))
}

func TestGetInvoiceNotFound(t *testing.T) {
	srv, _ := newServer(t)
	for _, id := range []string{"3f1c5b2e-0000-4000-8000-000000000000", "not-a-uuid", SeedClientID} {
		r := get(t, srv, "/invoices/"+id).requireStatus(t, http.StatusNotFound)
		assert.Equal(t, "Invoice not found", r.detail(t))
		get(t, srv, "/invoices/"+id+"/pdf").requireStatus(t, http.StatusNotFound)
	}
}

func TestListInvoicesPagination(t *testing.T) {
	srv, _ := newServer(t)
	var ids []string
	for range 5 {
		ids = append(ids, createInvoice(t, srv, nil)["id"].(string))
	}

	page := get(t, srv, "/invoices").requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, num("1"), page["page"])
	assert.Equal(t, num("50"), page["page_size"])
	assert.Equal(t, num("5"), page["total"])
	assert.Equal(t, false, page["has_more"])
	assert.Len(t, list(t, page, "invoices"), 5)

	var seen []string
	for p, want := range []struct {
		n       int
		hasMore bool
	}{{2, true}, {2, true}, {1, false}} {
		page := get(t, srv, fmt.Sprintf("/invoices?page=%d&page_size=2", p+1)).requireStatus(t, http.StatusOK).object(t)
		invs := list(t, page, "invoices")
		assert.Len(t, invs, want.n)
		assert.Equal(t, want.hasMore, page["has_more"])
		assert.Equal(t, num("5"), page["total"])
		assert.Equal(t, num("2"), page["page_size"])
		for _, inv := range invs {
			seen = append(seen, inv["id"].(string))
		}
	}
	assert.Equal(t, ids, seen, "pages cover every invoice once, in creation order")

	beyond := get(t, srv, "/invoices?page=4&page_size=2").requireStatus(t, http.StatusOK).object(t)
	assert.Empty(t, list(t, beyond, "invoices"))
	assert.Equal(t, false, beyond["has_more"])
	assert.Equal(t, num("5"), beyond["total"])
	far := get(t, srv, "/invoices?page=922337203685477581&page_size=100").requireStatus(t, http.StatusOK).object(t)
	assert.Empty(t, list(t, far, "invoices"), "(page-1) x page_size overflowing an int is still a page past the end")
	assert.Equal(t, false, far["has_more"])

	get(t, srv, "/invoices?page_size=100").requireStatus(t, http.StatusOK)
	for _, q := range []string{"page_size=101", "page_size=0", "page_size=x", "page=0", "page=-1", "page=two"} {
		r := get(t, srv, "/invoices?"+q).requireStatus(t, http.StatusBadRequest)
		assert.NotEmpty(t, r.detail(t))
	}
}

func TestListInvoicesFilters(t *testing.T) {
	srv, _ := newServer(t)
	a := createInvoice(t, srv, map[string]any{"issue_date": "2026-01-10"})
	b := createInvoice(t, srv, map[string]any{"issue_date": "2026-02-10", "status": "awaiting_payment"})
	c := createInvoice(t, srv, map[string]any{"issue_date": "2026-03-10", "client_id": SeedOtherClientID})

	ids := func(query string) []any {
		page := get(t, srv, "/invoices?"+query).requireStatus(t, http.StatusOK).object(t)
		var out []any
		for _, inv := range list(t, page, "invoices") {
			out = append(out, inv["id"])
		}
		assert.Equal(t, num(fmt.Sprint(len(out))), page["total"], "total counts the matching invoices")
		return out
	}
	assert.Equal(t, []any{a["id"], c["id"]}, ids("status=draft"))
	assert.Equal(t, []any{b["id"]}, ids("status=awaiting_payment"))
	assert.Nil(t, ids("status=paid"))
	assert.Equal(t, []any{c["id"]}, ids("client_id="+SeedOtherClientID))
	assert.Equal(t, []any{b["id"], c["id"]}, ids("from_date=2026-02-10"))
	assert.Equal(t, []any{a["id"], b["id"]}, ids("to_date=2026-02-10"))
	assert.Equal(t, []any{b["id"]}, ids("from_date=2026-02-01&to_date=2026-02-28"))
	assert.Equal(t, []any{a["id"]}, ids("status=draft&client_id="+SeedClientID))

	get(t, srv, "/invoices?status=unpaid").requireStatus(t, http.StatusBadRequest)
	get(t, srv, "/invoices?from_date=10-02-2026").requireStatus(t, http.StatusBadRequest)
	get(t, srv, "/invoices?from_date=2026-03-01&to_date=2026-02-01").requireStatus(t, http.StatusBadRequest)
}

// statusOf returns the invoice's status as GET /invoices/{id} shows it.
func statusOf(t *testing.T, srv *Server, id string) string {
	t.Helper()
	return get(t, srv, "/invoices/"+id).requireStatus(t, http.StatusOK).object(t)["status"].(string)
}

// listedIDs returns the ids GET /invoices lists for the query.
func listedIDs(t *testing.T, srv *Server, query string) []string {
	t.Helper()
	var ids []string
	for _, inv := range list(t, get(t, srv, "/invoices"+query).requireStatus(t, http.StatusOK).object(t), "invoices") {
		ids = append(ids, inv["id"].(string))
	}
	return ids
}

// The clock is 2026-03-10 09:30 UTC (testStart).
func TestAnInvoiceBecomesOverdueWhenItsDueDatePassesOnTheClock(t *testing.T) {
	srv, clock := newServer(t)
	inv := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "due_date": "2026-03-12"})
	id := inv["id"].(string)
	events := len(srv.Events())

	assert.Equal(t, "awaiting_payment", statusOf(t, srv, id))
	assert.Empty(t, listedIDs(t, srv, "?status=overdue"))

	clock.Advance(2*24*time.Hour + 14*time.Hour) // 2026-03-12 23:30: the due date is today
	assert.Equal(t, "awaiting_payment", statusOf(t, srv, id), "due today is not overdue yet")

	clock.Advance(time.Hour) // 2026-03-13 00:30 UTC
	got := get(t, srv, "/invoices/"+id).object(t)
	assert.Equal(t, "overdue", got["status"])
	assert.Nil(t, got["updated_at"], "becoming overdue is not an update")
	assert.Equal(t, []string{id}, listedIDs(t, srv, "?status=overdue"))
	assert.Empty(t, listedIDs(t, srv, "?status=awaiting_payment"))
	assert.Equal(t, "overdue", list(t, get(t, srv, "/invoices").object(t), "invoices")[0]["status"])
	assert.Contains(t, string(get(t, srv, "/invoices/"+id+"/pdf").body), "Status: overdue")
	assert.Len(t, srv.Events(), events, "no event: the service documents none for becoming overdue")
}

// The first hour's scenario: an invoice created past due is listed as
// overdue at once, through the SDK.
func TestAPastDueInvoiceIsListedAsOverdue(t *testing.T) {
	srv, _ := newServer(t)
	c := srv.Client()
	res, err := c.Invoices.Create(t.Context(), &invoicing.InvoiceCreateParams{
		ClientID: SeedClientID, DefaultAccountID: SeedRevenueAccountID, DefaultTaxCodeID: SeedGSTTaxCodeID,
		Status:    invoicing.InvoiceStatusAwaitingPayment,
		IssueDate: invoicing.NewDate(2026, time.January, 5), DueDate: invoicing.NewDate(2026, time.February, 4),
		LineItems: []invoicing.LineItemParams{{Description: "Audit", UnitPrice: dec("500")}},
	})
	require.NoError(t, err)
	assert.Equal(t, invoicing.InvoiceStatusOverdue, res.Status, "the create response shows it too")

	overdue, err := invoicing.Collect(c.Invoices.List(t.Context(), &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusOverdue}), 10)
	require.NoError(t, err)
	require.Len(t, overdue, 1)
	assert.Equal(t, res.ID, overdue[0].ID)
	created := decodeObject(t, srv.Events()[0].Body)
	assert.Equal(t, "overdue", created["status"], "invoice.created carries the status the invoice shows")
}

func TestOnlyAnInvoiceAwaitingPaymentWithABalanceBecomesOverdue(t *testing.T) {
	srv, clock := newServer(t)
	past := map[string]any{"issue_date": "2026-01-05", "due_date": "2026-02-04"}
	draft := createInvoice(t, srv, past)["id"].(string)
	voided := createInvoice(t, srv, past)["id"].(string)
	require.NoError(t, srv.UpdateInvoice(voided, InvoiceUpdate{Status: invoicing.InvoiceStatusVoided}))
	zero := createInvoice(t, srv, map[string]any{
		"issue_date": "2026-01-05", "due_date": "2026-02-04", "status": "awaiting_payment",
		"line_items": []any{map[string]any{"description": "Free", "quantity": num("0"), "unit_price": num("100")}},
	})["id"].(string)
	clock.Advance(365 * 24 * time.Hour)
	assert.Equal(t, "draft", statusOf(t, srv, draft), "a draft was never sent")
	assert.Equal(t, "voided", statusOf(t, srv, voided))
	assert.Equal(t, "awaiting_payment", statusOf(t, srv, zero), "nothing is due")

	require.NoError(t, srv.SendInvoice(draft))
	assert.Equal(t, "overdue", statusOf(t, srv, draft), "sent after its due date")
}

func TestPaymentsOnAnOverdueInvoice(t *testing.T) {
	srv, clock := newServer(t)
	id := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "due_date": "2026-03-12"})["id"].(string) // total 101.00
	clock.Advance(7 * 24 * time.Hour)
	require.Equal(t, "overdue", statusOf(t, srv, id))

	_, err := srv.RecordPayment(id, Payment{Amount: dec("40.00")})
	require.NoError(t, err)
	assert.Equal(t, "overdue", statusOf(t, srv, id), "a partial payment leaves it overdue")

	_, err = srv.RecordPayment(id, Payment{Amount: dec("61.00")})
	require.NoError(t, err)
	got := get(t, srv, "/invoices/"+id).object(t)
	assert.Equal(t, "paid", got["status"], "paying the balance makes it paid")
	assert.Equal(t, num("0.00"), got["amount_due"])
	events := srv.Events()
	assert.Equal(t, webhooks.EventInvoicePaid, events[len(events)-1].Name)
}

func TestUpdateInvoiceAndOverdue(t *testing.T) {
	srv, clock := newServer(t)
	id := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "due_date": "2026-03-12"})["id"].(string)
	clock.Advance(7 * 24 * time.Hour) // 2026-03-17

	require.NoError(t, srv.UpdateInvoice(id, InvoiceUpdate{Status: invoicing.InvoiceStatusAwaitingPayment}))
	assert.Equal(t, "overdue", statusOf(t, srv, id), "still past due with a balance")
	events := srv.Events()
	updated := decodeObject(t, events[len(events)-1].Body)
	assert.Equal(t, "overdue", updated["status"], "invoice.updated carries the status the invoice shows")

	require.NoError(t, srv.UpdateInvoice(id, InvoiceUpdate{DueDate: time.Date(2026, time.April, 1, 0, 0, 0, 0, time.UTC)}))
	assert.Equal(t, "awaiting_payment", statusOf(t, srv, id), "a later due date: no longer overdue")

	require.NoError(t, srv.UpdateInvoice(id, InvoiceUpdate{Status: invoicing.InvoiceStatusOverdue}))
	assert.Equal(t, "overdue", statusOf(t, srv, id), "staff may mark it overdue before its due date")
	require.NoError(t, srv.UpdateInvoice(id, InvoiceUpdate{Status: invoicing.InvoiceStatusAwaitingPayment}))
	assert.Equal(t, "awaiting_payment", statusOf(t, srv, id), "and take it back")
}

// SaveState records the status the invoice was given; whether it is overdue
// is worked out again from the clock of the server that loads it.
func TestOverdueAfterLoadStateFollowsTheLoadingServersClock(t *testing.T) {
	srv, clock := newServer(t)
	id := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "due_date": "2026-03-12"})["id"].(string)
	clock.Advance(7 * 24 * time.Hour)
	require.Equal(t, "overdue", statusOf(t, srv, id))
	saved := saveState(t, srv)
	assert.True(t, bytes.Contains(saved, []byte(`"status": "awaiting_payment"`)), "saved as awaiting_payment")
	assert.False(t, bytes.Contains(saved, []byte(`"overdue"`)), "not as overdue")

	earlier, _ := newServer(t) // the clock of testStart, before the due date
	require.NoError(t, earlier.LoadState(bytes.NewReader(saved)))
	assert.Equal(t, "awaiting_payment", statusOf(t, earlier, id))

	later := NewTestServer(t, WithClock(NewFakeClock(testStart.AddDate(0, 1, 0))))
	require.NoError(t, later.LoadState(bytes.NewReader(saved)))
	assert.Equal(t, "overdue", statusOf(t, later, id))
}

// BenchmarkListInvoicesPage serves pages of 100 of 2,000 invoices to
// parallel callers straight through the handler (no network, no latency):
// the cost of a page, and how far concurrent list requests wait for each
// other on the server's mutex.
func BenchmarkListInvoicesPage(b *testing.B) {
	serveDirect := newDirectServer(b)
	body, err := json.Marshal(invoiceBody(nil))
	if err != nil {
		b.Fatal(err)
	}
	serve := func(method, target string, body []byte) int {
		return serveDirect(httptest.NewRequest(method, BasePath+target, bytes.NewReader(body))).Code
	}
	for range 2000 {
		if code := serve(http.MethodPost, "/invoices", body); code != http.StatusCreated {
			b.Fatalf("creating an invoice: status %d", code)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		page := 0
		for pb.Next() {
			page = page%20 + 1
			if code := serve(http.MethodGet, "/invoices?page_size=100&page="+strconv.Itoa(page), nil); code != http.StatusOK {
				b.Errorf("page %d: status %d", page, code)
				return
			}
		}
	})
}
