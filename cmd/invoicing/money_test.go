package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A service that sends amounts with fewer than two decimals (2649.9, 0) and
// one finer than a cent (0.125), and a member the SDK does not model.
const (
	oddInvoiceID = "7c0e2f4a-1b3d-4e5f-8a9b-0c1d2e3f4a5b"
	oddInvoice   = `{"id": "` + oddInvoiceID + `", "invoice_number": "INV-0042", "client_id": "c1", "client_name": "Acme",
		"status": "awaiting_payment", "issue_date": "2026-03-01", "due_date": "2026-03-31",
		"subtotal": 2409, "tax_total": 240.9, "total": 2649.9, "amount_paid": 0, "amount_due": 2649.9,
		"currency": "AUD", "notes": "", "line_items": [{"id": "l1", "description": "Printing", "quantity": 19272,
		"unit_price": 0.125, "amount": 2649.9, "tax_amount": 240.9, "account_id": null, "tax_code_id": null}],
		"created_at": "2026-03-01T00:00:00Z", "updated_at": null, "discount": {"total": 1.5}}`
)

// runWithOddService runs the tool in this process against that service and
// returns what it wrote on stdout.
func runWithOddService(t *testing.T, args ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/external/invoices":
			_, _ = w.Write([]byte(`{"invoices": [` + oddInvoice + `], "total": 1, "page": 1, "page_size": 100, "has_more": false}`))
		case "/api/v1/external/invoices/" + oddInvoiceID:
			_, _ = w.Write([]byte(oddInvoice))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	env := map[string]string{envBaseURL: srv.URL + "/api/v1/external", envAPIKey: "sk_test_money_0123456789"}
	var stdout, stderr bytes.Buffer
	c := &cli{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] }}
	require.Equal(t, exitOK, c.run(context.Background(), args), "stderr: %s", stderr.String())
	return stdout.String()
}

func TestJSONCSVAndTablesShowAmountsWithAtLeastTwoDecimals(t *testing.T) {
	line := runWithOddService(t, "invoices", "list", "--json")
	for _, want := range []string{`"subtotal":2409.00`, `"tax_total":240.90`, `"total":2649.90`, `"amount_paid":0.00`,
		`"amount_due":2649.90`, `"unit_price":0.125`, `"amount":2649.90`, `"tax_amount":240.90`} {
		assert.Contains(t, line, want, "money has at least two decimals, and 0.125 is not rounded")
	}
	assert.Contains(t, line, `"quantity":19272,`, "a quantity is not money")
	assert.Contains(t, line, `"discount":{"total":1.5}`, "a member the SDK does not model is written as the service sent it")
	assert.Equal(t, line, runWithOddService(t, "invoices", "get", "--json", oddInvoiceID), "get --json writes the same")

	records, err := csv.NewReader(strings.NewReader(runWithOddService(t, "invoices", "list", "--csv"))).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"2649.90", "2649.90"}, records[1][6:8], "total and amount_due in the CSV")

	table := runWithOddService(t, "invoices", "list")
	assert.Regexp(t, `(?m)^INV-0042 .* 2649\.90 +2649\.90  `+oddInvoiceID+`$`, table)
	get := runWithOddService(t, "invoices", "get", oddInvoiceID)
	assert.Regexp(t, `(?m)^Paid +0\.00$`, get)
	assert.Regexp(t, `(?m)^Printing +19272 +0\.125 +240\.90 +2649\.90$`, get)
}

func TestListHelpPromisesWhatTheOutputDoes(t *testing.T) {
	for _, args := range [][]string{{"invoices", "list", "--help"}, {"quotes", "list", "--help"}, {"items", "list", "--help"}} {
		var stdout bytes.Buffer
		c := &cli{stdout: &stdout, stderr: &stdout, getenv: func(string) string { return "" }}
		require.Equal(t, exitOK, c.run(context.Background(), args))
		help := strings.Join(strings.Fields(stdout.String()), " ")
		assert.Contains(t, help, "with at least two decimals", args)
		assert.Contains(t, help, "in the table, the CSV and the JSON", args)
	}
}

func TestWithMoneyPlacesRewritesOnlyMoneyNumbers(t *testing.T) {
	in := `{"total":2649.9,"n":2649.9,"line_items":[{"amount":-3,"quantity":1.5}],"unit_price":"1.5","x":{"total":1}}`
	out, err := withMoneyPlaces([]byte(in), moneyPaths{"/total", "/unit_price", "/line_items/*/amount"})
	require.NoError(t, err)
	assert.Equal(t, `{"total":2649.90,"n":2649.9,"line_items":[{"amount":-3.00,"quantity":1.5}],"unit_price":"1.5","x":{"total":1}}`, string(out),
		"numbers at money members only; a string stays a string")
}
