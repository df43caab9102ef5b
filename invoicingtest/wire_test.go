package invoicingtest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// These tests pin the fake's output byte for byte, as it was when it wrote
// JSON with encoding/json (v1): member order, money with two or more
// decimal places as numbers in responses and as strings in webhook
// payloads, null where a value is missing, [] for an empty page, and <, >
// and & escaped.

func TestInvoiceResponseBytes(t *testing.T) {
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, map[string]any{
		"notes":      "Tools <b>&</b> parts",
		"line_items": []any{map[string]any{"description": "Washer", "quantity": jsonNumber("1.5"), "unit_price": jsonNumber("0.125")}},
	})
	id, lineID := inv["id"].(string), list(t, inv, "line_items")[0]["id"].(string)

	got := get(t, srv, "/invoices/"+id).requireStatus(t, http.StatusOK)
	assert.Equal(t, "application/json", got.header.Get("Content-Type"))
	assert.Equal(t, `{"id":"`+id+`","invoice_number":"INV-0001","client_id":"`+SeedClientID+`","client_name":"Acme Pty Ltd",`+
		`"status":"draft","issue_date":"2026-03-10","due_date":"2026-04-09",`+
		`"subtotal":0.19,"tax_total":0.00,"total":0.19,"amount_paid":0.00,"amount_due":0.19,"currency":"AUD",`+
		`"notes":"Tools \u003cb\u003e\u0026\u003c/b\u003e parts",`+
		`"line_items":[{"id":"`+lineID+`","description":"Washer","quantity":1.5,"unit_price":0.125,"amount":0.19,"tax_amount":0.00,`+
		`"account_id":"`+SeedRevenueAccountID+`","tax_code_id":"`+SeedOnePercentTaxCodeID+`"}],`+
		`"created_at":"2026-03-10T09:30:00Z","updated_at":null}`, string(got.body))

	events := srv.Events()
	require.Len(t, events, 1)
	assert.Equal(t, webhooks.EventInvoiceCreated, events[0].Name)
	assert.Equal(t, `{"invoice_id":"`+id+`","invoice_number":"INV-0001","client_id":"`+SeedClientID+`","reference":null,`+
		`"total":"0.19","status":"draft","created_at":"2026-03-10T09:30:00Z"}`, string(events[0].Body))
}

func TestListPageBytes(t *testing.T) {
	srv, _ := newServer(t)
	empty := get(t, srv, "/invoices?status=paid").requireStatus(t, http.StatusOK)
	assert.Equal(t, `{"has_more":false,"invoices":[],"page":1,"page_size":50,"total":0}`, string(empty.body),
		"members sorted by name; no records is []")

	page := get(t, srv, "/tax-codes?page_size=1&page=2").requireStatus(t, http.StatusOK)
	assert.Equal(t, `{"has_more":true,"page":2,"page_size":1,"tax_codes":[{"id":"`+SeedOnePercentTaxCodeID+
		`","code":"LEVY1","name":"1% Levy","rate":1,"region":"AU"}],"total":4}`, string(page.body))
}

func TestErrorBytes(t *testing.T) {
	srv, _ := newServer(t)
	got := get(t, srv, "/invoices/3f1c5b2e-0000-4000-8000-000000000000").requireStatus(t, http.StatusNotFound)
	assert.Equal(t, "application/json", got.header.Get("Content-Type"))
	assert.Equal(t, `{"detail":"Invoice not found"}`, string(got.body))
}
