package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// manySamples is more than a page (100), so the lists page. Every fifth
// sample quote is accepted, which makes one invoice more.
const manySamples = 120

func TestListsAsCSV(t *testing.T) {
	m := startMock(t, "--seed", strconv.Itoa(manySamples))
	for _, c := range []struct {
		noun   string
		header []string
		rows   int
	}{
		{"invoices", []string{"invoice_number", "status", "client_name", "issue_date", "due_date", "currency", "total", "amount_due", "id"}, manySamples + manySamples/5},
		{"quotes", []string{"quote_number", "status", "client_name", "title", "issue_date", "valid_until", "currency", "total", "id"}, manySamples},
		{"items", []string{"item_code", "name", "item_type", "unit_price", "is_taxable", "is_active", "id"}, 1},
	} {
		r := run(t, m.env(), c.noun, "list", "--csv").requireCode(t, 0)
		assert.Empty(t, r.stderr, "no progress when stderr is not a terminal")
		records, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
		require.NoError(t, err, c.noun)
		require.Len(t, records, 1+c.rows, c.noun)
		assert.Equal(t, c.header, records[0])
		ids := map[string]bool{}
		for _, rec := range records[1:] {
			id := rec[len(rec)-1]
			assert.False(t, ids[id], "each record once")
			ids[id] = true
		}
	}

	r := run(t, m.env(), "invoices", "list", "--csv", "--status", "paid").requireCode(t, 0)
	records, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 1+manySamples/6, "every sixth sample invoice is paid")
	for _, rec := range records[1:] {
		assert.Equal(t, "paid", rec[1])
		assert.Equal(t, "0.00", rec[7], "money has two decimals")
		assert.Regexp(t, `^\d+\.\d\d$`, rec[6])
	}
}

func TestListsAsJSONLines(t *testing.T) {
	m := startMock(t, "--seed", "6")
	// The third sample quote is accepted: an invoice more.
	for noun, want := range map[string]int{"invoices": 7, "quotes": 6, "items": 1} {
		r := run(t, m.env(), noun, "list", "--json").requireCode(t, 0)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		require.Len(t, lines, want, noun)
		for _, l := range lines {
			var obj map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &obj), "%s: %s", noun, l)
			assert.NotEmpty(t, obj["id"])
		}
	}
	r := run(t, m.env(), "quotes", "list", "--json", "--status", "sent").requireCode(t, 0)
	var q struct {
		Status      string         `json:"status"`
		QuoteNumber string         `json:"quote_number"`
		Total       jsontext.Value `json:"total"`
	}
	require.NoError(t, json.Unmarshal([]byte(strings.Split(r.stdout, "\n")[0]), &q))
	assert.Equal(t, "sent", q.Status)
	assert.Equal(t, "QU-0002", q.QuoteNumber)
	require.Equal(t, jsontext.Kind('0'), q.Total.Kind(), "amounts are exact JSON numbers: %s", q.Total)
	total, err := decimal.NewFromString(string(q.Total))
	require.NoError(t, err)
	assert.True(t, total.IsPositive())
}

func TestTablesFitTheTerminalWidth(t *testing.T) {
	m := startMock(t, "--seed", "5")
	for _, width := range []int{30, 60, 80, 120} {
		for _, args := range [][]string{{"invoices", "list"}, {"quotes", "list"}, {"items", "list"}} {
			r := run(t, append(m.env(), "COLUMNS="+strconv.Itoa(width)), args...).requireCode(t, 0)
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			assert.Greater(t, len(lines), 1)
			for _, l := range lines {
				assert.LessOrEqual(t, displayWidth(l), width, "COLUMNS=%d %v: %q", width, args, l)
			}
			assert.True(t, strings.HasPrefix(lines[0], "NUMBER") || strings.HasPrefix(lines[0], "CODE"), "the first column stays: %q", lines[0])
		}
	}
	narrow := run(t, append(m.env(), "COLUMNS=60"), "invoices", "list").requireCode(t, 0)
	assert.Regexp(t, `(?m)^INV-0001 .* [0-9a-f-]{36}$`, narrow.stdout, "the id stays when columns give way")
	assert.NotContains(t, narrow.stdout, "ISSUED")

	wide := run(t, m.env(), "invoices", "list").requireCode(t, 0) // stdout is a pipe: no limit
	assert.Contains(t, wide.stdout, "AMOUNT DUE")
	assert.Contains(t, wide.stdout, "Globex Corporation")
	assert.NotContains(t, wide.stdout, "…")
}

