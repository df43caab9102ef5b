package invoicingtest_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// A fake server with a fake clock, a webhook receiver, and a quote accepted
// by its recipient. In a test, NewTestServer(t) replaces NewServer and Close.
func Example() {
	clock := invoicingtest.NewFakeClock(time.Date(2026, time.March, 10, 9, 0, 0, 0, time.UTC))
	srv := invoicingtest.NewServer(invoicingtest.WithClock(clock))
	defer srv.Close()

	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			QuoteNumber   string `json:"quote_number"`
			Total         string `json:"total"`
			InvoiceNumber string `json:"invoice_number"`
		}
		_ = json.Unmarshal(body, &ev)
		fmt.Println(r.Header.Get("X-Service-Event"), ev.QuoteNumber, ev.Total, ev.InvoiceNumber)
	}))
	defer hooks.Close()
	srv.AddWebhookEndpoint(hooks.URL, webhooks.EventQuoteAccepted)

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/quotes", strings.NewReader(`{
		"client_id": "`+invoicingtest.SeedClientID+`",
		"default_account_id": "`+invoicingtest.SeedRevenueAccountID+`",
		"default_tax_code_id": "`+invoicingtest.SeedGSTTaxCodeID+`",
		"line_items": [{"description": "Design", "quantity": 2, "unit_price": 100}]
	}`))
	req.Header.Set("Authorization", "Bearer "+srv.FullKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	var quote struct {
		ID    string         `json:"id"`
		Total jsontext.Value `json:"total"` // the number's exact text
	}
	_ = json.UnmarshalRead(resp.Body, &quote)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, quote.Total)

	if err := srv.SendQuote(quote.ID); err != nil {
		panic(err)
	}
	res, err := srv.AcceptQuote(quote.ID, invoicingtest.AcceptOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.InvoiceNumber)
	// Output:
	// 201 220.00
	// quote.accepted QU-0001 220.00 INV-0001
	// INV-0001
}

// A receiver subscribed to the fake in one call: its function gets each
// delivery verified, as a typed event, before the call that raised it
// returns.
func ExampleServer_NewReceiver() {
	srv := invoicingtest.NewServer()
	defer srv.Close() // closes the receiver too

	srv.NewReceiver(func(ctx context.Context, d *webhooks.Delivery) error {
		if e, ok := d.Event.(*webhooks.InvoiceCreated); ok {
			fmt.Println(d.Type, e.InvoiceNumber, e.Total.StringFixed(2), e.Status)
		}
		return nil
	}, invoicingtest.Subscribe(webhooks.EventInvoiceCreated))

	_, err := srv.Client().Invoices.Create(context.Background(), &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Design", UnitPrice: decimal.RequireFromString("250")}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("created")
	// Output:
	// invoice.created INV-0001 275.00 draft
	// created
}

// Outside a test (a demo, an example program), NewServer starts the fake
// and Close stops it.
func ExampleNewServer() {
	srv := invoicingtest.NewServer()
	defer srv.Close()

	c := srv.Client() // an SDK client with srv.URL and srv.FullKey
	customer, err := c.Clients.Get(context.Background(), invoicingtest.SeedClientID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(customer.Name)
	// Output:
	// Acme Pty Ltd
}

// newPaymentsHandler stands for your application's webhook handler, built
// from its configuration: it verifies deliveries with its signing secret
// (against the wall clock, as in production) and reports paid invoices.
func newPaymentsHandler(secret string, paid func(invoiceNumber string)) (http.Handler, error) {
	v, err := webhooks.NewVerifier(secret)
	if err != nil {
		return nil, err
	}
	return webhooks.Handler(v, func(ctx context.Context, d *webhooks.Delivery) error {
		if e, ok := d.Event.(*webhooks.InvoicePaid); ok {
			paid(e.InvoiceNumber)
		}
		return nil
	}), nil
}

// sendAndPayAnInvoice stands for what your application does through the
// API: it creates an invoice awaiting payment of 250 + GST, and the
// client pays it in full.
func sendAndPayAnInvoice(srv *invoicingtest.Server) (*invoicing.InvoiceCreateResult, error) {
	inv, err := srv.Client().Invoices.Create(context.Background(), &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		Status:           invoicing.InvoiceStatusAwaitingPayment,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Design", UnitPrice: decimal.RequireFromString("250")}},
	})
	if err != nil {
		return nil, err
	}
	_, err = srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: inv.Total})
	return inv, err
}

// Your own handler, built with the secret from your configuration, tested
// against the fake: NewHandlerReceiver serves it and registers it as a
// webhook endpoint, and WithSecret makes that endpoint sign with the same
// secret. Deliveries are synchronous: the handler has run when
// RecordPayment returns.
func ExampleServer_NewHandlerReceiver() {
	const secret = "3f6c1e0a9b8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e" // 64 hex characters
	h, err := newPaymentsHandler(secret, func(number string) { fmt.Println("paid:", number) })
	if err != nil {
		log.Fatal(err)
	}

	srv := invoicingtest.NewServer()
	defer srv.Close() // closes the receiver too
	srv.NewHandlerReceiver(h, invoicingtest.WithSecret(secret), invoicingtest.Subscribe(webhooks.EventInvoicePaid))

	inv, err := sendAndPayAnInvoice(srv)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("recorded a payment of", inv.Total.StringFixed(2))
	// Output:
	// paid: INV-0001
	// recorded a payment of 275.00
}

// The same handler served by your own server: AddWebhookEndpointWithSecret
// registers its URL with the secret the handler was built with.
func ExampleServer_AddWebhookEndpointWithSecret() {
	const secret = "3f6c1e0a9b8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e"
	h, err := newPaymentsHandler(secret, func(number string) { fmt.Println("paid:", number) })
	if err != nil {
		log.Fatal(err)
	}
	app := httptest.NewServer(h)
	defer app.Close()

	srv := invoicingtest.NewServer()
	defer srv.Close()
	srv.AddWebhookEndpointWithSecret(app.URL+"/webhooks", secret, webhooks.EventInvoicePaid)

	if _, err := sendAndPayAnInvoice(srv); err != nil {
		log.Fatal(err)
	}
	// Output:
	// paid: INV-0001
}

// Several businesses behind one base URL, as a practice's mirror meets the
// service: the API key picks the business, and each sees only its own
// data. In a test, NewTestMultiServer(t, names) replaces NewMultiServer and
// Close.
func ExampleMultiServer() {
	m := invoicingtest.NewMultiServer([]string{"acme", "globex"})
	defer m.Close()
	ctx := context.Background()

	_, err := m.Business("acme").Client().Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Bookkeeping", UnitPrice: decimal.NewFromInt(400)}},
	})
	if err != nil {
		panic(err)
	}
	for _, b := range m.Businesses() {
		page, err := b.Client().Invoices.ListPage(ctx, nil)
		if err != nil {
			panic(err)
		}
		fmt.Println(b.BusinessName(), b.URL == m.URL, page.Total)
	}
	// Output:
	// acme true 1
	// globex true 0
}
