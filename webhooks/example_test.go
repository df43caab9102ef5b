package webhooks_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// exampleSecret stands in for the secret shown when the webhook was created.
const exampleSecret = "5f0e8d2c4b6a19377e5d3c1b0a9f8e7d6c5b4a3928170f6e5d4c3b2a19081726"

// exampleRequest builds the request the service would send: a POST with the
// delivery headers, signed at signedAt.
func exampleRequest(eventType webhooks.EventType, deliveryID string, signedAt time.Time, body string) *http.Request {
	r, err := webhooks.TestDelivery{
		Secret: exampleSecret, Type: eventType, DeliveryID: deliveryID, Timestamp: signedAt, Body: []byte(body),
	}.Request("/webhooks")
	if err != nil {
		panic(err)
	}
	return r
}

func ExampleHandler() {
	now := time.Date(2026, 3, 12, 0, 0, 5, 0, time.UTC)
	v, err := webhooks.NewVerifier(exampleSecret, webhooks.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	h := webhooks.Handler(v, func(ctx context.Context, d *webhooks.Delivery) error {
		switch e := d.Event.(type) {
		case *webhooks.PaymentReceived:
			number := "(no number)"
			if e.InvoiceNumber != nil {
				number = *e.InvoiceNumber
			}
			fmt.Println(d.Type, d.ID, e.Amount.StringFixed(2), "paid by", e.PaymentMethod, "on", number)
		case *webhooks.RawEvent:
			fmt.Println("not handled:", e.Type)
		}
		return nil
	}, webhooks.WithDeduper(webhooks.NewMemoryDeduper(27*time.Hour)))

	body := `{"payment_id": "f2a9c4e7", "invoice_id": "e5b3f1d2", "amount": "500.00", "payment_method": "bank_transfer", "received_at": "2026-03-12T00:00:00Z", "invoice_number": "INV-0412"}`
	for _, r := range []*http.Request{
		exampleRequest(webhooks.EventPaymentReceived, "dlv-1", now, body),
		exampleRequest(webhooks.EventPaymentReceived, "dlv-1", now, body), // a retry: not processed again
		exampleRequest("credit_note.created", "dlv-2", now, `{"credit_note_id": "cn-1"}`),
		exampleRequest(webhooks.EventPaymentReceived, "dlv-3", now.Add(-time.Hour), body), // stale
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code)
	}
	// Output:
	// payment.received dlv-1 500.00 paid by bank_transfer on INV-0412
	// 200
	// 200
	// not handled: credit_note.created
	// 200
	// 401
}

func ExampleBusinessHandler() {
	// Each business's webhook endpoint in the service points at
	// https://example.com/webhooks/<business>; its Verifier is built once
	// from the secrets the business gave (two while a secret rotates).
	verifiers := map[string]*webhooks.Verifier{}
	for business, secret := range map[string]string{"acme": acmeSecret, "globex": globexSecret} {
		v, err := webhooks.NewVerifier(secret)
		if err != nil {
			panic(err)
		}
		verifiers[business] = v
	}
	lookup := func(ctx context.Context, business string) (*webhooks.Verifier, error) {
		if v, ok := verifiers[business]; ok {
			return v, nil
		}
		return nil, webhooks.ErrUnknownBusiness
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", webhooks.BusinessHandler(lookup, func(ctx context.Context, d *webhooks.Delivery) error {
		fmt.Println(d.Business, d.Type)
		return nil
	}))

	td := webhooks.TestDelivery{Secret: globexSecret, Type: webhooks.EventInvoicePaid, Body: []byte(`{"invoice_id":"6f1c","invoice_number":"INV-0001","client_id":"c1","reference":"","amount_paid":"10.00","paid_at":"2026-03-05T09:14:21Z"}`)}
	r, _ := td.Request("/webhooks/globex")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	fmt.Println(w.Code)
	// Output:
	// globex invoice.paid
	// 200
}