func TestGetAndPDF(t *testing.T) {
	m := startMock(t, "--seed", "3")
	rows, err := csv.NewReader(strings.NewReader(run(t, m.env(), "invoices", "list", "--csv").stdout)).ReadAll()
	require.NoError(t, err)
	invoiceID := rows[3][8]
	rows, err = csv.NewReader(strings.NewReader(run(t, m.env(), "quotes", "list", "--csv").stdout)).ReadAll()
	require.NoError(t, err)
	quoteID := rows[1][8]

	r := run(t, m.env(), "invoices", "get", invoiceID).requireCode(t, 0)
	assert.Contains(t, r.stdout, "Invoice INV-0003")
	assert.Regexp(t, `(?m)^Status +paid$`, r.stdout)
	assert.Regexp(t, `(?m)^Amount due +0\.00$`, r.stdout)
	assert.Contains(t, r.stdout, "DESCRIPTION")

	r = run(t, m.env(), "invoices", "get", "--json", invoiceID).requireCode(t, 0)
	var inv map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &inv))
	assert.Equal(t, invoiceID, inv["id"])

	r = run(t, m.env(), "quotes", "get", quoteID).requireCode(t, 0)
	assert.Contains(t, r.stdout, "Quote QU-0001: Website refresh")
	r = run(t, m.env(), "items", "get", invoicingtest.SeedItemID).requireCode(t, 0)
	assert.Contains(t, r.stdout, "Item Consulting hour")
	assert.Regexp(t, `(?m)^Unit price +150\.00$`, r.stdout)

	dir := t.TempDir()
	out := filepath.Join(dir, "inv.pdf")
	r = run(t, m.env(), "invoices", "pdf", invoiceID, "-o", out).requireCode(t, 0)
	assert.Contains(t, r.stdout, "Saved "+out)
	pdf, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(pdf, []byte("%PDF-")))

	runIn(t, dir, m.env(), "quotes", "pdf", quoteID).requireCode(t, 0)
	_, err = os.Stat(filepath.Join(dir, "Quote-QU-0001.pdf"))
	assert.NoError(t, err, "without -o, the name the service gives")

	r = run(t, m.env(), "quotes", "pdf", quoteID, "-o", "-").requireCode(t, 0)
	assert.True(t, strings.HasPrefix(r.stdout, "%PDF-"), "-o - writes the PDF to stdout")

	r = run(t, m.env(), "invoices", "get", "5eed0009-0000-4000-8000-000000000009").requireCode(t, 1)
	assert.Contains(t, r.stderr, "404")
}

func TestTheKeyIsNeverPrinted(t *testing.T) {
	m := startMock(t)
	base := "INVOICING_BASE_URL=" + m.baseURL
	// run checks every output of a command given INVOICING_API_KEY.
	cases := []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"unknown key", []string{base, "INVOICING_API_KEY=sk_live_unknown_0123456789"}, []string{"invoices", "list"}, 1, "401"},
		{"unknown key, get", []string{base, "INVOICING_API_KEY=sk_live_unknown_0123456789"}, []string{"items", "get", invoicingtest.SeedItemID}, 1, "401"},
		{"read-only key, csv", []string{base, "INVOICING_API_KEY=" + m.readOnlyKey}, []string{"quotes", "list", "--csv"}, 0, ""},
		{"key with a line break", []string{base, "INVOICING_API_KEY=sk_live_line\nbreak_0123456789"}, []string{"invoices", "list"}, 2, "unusable"},
		{"plain http to another host", []string{"INVOICING_BASE_URL=http://192.0.2.1/api/v1/external", "INVOICING_API_KEY=sk_live_cleartext_0123456789"}, []string{"items", "list"}, 2, "unusable"},
		{"bad id", m.env(), []string{"invoices", "pdf", "nope"}, 2, "not a valid invoice id"},
		{"help", m.env(), []string{"invoices", "list", "--help"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, c.env, c.args...).requireCode(t, c.code)
			assert.Contains(t, r.stderr, c.want)
		})
	}
}

// A base URL without /api/v1/external, the likeliest first mistake, gets
// the SDK's hint: what the base URL must end in, and the one used.
func TestABaseURLWithoutThePrefixGetsTheHint(t *testing.T) {
	m := startMock(t)
	host := strings.TrimSuffix(m.baseURL, "/api/v1/external")
	for _, base := range []string{host, host + "/api/v1"} {
		t.Run(base, func(t *testing.T) {
			r := run(t, []string{"INVOICING_BASE_URL=" + base, "INVOICING_API_KEY=" + m.fullKey}, "invoices", "list").requireCode(t, 1)
			assert.Contains(t, r.stderr, "404 Not Found (the base URL must end in /api/v1/external; this Client uses "+base+")")
		})
	}
}

func TestAmountsFinerThanACentAreNotRounded(t *testing.T) {
	m := startMock(t)
	_, err := m.client(t, m.fullKey).Items.Create(t.Context(), &invoicing.ItemCreateParams{
		Name: "Printing per page", ItemCode: "PRINT", UnitPrice: invoicing.Ptr(decimal.RequireFromString("0.125")),
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	})
	require.NoError(t, err)

	r := run(t, m.env(), "items", "list", "--csv").requireCode(t, 0)
	records, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	require.NoError(t, err)
	prices := map[string]string{}
	for _, rec := range records[1:] {
		prices[rec[0]] = rec[3]
	}
	assert.Equal(t, "0.125", prices["PRINT"], "exact, not 0.13")
	assert.Equal(t, "150.00", prices["CONSULT"], "two decimals at least")

	table := run(t, m.env(), "items", "list").requireCode(t, 0).stdout
	assert.Contains(t, table, " 0.125 ")

	lines := run(t, m.env(), "items", "list", "--json").requireCode(t, 0).stdout
	assert.Contains(t, lines, `"unit_price":0.125,`, "JSON agrees: exact")
	assert.Contains(t, lines, `"unit_price":150.00,`, "and two decimals at least")
}

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
