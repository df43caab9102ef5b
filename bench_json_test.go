package invoicing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/benchpair"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// benchInvoicePage returns a page of 100 invoices exactly as invoicingtest
// serves it: one line each, as the service's documented example has, with
// amounts, quantities and descriptions that vary from invoice to invoice.
func benchInvoicePage(tb testing.TB) []byte {
	tb.Helper()
	srv := invoicingtest.NewTestServer(tb)
	c := srv.Client()
	ctx := context.Background()
	descriptions := []string{"Consulting", "Widget", "Support plan", "Travel", "Licence renewal"}
	for i := range 100 {
		_, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
			ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID,
			DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID, Notes: "Thank you for your business",
			LineItems: []invoicing.LineItemParams{{
				Description: descriptions[i%len(descriptions)],
				UnitPrice:   decimal.New(int64(1000+i*137%90000), -2),
				Quantity:    invoicing.Ptr(decimal.NewFromInt(int64(1 + i%5))),
			}},
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	var page []byte
	if err := c.Do(ctx, "GET", "/invoices?page_size=100", nil, &page); err != nil {
		tb.Fatal(err)
	}
	return page
}

// BenchmarkDecodeInvoicePage decodes one page of 100 invoices: with
// encoding/json into the records as they were (v1Invoice), and as the SDK
// decodes a page (Invoice, from the token stream).
func BenchmarkDecodeInvoicePage(b *testing.B) {
	page := benchInvoicePage(b)
	b.Logf("page of %d bytes", len(page))
	benchpair.Run(b, 200, benchpair.Variant{Name: "v1", Run: func() error {
		var p v1InvoicePage
		if err := json.Unmarshal(page, &p); err != nil || len(p.Invoices) != 100 {
			return fmt.Errorf("v1: %d invoices, %v", len(p.Invoices), err)
		}
		return nil
	}}, benchpair.Variant{Name: "sdk", Run: func() error {
		p, err := invoicing.DecodePage[invoicing.Invoice](page, "invoices")
		if err != nil || len(p.Items) != 100 {
			return fmt.Errorf("sdk: %v", err)
		}
		return nil
	}})
}