func ExampleVerifier_Read() {
	now := time.Date(2026, 3, 5, 9, 14, 30, 0, time.UTC)
	v, err := webhooks.NewVerifier(exampleSecret, webhooks.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	body := `{"quote_id": "9d2e4b71", "quote_number": "QU-0137", "status": "accepted", "total": "7120.34",
		"valid_until": "2026-04-01", "accepted_by": "Jane M. Citizen", "accepted_at": "2026-03-05T09:14:21Z",
		"invoice_id": "e5b3f1d2", "invoice_number": "INV-0412", "invoice_status": "awaiting_payment"}`
	r := exampleRequest(webhooks.EventQuoteAccepted, "dlv-7", now.Add(-9*time.Second), body)

	d, err := v.Read(r)
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	q := d.Event.(*webhooks.QuoteAccepted)
	fmt.Println(d.ID, d.Type, d.Timestamp.Format(time.RFC3339))
	fmt.Println(q.QuoteNumber, q.Status, q.Total, q.ValidUntil, "accepted by", q.AcceptedBy)
	if q.InvoiceID != nil {
		fmt.Println("converted into", *q.InvoiceNumber, *q.InvoiceStatus)
	}
	// Output:
	// dlv-7 quote.accepted 2026-03-05T09:14:21Z
	// QU-0137 accepted 7120.34 2026-04-01 accepted by Jane M. Citizen
	// converted into INV-0412 awaiting_payment
}

func ExampleVerifier_Verify() {
	now := time.Date(2026, 3, 5, 9, 14, 30, 0, time.UTC)
	v, err := webhooks.NewVerifier(exampleSecret, webhooks.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	body := []byte(`{"event": "test", "timestamp": "2026-03-05T09:00:00Z", "message": "hello", "business_id": "b-1"}`)
	// check verifies received against the headers of body signed at signedAt.
	check := func(signedAt time.Time, received []byte) {
		ts, sig := webhooks.Sign(exampleSecret, signedAt, body)
		h := http.Header{}
		h.Set(webhooks.HeaderTimestamp, ts)
		h.Set(webhooks.HeaderSignature, sig)
		err := v.Verify(h, received)
		switch {
		case err == nil:
			fmt.Println("authentic")
		case errors.Is(err, webhooks.ErrSignatureMismatch):
			fmt.Println("not signed with our secret, or altered")
		case errors.Is(err, webhooks.ErrTimestampOutOfTolerance):
			fmt.Println("authentic but stale or early")
		default:
			fmt.Println("refused:", err)
		}
	}
	check(now, body)
	check(now, bytes.Replace(body, []byte("hello"), []byte("HELLO"), 1))
	check(now.Add(-10*time.Minute), body)
	// Output:
	// authentic
	// not signed with our secret, or altered
	// authentic but stale or early
}

func ExampleParse() {
	e, err := webhooks.Parse(webhooks.EventQuoteAccepted, []byte(`{"quote_id": "7a41c2e9", "quote_number": "QU-0138",
		"total": "980.10", "accepted_by": "Sam Baker", "accepted_at": "2026-03-05T09:14:21Z"}`))
	if err != nil {
		panic(err)
	}
	q := e.(*webhooks.QuoteAccepted)
	fmt.Println(q.QuoteNumber, q.Total.StringFixed(2), q.AcceptedBy, "converted:", q.InvoiceID != nil, "via share link:", q.AcceptingContact != nil)

	e, err = webhooks.Parse("credit_note.created", []byte(`{"credit_note_id": "cn-1"}`))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%T %s %s\n", e, e.EventType(), e.(*webhooks.RawEvent).Body)
	// Output:
	// QU-0138 980.10 Sam Baker converted: false via share link: false
	// *webhooks.RawEvent credit_note.created {"credit_note_id": "cn-1"}
}

func ExampleSign() {
	body := []byte(`{"event": "test"}`)
	ts, sig := webhooks.Sign(exampleSecret, time.Unix(1772702061, 0), body)
	fmt.Println(webhooks.HeaderTimestamp+":", ts)
	fmt.Println(webhooks.HeaderSignature+":", sig)
	// Output:
	// X-Service-Timestamp: 1772702061
	// X-Service-Signature: sha256=de0d029a94671c238ca24bc210050e2f2ea31b56e625ed8219d81879f67f90f8
}

func ExampleWithSecrets() {
	// During a rotation, accept the new secret and, until every sender has
	// switched, the old one.
	const oldSecret = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
	v, err := webhooks.NewVerifier(exampleSecret, webhooks.WithSecrets(oldSecret), webhooks.WithoutTimestampCheck())
	if err != nil {
		panic(err)
	}
	body := []byte(`{"event": "test"}`)
	for _, secret := range []string{exampleSecret, oldSecret, "some other secret"} {
		ts, sig := webhooks.Sign(secret, time.Unix(1772702061, 0), body)
		h := http.Header{}
		h.Set(webhooks.HeaderTimestamp, ts)
		h.Set(webhooks.HeaderSignature, sig)
		fmt.Println(v.Verify(h, body))
	}
	// Output:
	// <nil>
	// <nil>
	// webhooks: signature mismatch
}

func ExampleTestDelivery() {
	// A receiver's handler, as in production.
	v, err := webhooks.NewVerifier(exampleSecret)
	if err != nil {
		panic(err)
	}
	h := webhooks.Handler(v, func(ctx context.Context, d *webhooks.Delivery) error {
		if e, ok := d.Event.(*webhooks.InvoicePaid); ok {
			fmt.Println(d.ID, e.InvoiceNumber, e.AmountPaid.StringFixed(2))
		}
		return nil
	})

	// Its test: a delivery signed now, as the service would send it.
	r, err := webhooks.TestDelivery{
		Secret:     exampleSecret,
		Type:       webhooks.EventInvoicePaid,
		DeliveryID: "dlv-42",
		Body:       []byte(`{"invoice_id": "e5b3f1d2", "invoice_number": "INV-0412", "amount_paid": "1375.00", "paid_at": "2026-03-20T23:05:44Z"}`),
	}.Request("/webhooks")
	if err != nil {
		panic(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code)
	// Output:
	// dlv-42 INV-0412 1375.00
	// 200
}

// A receiver's test: a sample invoice.paid, signed as the service signs it,
// through the receiver's handler.
func ExampleSampleBody() {
	const secret = exampleSecret
	v, err := webhooks.NewVerifier(secret)
	if err != nil {
		panic(err)
	}
	h := webhooks.Handler(v, func(ctx context.Context, d *webhooks.Delivery) error {
		if e, ok := d.Event.(*webhooks.InvoicePaid); ok {
			fmt.Println(d.Type, e.InvoiceNumber, e.AmountPaid.StringFixed(2))
		}
		return nil
	})

	body, err := webhooks.SampleBody(webhooks.EventInvoicePaid, time.Now())
	if err != nil {
		panic(err)
	}
	r, err := webhooks.TestDelivery{Secret: secret, Type: webhooks.EventInvoicePaid, Body: body}.Request("/webhooks")
	if err != nil {
		panic(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code)
	// Output:
	// invoice.paid INV-0412 1512.50
	// 200
}

func ExampleRouter() {
	// The fake service, for the example; in production the Client is
	// invoicing.NewClient's and the Handler runs in your server.
	srv := invoicingtest.NewServer()
	defer srv.Close()
	c := srv.Client()

	r := webhooks.NewRouter(func(ctx context.Context, d *webhooks.Delivery) error {
		fmt.Println("ignored:", d.Type) // types without a function, known or not
		return nil
	})
	webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e *webhooks.InvoicePaid) error {
		inv, err := e.FetchInvoice(ctx, c) // the invoice as it stands, not the body's figures
		if err != nil {
			return err // the service retries the delivery
		}
		fmt.Println(inv.InvoiceNumber, inv.Status, "due:", inv.AmountDue.StringFixed(2))
		return nil
	})
	webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e *webhooks.PaymentReceived) error {
		fmt.Println("payment of", e.Amount.StringFixed(2), "by", e.PaymentMethod)
		return nil
	})
	srv.NewReceiver(r.Handle) // webhooks.Handler(verifier, r.Handle), as an endpoint of the fake

	inv, err := c.Invoices.Create(context.Background(), &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		Status:           invoicing.InvoiceStatusAwaitingPayment,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Design", UnitPrice: decimal.RequireFromString("250")}},
	})
	if err != nil {
		panic(err)
	}
	if _, err := srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: inv.AmountDue}); err != nil {
		panic(err)
	}
	// Output:
	// ignored: invoice.created
	// payment of 275.00 by bank_transfer
	// INV-0001 paid due: 0.00
}
