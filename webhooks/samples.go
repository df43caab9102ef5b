package webhooks

import (
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// SampleBody returns a realistic body of a delivery of the event type t, for
// a receiver's tests: the fields the service sends for t, in its order, with
// made-up names and amounts, money in JSON strings ("1375.00") as in every
// delivery, fresh random ids on each call, and every datetime of the event
// at at (in UTC; quote dates are at's date). It parses with Parse into t's
// typed event (*InvoicePaid for EventInvoicePaid, ...), and TestDelivery
// signs it:
//
//	body, err := webhooks.SampleBody(webhooks.EventInvoicePaid, time.Now())
//	...
//	r, err := webhooks.TestDelivery{Secret: secret, Type: webhooks.EventInvoicePaid, Body: body}.Request("/webhooks")
//
// Every known type (EventType.Known, EventTest included) has a sample; any
// other t is an error. quote.accepted carries the invoice fields of a
// successful conversion and leaves out an optional line the client
// excluded.
func SampleBody(t EventType, at time.Time) ([]byte, error) {
	if !t.Known() {
		return nil, fmt.Errorf("webhooks: no sample body for event type %q", t)
	}
	return json.Marshal(samplePayload(t, at), jsonopt.Encode)
}

// samplePayload returns the sample body of a known event type as an ordered
// object, shaped like the payloads of the service's documentation (and the
// package's fixtures).
func samplePayload(event EventType, now time.Time) jsonobj.Object {
	at := now.UTC().Format(time.RFC3339)
	invoiceID, clientID := uuid.NewString(), uuid.NewString()
	invoice := jsonobj.Object{
		{Key: "invoice_id", Value: invoiceID},
		{Key: "invoice_number", Value: "INV-0412"},
		{Key: "client_id", Value: clientID},
	}
	switch event {
	case EventInvoiceCreated:
		return append(invoice, jsonobj.Field{Key: "reference", Value: "SHOP-ORDER-55120"}, jsonobj.Field{Key: "total", Value: "1375.00"},
			jsonobj.Field{Key: "status", Value: "awaiting_payment"}, jsonobj.Field{Key: "created_at", Value: at})
	case EventInvoiceSent:
		return append(invoice, jsonobj.Field{Key: "sent_at", Value: at})
	case EventInvoiceUpdated:
		return append(invoice, jsonobj.Field{Key: "reference", Value: "SHOP-ORDER-55120"}, jsonobj.Field{Key: "total", Value: "1512.50"},
			jsonobj.Field{Key: "status", Value: "awaiting_payment"}, jsonobj.Field{Key: "updated_at", Value: at})
	case EventInvoicePaid:
		return append(invoice, jsonobj.Field{Key: "reference", Value: "SHOP-ORDER-55120"}, jsonobj.Field{Key: "amount_paid", Value: "1512.50"}, jsonobj.Field{Key: "paid_at", Value: at})
	case EventBillCreated:
		return jsonobj.Object{{Key: "bill_id", Value: uuid.NewString()}, {Key: "bill_number", Value: "BILL-0077"}, {Key: "supplier_id", Value: uuid.NewString()},
			{Key: "total", Value: "264.00"}, {Key: "status", Value: "draft"}, {Key: "created_at", Value: at}}
	case EventBillApproved:
		return jsonobj.Object{{Key: "bill_id", Value: uuid.NewString()}, {Key: "bill_number", Value: "BILL-0077"}, {Key: "supplier_id", Value: uuid.NewString()},
			{Key: "approved_at", Value: at}}
	case EventContactCreated:
		return jsonobj.Object{{Key: "contact_id", Value: uuid.NewString()}, {Key: "contact_type", Value: "supplier"}, {Key: "name", Value: "Coastal Paper Supplies"},
			{Key: "email", Value: "accounts@coastalpaper.example"}, {Key: "created_at", Value: at}}
	case EventPaymentReceived:
		return jsonobj.Object{{Key: "payment_id", Value: uuid.NewString()}, {Key: "invoice_id", Value: invoiceID}, {Key: "amount", Value: "500.00"},
			{Key: "payment_method", Value: "bank_transfer"}, {Key: "received_at", Value: at}, {Key: "invoice_number", Value: "INV-0412"},
			{Key: "reference", Value: "SHOP-ORDER-55120"}}
	case EventTest:
		return jsonobj.Object{{Key: "event", Value: "test"}, {Key: "timestamp", Value: at}, {Key: "message", Value: "This is a test webhook delivery."},
			{Key: "business_id", Value: uuid.NewString()}}
	}
	return sampleQuotePayload(event, now)
}

// quoteLine is a line of the sample quote.
type quoteLine struct {
	code, title, description string
	quantity, unitPrice      int64 // unit price in cents
	optional                 bool
}

var sampleQuoteLines = []quoteLine{
	{"WEB-DESIGN", "Website design", "Design and build of a six-page responsive website.", 1, 450000, false},
	{"HOSTING-12", "Managed hosting (12 months)", "Hosting, backups and security updates, billed monthly.", 12, 4995, false},
	{"SEO-AUDIT", "SEO audit", "One-off search engine audit with a written report.", 1, 85000, true},
}

// sampleQuotePayload returns the body of a quote event: the quote fields,
// then the event's own. An accepted quote leaves its optional line out, as
// the client did.
func sampleQuotePayload(event EventType, now time.Time) jsonobj.Object {
	at := now.UTC().Format(time.RFC3339)
	quoteID, clientID, contactID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	excluded := jsonobj.Object{}
	status := map[EventType]string{
		EventQuoteCreated: "draft", EventQuoteAccepted: "accepted",
	}[event]
	if status == "" {
		status = "sent"
	}
	var lines []jsonobj.Object
	var subtotal, tax decimal.Decimal
	for _, l := range sampleQuoteLines {
		id := uuid.NewString()
		if l.optional && event == EventQuoteAccepted {
			excluded = append(excluded, jsonobj.Field{Key: id, Value: false})
			continue
		}
		price := decimal.New(l.unitPrice, -2)
		net := price.Mul(decimal.NewFromInt(l.quantity))
		lineTax := net.Div(decimal.NewFromInt(10)).Round(2)
		subtotal, tax = subtotal.Add(net), tax.Add(lineTax)
		lines = append(lines, jsonobj.Object{
			{Key: "id", Value: id}, {Key: "item_code", Value: l.code}, {Key: "title", Value: l.title}, {Key: "description", Value: l.description},
			{Key: "quantity", Value: decimal.NewFromInt(l.quantity).String()}, {Key: "unit_price", Value: price.StringFixed(2)},
			{Key: "subtotal", Value: net.StringFixed(2)}, {Key: "tax_rate", Value: "10.00"}, {Key: "tax_amount", Value: lineTax.StringFixed(2)},
			{Key: "total", Value: net.Add(lineTax).StringFixed(2)}, {Key: "optional", Value: l.optional},
		})
	}
	q := jsonobj.Object{
		{Key: "quote_id", Value: quoteID},
		{Key: "quote_number", Value: "QU-0137"},
		{Key: "title", Value: "Website rebuild 2026"},
		{Key: "client_id", Value: clientID},
		{Key: "client_name", Value: "Harbour Lane Bakery Pty Ltd"},
		{Key: "client_email", Value: "jane@harbourlanebakery.example"},
		{Key: "client_address", Value: jsonobj.Object{{Key: "address_line1", Value: "Shop 4"}, {Key: "address_line2", Value: "112 Harbour Lane"},
			{Key: "city", Value: "Fremantle"}, {Key: "state", Value: "WA"}, {Key: "postcode", Value: "6160"}, {Key: "country", Value: "Australia"}}},
	}
	if event != EventQuoteCreated {
		q = append(q, jsonobj.Field{Key: "quote_public_url", Value: "https://app.example.com/q/s/Zk3pW9qLx2RtV7mN"})
	}
	q = append(q,
		jsonobj.Field{Key: "quote_admin_url", Value: "https://app.example.com/quotes/" + quoteID},
		jsonobj.Field{Key: "status", Value: status},
		jsonobj.Field{Key: "issue_date", Value: now.UTC().Format(time.DateOnly)},
		jsonobj.Field{Key: "valid_until", Value: now.UTC().AddDate(0, 0, 30).Format(time.DateOnly)},
		jsonobj.Field{Key: "currency", Value: "AUD"},
		jsonobj.Field{Key: "subtotal", Value: subtotal.StringFixed(2)},
		jsonobj.Field{Key: "tax_amount", Value: tax.StringFixed(2)},
		jsonobj.Field{Key: "total", Value: subtotal.Add(tax).StringFixed(2)},
		jsonobj.Field{Key: "line_items", Value: lines},
	)
	jane := jsonobj.Object{{Key: "contact_id", Value: contactID}, {Key: "contact_name", Value: "Jane Citizen"},
		{Key: "contact_email", Value: "jane@harbourlanebakery.example"}, {Key: "contact_type", Value: "to"}}
	switch event {
	case EventQuoteCreated:
		return append(q, jsonobj.Field{Key: "created_at", Value: at})
	case EventQuoteSent:
		return append(q, jsonobj.Field{Key: "sent_at", Value: at})
	case EventQuoteViewed:
		return append(q, jsonobj.Field{Key: "viewed_at", Value: at}, jsonobj.Field{Key: "view_count", Value: 1}, jsonobj.Field{Key: "last_viewed_at", Value: at}, jsonobj.Field{Key: "viewer", Value: jane})
	case EventQuoteAccepted:
		invoiceID := uuid.NewString()
		recipient := append(jsonobj.Object{{Key: "quote_contact_id", Value: uuid.NewString()}}, jane...)
		return append(q,
			jsonobj.Field{Key: "recipients", Value: []jsonobj.Object{recipient}},
			jsonobj.Field{Key: "accepting_contact", Value: jane},
			jsonobj.Field{Key: "accepted_by", Value: "Jane M. Citizen"},
			jsonobj.Field{Key: "accepted_at", Value: at},
			jsonobj.Field{Key: "acceptance_comments", Value: "Please start in the first week of next month."},
			jsonobj.Field{Key: "acceptance_order_number", Value: "PO-88213"},
			jsonobj.Field{Key: "interactive_selections", Value: jsonobj.Object{{Key: "section-0", Value: jsonobj.Object{{Key: "optional_items", Value: excluded}}}}},
			jsonobj.Field{Key: "invoice_id", Value: invoiceID},
			jsonobj.Field{Key: "invoice_number", Value: "INV-0413"},
			jsonobj.Field{Key: "invoice_status", Value: "awaiting_payment"},
			jsonobj.Field{Key: "invoice_admin_url", Value: "https://app.example.com/invoices/" + invoiceID},
			jsonobj.Field{Key: "invoice_share_url", Value: "https://app.example.com/i/s/Rt7YhQ2vKp9WmX4c"},
		)
	default: // quote.unaccepted
		return append(q,
			jsonobj.Field{Key: "previous_status", Value: "accepted"},
			jsonobj.Field{Key: "unaccepted_at", Value: at},
			jsonobj.Field{Key: "previous_acceptance", Value: jsonobj.Object{{Key: "accepted_by", Value: "Jane M. Citizen"}, {Key: "accepted_at", Value: at},
				{Key: "acceptance_order_number", Value: "PO-88213"}}},
		)
	}
}
