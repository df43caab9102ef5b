package invoicing_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// The examples run against invoicingtest, the in-memory server; with a real
// account use invoicing.NewClient(baseURL, apiKey) instead of srv.Client().

func ExampleNewClient() {
	c, err := invoicing.NewClient("https://api.example.invalid/api/v1/external", "sk_live_...",
		invoicing.WithUserAgent("billing-sync/1.0"),
		invoicing.WithMaxRetries(5),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.BaseURL())

	_, err = invoicing.NewClient("http://api.example.invalid/api/v1/external", "sk_live_...")
	fmt.Println(err)
	// Output:
	// https://api.example.invalid/api/v1/external
	// invoicing: refusing to send the API key over plain http to api.example.invalid (use https, or WithInsecureHTTP)
}

func ExampleInvoiceService_Create() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	params := &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		Reference:        "ERP-1001", // idempotency key: safe to send twice
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{
			{Description: "Consulting", Quantity: invoicing.Ptr(decimal.RequireFromString("10.5")), UnitPrice: decimal.RequireFromString("150")},
		},
	}
	first, err := c.Invoices.Create(ctx, params)
	if err != nil {
		log.Fatal(err)
	}
	again, err := c.Invoices.Create(ctx, params)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.Created, first.Status, first.Subtotal, first.TaxTotal, first.Total)
	fmt.Println(again.Created, again.ID == first.ID)
	// Output:
	// true draft 1575 157.5 1732.5
	// false true
}

func ExampleInvoiceService_List() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		_, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
			ClientID:  invoicingtest.SeedClientID,
			Status:    invoicing.InvoiceStatusAwaitingPayment,
			LineItems: []invoicing.LineItemParams{{UnitPrice: decimal.NewFromInt(int64(100 * i)), AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTFreeTaxCodeID}},
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	// Pages are fetched lazily as the loop goes; break stops fetching.
	due := decimal.Zero
	for inv, err := range c.Invoices.List(ctx, &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusAwaitingPayment}) {
		if err != nil {
			log.Fatal(err)
		}
		due = due.Add(inv.AmountDue)
	}
	fmt.Println("amount due:", due)
	// Output: amount due: 600
}

func ExampleError() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()

	_, err := c.Invoices.Get(context.Background(), "00000000-0000-4000-8000-000000000000")
	var apiErr *invoicing.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Detail)
	}
	fmt.Println(errors.Is(err, invoicing.ErrNotFound))

	_, err = c.Invoices.Get(context.Background(), "not-a-uuid")
	fmt.Println(err)
	// Output:
	// 404 Invoice not found
	// true
	// invoicing: invalid id: "not-a-uuid" is not a UUID
}

func ExampleItemService_Create() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()
	params := &invoicing.ItemCreateParams{
		Name:      "Widget",
		ItemCode:  "WIDGET-01",
		UnitPrice: invoicing.Ptr(decimal.RequireFromString("19.95")),
		AccountID: invoicingtest.SeedRevenueAccountID,
		TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	}
	item, err := c.Items.Create(context.Background(), params)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(item.ItemCode, item.ItemType, item.UnitPrice)
	_, err = c.Items.Create(context.Background(), params)
	fmt.Println(errors.Is(err, invoicing.ErrItemCodeExists), errors.Is(err, invoicing.ErrConflict))
	// Output:
	// WIDGET-01 SALES 19.95
	// true true
}

func ExampleInvoiceService_PDF() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()
	res, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID:      invoicingtest.SeedClientID,
		InvoiceNumber: "INV-9001",
		LineItems:     []invoicing.LineItemParams{{UnitPrice: decimal.NewFromInt(5), AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID}},
	})
	if err != nil {
		log.Fatal(err)
	}
	f, err := c.Invoices.PDF(ctx, res.ID)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, 5)
	if _, err := io.ReadFull(f, head); err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Filename, string(head))
	// Output: Invoice-INV-9001.pdf %PDF-
}
