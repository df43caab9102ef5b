package invoicingtest

import (
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

func TestDecimalJSON(t *testing.T) {
	for in, want := range map[string]string{
		"110": "110.00", "110.5": "110.50", "0.125": "0.125", "-3": "-3.00", "1.500": "1.50", "0": "0.00",
		"-0.05": "-0.05", "0.000": "0.00", "1E+2": "100.00", "123456789012345678.9": "123456789012345678.90",
	} {
		b, err := json.Marshal(money(dec(in)), encodeOptions)
		require.NoError(t, err)
		assert.Equal(t, want, string(b), in)
	}
	for in, want := range map[string]string{
		"1": "1", "2.50": "2.5", "10": "10", "0.001": "0.001", "1E+2": "100", "0.000": "0", "-1.10": "-1.1",
	} {
		b, err := json.Marshal(number(dec(in)), encodeOptions)
		require.NoError(t, err)
		assert.Equal(t, want, string(b), in)
	}
	b, err := json.Marshal(moneyString(dec("7")), encodeOptions)
	require.NoError(t, err)
	assert.Equal(t, `"7.00"`, string(b))
	b, err = json.Marshal(numberString(dec("7.50")), encodeOptions)
	require.NoError(t, err)
	assert.Equal(t, `"7.5"`, string(b))
}

func TestFormatMoneyShowsAtLeastTwoDecimalsAndNeverRounds(t *testing.T) {
	for in, want := range map[string]string{
		"12.5": "12.50", "12.500": "12.50", "0": "0.00", "-3": "-3.00",
		"0.125": "0.125", "1234.5678": "1234.5678", "0.1000": "0.10", "1E+2": "100.00",
	} {
		assert.Equal(t, want, FormatMoney(dec(in)), in)
	}
}

// TestAppendFixedMatchesStringFixed checks the fast path of appendFixed
// against the rounding-free use of StringFixed it replaces, over random
// coefficients and exponents, both sides of the 18-digit limit.
func TestAppendFixedMatchesStringFixed(t *testing.T) {
	reference := func(d decimal.Decimal, minPlaces int32) string {
		return d.StringFixed(max(minPlaces, -d.Normalize().Exponent()))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		digits := 1 + rng.IntN(20)
		coef := make([]byte, 0, digits+1)
		if rng.IntN(2) == 0 {
			coef = append(coef, '-')
		}
		for range digits {
			coef = append(coef, byte('0'+rng.IntN(10)))
		}
		d := decimal.RequireFromString(string(coef)).Shift(int32(rng.IntN(41) - 20))
		for _, minPlaces := range []int32{0, 2} {
			require.Equal(t, reference(d, minPlaces), string(appendFixed(nil, d, minPlaces)), "%s × 10^%d, minPlaces %d", d.Coefficient(), d.Exponent(), minPlaces)
		}
	}
}

func TestRequestDecimalsAreJSONNumbers(t *testing.T) {
	var v struct {
		A reqDecimal `json:"a"`
		B reqDecimal `json:"b"`
		C reqDecimal `json:"c"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"a": 12.345678901234567890, "b": null}`), &v))
	assert.True(t, v.A.set)
	assert.Equal(t, "12.34567890123456789", v.A.value.String(), "no float64 on the way")
	assert.False(t, v.B.set)
	assert.False(t, v.C.set)
	require.NoError(t, json.Unmarshal([]byte(`{"a": 1.50}`), &v))
	assert.Equal(t, int32(-2), v.A.value.Exponent(), "the places sent are kept")
	assert.Error(t, json.Unmarshal([]byte(`{"a": "12.5"}`), &v))
	assert.Error(t, json.Unmarshal([]byte(`{"a": true}`), &v))
}

func TestLineAmountsRounding(t *testing.T) {
	cases := []struct{ qty, price, rate, net, tax string }{
		{"1", "100", "1", "100", "1"},
		{"2.5", "10.10", "10", "25.25", "2.53"},  // 2.525 rounds half away from zero
		{"1", "-10.05", "10", "-10.05", "-1.01"}, // -1.005 likewise
		{"3", "0.333", "10", "1", "0.1"},         // net 0.999 -> 1.00, tax 0.0999 -> 0.10
		{"1", "19.99", "0", "19.99", "0"},
	}
	for _, c := range cases {
		net, tax := lineAmounts(dec(c.qty), dec(c.price), dec(c.rate))
		assert.True(t, net.Equal(dec(c.net)), "%v net %s", c, net)
		assert.True(t, tax.Equal(dec(c.tax)), "%v tax %s", c, tax)
	}
}

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
