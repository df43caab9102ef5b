package invoicing_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/time/rate"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// The examples run against invoicingtest, the in-memory server; with a real
// account use invoicing.NewClient(baseURL, apiKey) instead of srv.Client().
// Money is printed with StringFixed(2): the amounts follow API.md's rule
// (amount = quantity × unit_price + tax, GST being 10%).

// exampleInvoices creates one awaiting_payment invoice per price, each with
// one GST-free line, and returns their ids.
func exampleInvoices(c *invoicing.Client, prices ...int64) []string {
	var ids []string
	for _, p := range prices {
		res, err := c.Invoices.Create(context.Background(), &invoicing.InvoiceCreateParams{
			ClientID: invoicingtest.SeedClientID,
			Status:   invoicing.InvoiceStatusAwaitingPayment,
			LineItems: []invoicing.LineItemParams{{
				UnitPrice: decimal.NewFromInt(p), AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTFreeTaxCodeID,
			}},
		})
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	return ids
}

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

func ExampleInvoiceService_List() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()
	exampleInvoices(c, 100, 200, 300)

	// Pages are fetched lazily as the loop goes.
	due := decimal.Zero
	for inv, err := range c.Invoices.List(ctx, &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusAwaitingPayment}) {
		if err != nil {
			log.Fatal(err)
		}
		due = due.Add(inv.AmountDue)
	}
	fmt.Println("amount due:", due.StringFixed(2))

	// break stops the list: no further page is fetched.
	seen := 0
	for inv, err := range c.Invoices.List(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		seen++
		if inv.Total.GreaterThan(decimal.NewFromInt(150)) {
			fmt.Println("first over 150:", inv.Total.StringFixed(2), "after", seen, "invoices")
			break
		}
	}
	// Output:
	// amount due: 600.00
	// first over 150: 200.00 after 2 invoices
}

func ExampleWithPrefetch() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()
	prices := make([]int64, 120)
	for i := range prices {
		prices[i] = int64(i + 1)
	}
	exampleInvoices(c, prices...)

	// Up to 4 pages of 50 are fetched ahead while the loop runs; records
	// still come once each, in order.
	n, sum := 0, decimal.Zero
	p := &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 50}}
	for inv, err := range c.Invoices.List(context.Background(), p, invoicing.WithPrefetch(4)) {
		if err != nil {
			log.Fatal(err)
		}
		n++
		sum = sum.Add(inv.Total)
	}
	fmt.Println(n, "invoices, total", sum.StringFixed(2))
	// Output: 120 invoices, total 7260.00
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
	fmt.Println(first.Created, first.Status, first.Subtotal.StringFixed(2), first.TaxTotal.StringFixed(2), first.Total.StringFixed(2))
	fmt.Println(again.Created, again.ID == first.ID)
	// Output:
	// true draft 1575.00 157.50 1732.50
	// false true
}

func ExampleError() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	_, err := c.Invoices.Get(ctx, "00000000-0000-4000-8000-000000000000")
	var apiErr *invoicing.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Detail)
	}
	fmt.Println(errors.Is(err, invoicing.ErrNotFound))

	// What cannot succeed is refused before sending.
	_, err = c.Invoices.Get(ctx, "not-a-uuid")
	var pe *invoicing.ParamError
	fmt.Println(errors.As(err, &pe), pe.Field, errors.Is(err, invoicing.ErrInvalidParams))
	fmt.Println(err)
	// Output:
	// 404 Invoice not found
	// true
	// true id true
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
	fmt.Println(item.ItemCode, item.ItemType, item.UnitPrice.StringFixed(2))
	_, err = c.Items.Create(context.Background(), params)
	fmt.Println(errors.Is(err, invoicing.ErrItemCodeExists), errors.Is(err, invoicing.ErrConflict))
	// Output:
	// WIDGET-01 SALES 19.95
	// true true
}

func ExampleCollect() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()
	exampleInvoices(c, 10, 20, 30)

	// A cap keeps a list larger than expected from filling memory.
	invs, err := invoicing.Collect(c.Invoices.List(context.Background(), nil), 2)
	fmt.Println(len(invs), errors.Is(err, invoicing.ErrTooManyRecords))
	invs, err = invoicing.Collect(c.Invoices.List(context.Background(), nil), 100)
	fmt.Println(len(invs), err)
	// Output:
	// 2 true
	// 3 <nil>
}

