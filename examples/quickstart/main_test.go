package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// env is a getenv over a fixed map, so tests never touch the process's
// environment.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// webhookLines returns the "webhook verified:" lines of a report, without
// the prefix.
func webhookLines(report string) []string {
	var out []string
	for _, l := range strings.Split(report, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "webhook verified: "); ok {
			out = append(out, rest)
		}
	}
	return out
}

func TestDemoReportMatchesTheServiceState(t *testing.T) {
	ctx := context.Background()
	srv := invoicingtest.NewTestServer(t)
	c := srv.Client()
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, demo(ctx, &out, srv, c, dir))
	report := out.String()
	t.Log("\n" + report)

	// The invoice created twice with one reference exists once: 3 widgets
	// at 49.95 with GST (10%), the tax rounded to cents. The only other
	// invoice is the one the accepted quote became.
	net := decimal.NewFromInt(3).Mul(decimal.RequireFromString("49.95"))
	tax := net.Mul(decimal.NewFromInt(10)).Shift(-2).Round(2)
	wantTotal := net.Round(2).Add(tax)
	invoices := testkit.Collect(t, c.Invoices.List(ctx, nil))
	require.Len(t, invoices, 2, "the second create with the same reference must not add an invoice")
	var referenced, converted *invoicing.Invoice
	for _, inv := range invoices {
		if inv.Status == invoicing.InvoiceStatusAwaitingPayment {
			referenced = inv
		} else {
			converted = inv
		}
	}
	require.NotNil(t, referenced)
	require.NotNil(t, converted)
	assert.True(t, wantTotal.Equal(referenced.Total), "total %s, want %s", referenced.Total, wantTotal)
	assert.Contains(t, report, "1st call: "+referenced.InvoiceNumber+" created=true ")
	assert.Contains(t, report, "2nd call: "+referenced.InvoiceNumber+" created=false same id=true")
	assert.Contains(t, report, "total "+wantTotal.StringFixed(2)+" AUD")

	quotes := testkit.Collect(t, c.Quotes.List(ctx, nil))
	require.Len(t, quotes, 1)
	q := quotes[0]
	assert.Equal(t, invoicing.QuoteStatusAccepted, q.Status)
	assert.True(t, q.Total.Equal(converted.Total), "converted invoice total %s, quote total %s", converted.Total, q.Total)
	assert.Equal(t, invoicing.InvoiceStatusDraft, converted.Status, "the fake's default rule converts to a draft invoice")

	// One line per verified webhook, in the order the events happened.
	lines := webhookLines(report)
	require.Len(t, lines, 4, report)
	assert.True(t, strings.HasPrefix(lines[0], "invoice.created "+referenced.InvoiceNumber+" status=awaiting_payment"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "quote.created "+q.QuoteNumber+" "), lines[1])
	assert.Contains(t, lines[2], "quote.accepted "+q.QuoteNumber+" ")
	assert.Contains(t, lines[2], "-> invoice "+converted.InvoiceNumber+" status=draft")
	assert.True(t, strings.HasPrefix(lines[3], "invoice.created "+converted.InvoiceNumber+" status=draft"), lines[3])
	assert.Len(t, srv.Events(), len(lines), "every event the service raised was received and verified")
	assert.Contains(t, report, "the service sent 4 webhooks; 4 were verified")

	// The PDF is saved under the service's file name, with the size printed.
	name := "Invoice-" + referenced.InvoiceNumber + ".pdf"
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(b, []byte("%PDF-")))
	assert.Contains(t, report, "saved "+name+" ("+strconv.Itoa(len(b))+" bytes, application/pdf) in "+dir)

	assert.Contains(t, report, "errors.Is(err, invoicing.ErrItemCodeExists) = true (HTTP 409 \"Item code already exists\")")
	assert.Contains(t, report, "errors.Is(err, invoicing.ErrNotFound) = true")
}

func TestRunWithoutAKeyUsesTheInMemoryServer(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, dir, env(nil)))
	assert.Regexp(t, regexp.MustCompile(`^In-memory Invoicing Service at http://127\.0\.0\.1:\d+/api/v1/external\n`), out.String())
	assert.Contains(t, out.String(), "created=false same id=true")
	pdfs, err := filepath.Glob(filepath.Join(dir, "Invoice-*.pdf"))
	require.NoError(t, err)
	assert.Len(t, pdfs, 1)
}

func TestRunWithAKeyOnlyReads(t *testing.T) {
	ctx := context.Background()
	srv := invoicingtest.NewTestServer(t)
	full := srv.Client()
	var numbers []string
	for i := range 7 {
		res, err := full.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
			ClientID:         invoicingtest.SeedClientID,
			DefaultAccountID: invoicingtest.SeedRevenueAccountID,
			DefaultTaxCodeID: invoicingtest.SeedOnePercentTaxCodeID,
			LineItems: []invoicing.LineItemParams{
				{Description: "Service " + strconv.Itoa(i), UnitPrice: decimal.NewFromInt(int64(100 * (i + 1)))},
			},
		})
		require.NoError(t, err)
		numbers = append(numbers, res.InvoiceNumber)
	}
	before := len(srv.Requests())

	var out bytes.Buffer
	err := run(ctx, &out, "", env(map[string]string{envBaseURL: srv.URL, envAPIKey: srv.ReadOnlyKey}))
	require.NoError(t, err)
	report := out.String()
	t.Log("\n" + report)

	reqs := srv.Requests()[before:]
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		assert.Equal(t, http.MethodGet, r.Method, "%s %s", r.Method, r.Path)
		assert.Equal(t, http.StatusOK, r.Status, "%s %s", r.Method, r.Path)
	}
	assert.Contains(t, report, "Read-only tour of "+srv.URL)
	assert.Contains(t, report, "Invoices: 7 in all; the first 5:")
	for _, n := range numbers[:5] {
		assert.Contains(t, report, n)
	}
	assert.NotContains(t, report, numbers[5])
	assert.Contains(t, report, "Items: 1 in all; the first 1:")
	assert.Contains(t, report, "Quotes: none")
	// The first invoice: one line of 100 with the 1% tax code.
	assert.Contains(t, report, "Invoice "+numbers[0]+" (")
	assert.Contains(t, report, `1 x 100.00 "Service 0" = 101.00 (tax 1.00)`)
	assert.NotContains(t, report, srv.ReadOnlyKey)
}

func TestRunWithAKeyButNoBaseURL(t *testing.T) {
	const key = "sk_live_do_not_print_0123456789abcdef"
	var out bytes.Buffer
	err := run(context.Background(), &out, "", env(map[string]string{envAPIKey: key}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), envBaseURL)
	assert.NotContains(t, err.Error(), key)
	assert.Empty(t, out.String())
}