func ExampleFirst() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()
	ids := exampleInvoices(c, 10, 20)

	inv, err := invoicing.First(c.Invoices.List(ctx, &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 1}}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(inv.ID == ids[0])
	_, err = invoicing.First(c.Invoices.List(ctx, &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusOverdue}))
	fmt.Println(errors.Is(err, invoicing.ErrNotFound))
	// Output:
	// true
	// true
}

func ExampleExtra_Get() {
	// A member the SDK has no field for (here purchase_order, say from a
	// newer version of the service) is kept in Extra, and written back.
	body := []byte(`{"id": "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f", "invoice_number": "INV-0042", "purchase_order": {"number": "PO-7", "lines": 3}}`)
	var inv invoicing.Invoice
	if err := json.Unmarshal(body, &inv); err != nil {
		log.Fatal(err)
	}
	var po struct {
		Number string
		Lines  int
	}
	if err := inv.Extra.Get("purchase_order", &po); err != nil {
		log.Fatal(err)
	}
	fmt.Println(inv.InvoiceNumber, po.Number, po.Lines)
	err := inv.Extra.Get("sales_rep", new(string))
	fmt.Println(errors.Is(err, invoicing.ErrFieldMissing))
	out, err := json.Marshal(inv)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// INV-0042 PO-7 3
	// true
	// {"id":"3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f","invoice_number":"INV-0042","purchase_order":{"number":"PO-7","lines":3}}
}

func ExampleClient_Do() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	// Your own types, through the same retries, errors and options as
	// every method: fields match members as encoding/json matches them.
	body := map[string]any{
		"client_id":      invoicingtest.SeedClientID,
		"invoice_number": "INV-7001",
		"line_items": []map[string]any{{
			"quantity": 3, "unit_price": decimal.RequireFromString("19.99"),
			"account_id": invoicingtest.SeedRevenueAccountID, "tax_code_id": invoicingtest.SeedGSTTaxCodeID,
		}},
	}
	var created struct {
		ID            string
		InvoiceNumber string `json:"invoice_number"`
		Total         decimal.Decimal
	}
	if err := c.Do(ctx, http.MethodPost, "/invoices", body, &created); err != nil {
		log.Fatal(err)
	}
	fmt.Println(created.InvoiceNumber, created.Total.StringFixed(2))

	var raw json.RawMessage
	err := c.Do(ctx, http.MethodGet, "/invoices/"+created.ID+"/nope", nil, &raw)
	fmt.Println(errors.Is(err, invoicing.ErrNotFound))
	// Output:
	// INV-7001 65.97
	// true
}

func ExampleWithAPIKey() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	// One Client (its connections, middleware, rate limit) serves many
	// businesses, each call with its own key.
	c := srv.Client()
	ctx := context.Background()
	tenants := map[string]string{"read-only": srv.ReadOnlyKey, "full": srv.NewAPIKey(invoicingtest.AllScopes()...)}
	for _, name := range []string{"read-only", "full"} {
		_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
			Name: "Widget (" + name + ")", UnitPrice: invoicing.Ptr(decimal.NewFromInt(5)),
			AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		}, invoicing.WithAPIKey(tenants[name]))
		fmt.Println(name, errors.Is(err, invoicing.ErrForbidden), err == nil)
	}
	// Output:
	// read-only true false
	// full false true
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
	fmt.Println(f.Filename, f.ContentType, string(head))
	// Output: Invoice-INV-9001.pdf application/pdf %PDF-
}

func ExampleWithLimiter() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	// One Client serves every business; each business's calls wait on its
	// own budget (here in memory; a Limiter may as well keep it in a
	// database shared by every process).
	c := srv.Client()
	ctx := context.Background()
	exampleInvoices(c, 10, 20, 30)
	// The test server has one business: three of its keys stand in for
	// three businesses.
	type business struct {
		key    string
		budget invoicing.Limiter
	}
	// Budgets in requests a second, with a burst.
	businesses := map[string]business{
		"acme":    {srv.ReadOnlyKey, rate.NewLimiter(10, 5)},
		"globex":  {srv.NewAPIKey(invoicingtest.ReadScopes()...), rate.NewLimiter(rate.Every(time.Second), 1)},
		"initech": {srv.FullKey, rate.NewLimiter(2, 2)},
	}
	for _, name := range []string{"acme", "globex", "initech"} {
		b := businesses[name]
		var n int
		for _, err := range c.Invoices.List(ctx, nil, invoicing.WithAPIKey(b.key), invoicing.WithLimiter(b.budget)) {
			if err != nil {
				log.Fatal(err)
			}
			n++
		}
		fmt.Println(name, n, "invoices")
	}
	// Output:
	// acme 3 invoices
	// globex 3 invoices
	// initech 3 invoices
}
