package webhooks_test

import (
	"bytes"
	v1json "encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

const (
	invoiceID  = "e5b3f1d2-9c84-4a7b-b6e0-2d1f8a3c5e97"
	clientID   = "3f6c2a91-8b47-4e0d-a5c3-19d7e8f2b640"
	supplierID = "a41d7e2c-6b90-4f35-8e1a-c27b5d903f48"
	billID     = "c8f0a2d6-1e4b-4c79-9a35-5b7d3e0f1c82"
)

func lineItem(id, code, title, description, qty, unitPrice, subtotal, taxRate, tax, total string, optional bool) webhooks.QuoteLineItem {
	return webhooks.QuoteLineItem{
		ID: id, ItemCode: code, Title: title, Description: description,
		Quantity: dec(qty), UnitPrice: dec(unitPrice), Subtotal: dec(subtotal), TaxRate: dec(taxRate),
		TaxAmount: dec(tax), Total: dec(total), Optional: optional,
	}
}

var (
	lineDesign = lineItem("5a1f3c9e-2b7d-4e60-8f14-0c9a6d3b7e21", "WEB-DESIGN", "Website design",
		"Design and build of a six-page responsive website.", "1", "4500.00", "4500.00", "10.00", "450.00", "4950.00", false)
	lineHosting = lineItem("6b2e4d0f-3c8e-4f71-9025-1d0b7e4c8f32", "HOSTING-12", "Managed hosting (12 months)",
		"Hosting, backups and security updates, billed monthly.", "12", "49.95", "599.40", "10.00", "59.94", "659.34", false)
	lineBasicHosting = lineItem("7c3f5e1a-4d9f-4082-a136-2e1c8f5d9043", "HOSTING-BASIC", "Basic hosting (12 months)",
		"Shared hosting without managed updates.", "12", "19.95", "239.40", "10.00", "23.94", "263.34", false)
	lineSEO = lineItem("8d4a6f2b-5e0a-4193-b247-3f2d9a6e0154", "SEO-AUDIT", "SEO audit",
		"One-off search engine audit with a written report.", "1", "850.00", "850.00", "10.00", "85.00", "935.00", true)
	lineTrainingOffered = lineItem("9e5b7a3c-6f1b-42a4-8358-4a3e0b7f1265", "TRAINING-HR", "Staff training (per hour)",
		"On-site training for your team; choose the number of hours.", "2", "120.00", "240.00", "10.00", "24.00", "264.00", false)
	lineTrainingAccepted = lineItem("9e5b7a3c-6f1b-42a4-8358-4a3e0b7f1265", "TRAINING-HR", "Staff training (per hour)",
		"On-site training for your team; choose the number of hours.", "3", "120.00", "360.00", "10.00", "36.00", "396.00", false)
	linePhoto = lineItem("af6c8b4d-702c-43b5-9469-5b4f1c802376", "PHOTO-DAY", "Product photography",
		"A day of product photography for the online shop.", "1", "1200.00", "1200.00", "10.00", "120.00", "1320.00", true)
	lineTravel = lineItem("b07d9c5e-813d-44c6-a57a-6c502d913487", "", "Travel", // item_code is null in the body
		"Travel to site, Perth metro area.", "1", "180.00", "180.00", "0.00", "0.00", "180.00", false)

	allOptions = []webhooks.QuoteLineItem{lineDesign, lineHosting, lineBasicHosting, lineSEO, lineTrainingOffered, linePhoto, lineTravel}
)

// quoteFields returns the quote fields the fixtures share.
func quoteFields(status invoicing.QuoteStatus, publicURL bool, subtotal, tax, total string, lines ...webhooks.QuoteLineItem) webhooks.Quote {
	q := webhooks.Quote{
		QuoteID:     "9d2e4b71-3c5a-4f86-a0b9-7e1d6c8f2a35",
		QuoteNumber: "QU-0137",
		Title:       "Website rebuild 2026",
		ClientID:    clientID,
		ClientName:  "Harbour Lane Bakery Pty Ltd",
		ClientEmail: "jane@harbourlanebakery.example",
		ClientAddress: webhooks.Address{
			AddressLine1: "Shop 4", AddressLine2: "112 Harbour Lane", City: "Fremantle",
			State: "WA", Postcode: "6160", Country: "Australia",
		},
		QuoteAdminURL: "https://app.example.com/quotes/9d2e4b71-3c5a-4f86-a0b9-7e1d6c8f2a35",
		Status:        status,
		IssueDate:     invoicing.NewDate(2026, 3, 2),
		ValidUntil:    invoicing.NewDate(2026, 4, 1),
		Currency:      "AUD",
		Subtotal:      dec(subtotal),
		TaxAmount:     dec(tax),
		Total:         dec(total),
		LineItems:     lines,
	}
	if publicURL {
		q.QuotePublicURL = ptr("https://app.example.com/q/s/Zk3pW9qLx2RtV7mN")
	}
	return q
}

var janeRecipient = webhooks.Recipient{
	QuoteContactID: "10e8ad6f-924e-45d7-b68b-7d613ea24598", ContactID: "c1f9be70-a35f-46e8-879c-8e724fb356a9",
	ContactName: "Jane Citizen", ContactEmail: "jane@harbourlanebakery.example", ContactType: webhooks.RecipientTo,
}

// expectedEvents is what every fixture must parse into, field by field.
var expectedEvents = map[string]webhooks.Event{
	"invoice.created.json": &webhooks.InvoiceCreated{
		InvoiceID: invoiceID, InvoiceNumber: "INV-0412", ClientID: clientID, Reference: "SHOP-ORDER-55120",
		Total: dec("1375.00"), Status: invoicing.InvoiceStatusAwaitingPayment, CreatedAt: datetime("2026-03-05T09:14:27Z"),
	},
	"invoice.sent.json": &webhooks.InvoiceSent{
		InvoiceID: invoiceID, InvoiceNumber: "INV-0412", ClientID: clientID,
		SentAt: datetime("2026-03-05T09:20:03.482113Z"),
	},
	"invoice.updated.json": &webhooks.InvoiceUpdated{
		InvoiceID: invoiceID, InvoiceNumber: "INV-0412", ClientID: clientID, Reference: "SHOP-ORDER-55120",
		Total: dec("1512.50"), Status: invoicing.InvoiceStatusAwaitingPayment, UpdatedAt: datetime("2026-03-06T02:41:10Z"),
	},
	"invoice.paid.json": &webhooks.InvoicePaid{
		InvoiceID: invoiceID, InvoiceNumber: "INV-0412", ClientID: clientID, Reference: "SHOP-ORDER-55120",
		AmountPaid: dec("1512.50"), PaidAt: datetime("2026-03-20T23:05:44Z"),
	},
	"bill.created.json": &webhooks.BillCreated{
		BillID: billID, BillNumber: "BILL-0077", SupplierID: supplierID, Total: dec("264.00"), Status: "draft",
		CreatedAt: datetime("2026-03-07T01:12:55Z"),
	},
	"bill.approved.json": &webhooks.BillApproved{
		BillID: billID, BillNumber: "BILL-0077", SupplierID: supplierID, ApprovedAt: datetime("2026-03-08T04:30:00Z"),
	},
	"contact.created.json": &webhooks.ContactCreated{
		ContactID: supplierID, ContactType: webhooks.ContactTypeSupplier, Name: "Coastal Paper Supplies",
		Email: "accounts@coastalpaper.example", CreatedAt: datetime("2026-03-07T01:12:54Z"),
	},
	"payment.received.json": &webhooks.PaymentReceived{
		PaymentID: "f2a9c4e7-0b3d-4e18-96c5-8d1a7f3b2e60", InvoiceID: invoiceID, Amount: dec("500.00"),
		PaymentMethod: webhooks.PaymentMethodBankTransfer, ReceivedAt: datetime("2026-03-12T00:00:00Z"),
		InvoiceNumber: ptr("INV-0412"), Reference: ptr("SHOP-ORDER-55120"),
	},
	"payment.received.minimal.json": &webhooks.PaymentReceived{
		PaymentID: "0c7e5a3b-9d1f-4b26-8e4a-f6b2c9d0a713", InvoiceID: invoiceID, Amount: dec("1012.50"),
		PaymentMethod: "card", ReceivedAt: datetime("2026-03-20T23:05:43Z"),
	},
	"quote.created.json": &webhooks.QuoteCreated{
		Quote:     quoteFields(invoicing.QuoteStatusDraft, false, "7808.80", "762.88", "8571.68", allOptions...),
		CreatedAt: datetime("2026-03-02T03:00:12Z"),
	},
	"quote.sent.json": &webhooks.QuoteSent{
		Quote:  quoteFields(invoicing.QuoteStatusSent, true, "7808.80", "762.88", "8571.68", allOptions...),
		SentAt: datetime("2026-03-02T03:05:40Z"),
	},
	"quote.viewed.json": &webhooks.QuoteViewed{
		Quote:        quoteFields(invoicing.QuoteStatusSent, true, "7808.80", "762.88", "8571.68", allOptions...),
		ViewedAt:     datetime("2026-03-04T08:11:02Z"),
		ViewCount:    3,
		LastViewedAt: datetime("2026-03-03T21:47:15Z"),
		Viewer: webhooks.Viewer{
			ContactID: nil, ContactName: "Sam Baker", ContactEmail: "sam@harbourlanebakery.example",
			ContactType: webhooks.RecipientTo,
		},
	},
	"quote.accepted.json": &webhooks.QuoteAccepted{
		Quote: quoteFields(invoicing.QuoteStatusAccepted, true, "6489.40", "630.94", "7120.34",
			lineDesign, lineHosting, lineSEO, lineTrainingAccepted, lineTravel),
		Recipients: []webhooks.Recipient{
			janeRecipient,
			{
				QuoteContactID: "21f9be70-a35f-46e8-879c-8e724fb356a9", ContactID: "d20acf81-b460-47f9-98ad-9f835ac467ba",
				ContactName: "Accounts Team", ContactEmail: "accounts@harbourlanebakery.example", ContactType: "cc",
			},
			{
				QuoteContactID: "320acf81-b460-47f9-98ad-9f835ac467ba", ContactID: "e31bd092-c571-480a-a9be-a0946bd578cb",
				ContactName: "Sam Baker", ContactEmail: "sam@harbourlanebakery.example", ContactType: "cc",
			},
		},
		AcceptingContact: &webhooks.AcceptingContact{
			ContactID: "c1f9be70-a35f-46e8-879c-8e724fb356a9", ContactName: "Jane Citizen",
			ContactEmail: "jane@harbourlanebakery.example", ContactType: webhooks.RecipientTo,
		},
		AcceptedBy:            "Jane M. Citizen",
		AcceptedAt:            datetime("2026-03-05T09:14:21Z"),
		AcceptanceComments:    "Please start in the first week of April.",
		AcceptanceOrderNumber: "PO-88213",
		InteractiveSelections: map[string]jsontext.Value{
			"package-4c1d9e27-6a3b-4f58-b0e2-7d9c1a4f6b83":       jsontext.Value(`{"selected": true, "excluded_items": ["af6c8b4d-702c-43b5-9469-5b4f1c802376"]}`),
			"package-group-2b8e5f1c-9d4a-4e67-a3c0-6f1b8d2e5a94": jsontext.Value(`{"selected_package_id": "4c1d9e27-6a3b-4f58-b0e2-7d9c1a4f6b83"}`),
			"section-2": jsontext.Value(`{"quantities": {"9e5b7a3c-6f1b-42a4-8358-4a3e0b7f1265": 3}, "optional_items": {"8d4a6f2b-5e0a-4193-b247-3f2d9a6e0154": true}}`),
		},
		InvoiceID:       ptr(invoiceID),
		InvoiceNumber:   ptr("INV-0412"),
		InvoiceStatus:   ptr(invoicing.InvoiceStatusAwaitingPayment),
		InvoiceAdminURL: ptr("https://app.example.com/invoices/" + invoiceID),
		InvoiceShareURL: ptr("https://app.example.com/i/s/Rt7YhQ2vKp9WmX4c"),
	},
	"quote.accepted.no_invoice.json": &webhooks.QuoteAccepted{
		Quote: quoteFields(invoicing.QuoteStatusAccepted, true, "5519.40", "533.94", "6053.34",
			lineDesign, lineHosting, lineTrainingOffered, lineTravel),
		Recipients:            []webhooks.Recipient{janeRecipient},
		AcceptedBy:            "Jane Citizen",
		AcceptedAt:            datetime("2026-03-05T10:02:00Z"),
		InteractiveSelections: map[string]jsontext.Value{},
	},
	"quote.unaccepted.json": &webhooks.QuoteUnaccepted{
		Quote:              quoteFields(invoicing.QuoteStatusSent, true, "7808.80", "762.88", "8571.68", allOptions...),
		PreviousStatus:     invoicing.QuoteStatusAccepted,
		UnacceptedAt:       datetime("2026-03-06T01:30:00Z"),
		PreviousAcceptance: jsontext.Value(`{"accepted_by": "Jane M. Citizen", "accepted_at": "2026-03-05T09:14:21Z", "acceptance_order_number": "PO-88213", "total": "7120.34"}`),
	},
	"test.json": &webhooks.Test{
		Event: "test", Timestamp: datetime("2026-03-01T10:00:00Z"),
		Message: "This is a test webhook from the invoicing service.", BusinessID: "b7e1c0a4-5d3f-4a8e-9c21-6f0e2d4b8a13",
	},
}

// canonicalFixtures are the fixtures written exactly as their events write
// themselves: every member present, none null where the field writes
// something else, numbers and datetimes in their canonical form. The quote
// fixtures are not: a quote just created has no quote_public_url, a line's
// item_code is null, the accepted quote without an invoice lacks the
// invoice fields, and so on; nor is payment.received.minimal.json, which
// lacks the optional fields.
var canonicalFixtures = map[string]bool{
	"invoice.created.json": true, "invoice.sent.json": true, "invoice.updated.json": true,
	"invoice.paid.json": true, "bill.created.json": true, "bill.approved.json": true,
	"contact.created.json": true, "payment.received.json": true, "test.json": true,
}

// TestParseFixtures checks that every fixture parses into the event built
// in code, field by field; and that the event is equal to the one built in
// code (reflect.DeepEqual, assert.Equal) exactly when the fixture is the
// event's canonical JSON.
func TestParseFixtures(t *testing.T) {
	require.Len(t, expectedEvents, len(fixtures))
	for name, eventType := range fixtures {
		t.Run(name, func(t *testing.T) {
			want, ok := expectedEvents[name]
			require.True(t, ok, "no expectation for %s", name)
			body := fixture(t, name)
			got, err := webhooks.Parse(eventType, body)
			require.NoError(t, err)
			require.Equal(t, eventType, got.EventType())
			requireSameEvent(t, want, got)

			canonical, err := want.(v1json.Marshaler).MarshalJSON() // raw values as they are, where json.Marshal compacts them
			require.NoError(t, err)
			isCanonical := compactJSON(t, canonical) == compactJSON(t, body)
			require.Equal(t, canonicalFixtures[name], isCanonical, "%s is the event's canonical JSON: %s", name, canonical)
			if isCanonical {
				require.Equal(t, want, got)
			} else {
				require.NotEqual(t, want, got, "the event remembers how its body differs from its canonical JSON")
				require.Equal(t, want, mustParse(t, eventType, canonical), "but parsed from its canonical JSON, it is the event built in code")
			}
		})
	}
}

// compactJSON returns the JSON document b without white space.
func compactJSON(t testing.TB, b []byte) string {
	t.Helper()
	v := jsontext.Value(bytes.Clone(b))
	require.NoError(t, v.Compact())
	return string(v)
}

// TestBuiltEventsRoundTrip marshals each event built in code and parses it
// back: an event built in code writes every field, and the JSON it writes
// (its canonical JSON) parses into an event equal to it (assert.Equal).
func TestBuiltEventsRoundTrip(t *testing.T) {
	for name, want := range expectedEvents {
		own, err := want.(v1json.Marshaler).MarshalJSON()
		require.NoError(t, err, name)
		got, err := webhooks.Parse(want.EventType(), own)
		require.NoError(t, err, name)
		require.Equal(t, want, got, "%s: %s", name, own)

		var members map[string]any
		require.NoError(t, v1json.Unmarshal(own, &members))
		for _, f := range reflect.VisibleFields(reflect.TypeOf(want).Elem()) {
			if tag := tagName(f); tag != "" && f.IsExported() {
				require.Contains(t, members, tag, "%s: every field is written", name)
			}
		}

		// Either API writes the same, its values kept as sent compacted.
		for _, marshal := range []func(any) ([]byte, error){
			v1json.Marshal,
			func(v any) ([]byte, error) { return json.Marshal(v) },
		} {
			b, err := marshal(want)
			require.NoError(t, err, name)
			require.Equal(t, decodeAny(t, own), decodeAny(t, b), name)
			got, err := webhooks.Parse(want.EventType(), b)
			require.NoError(t, err, name)
			requireSameEvent(t, builtCopy(got), got, name)
		}
	}
}

// TestFixturesCoverEveryField checks, per event type, that the fixtures and
// the typed events name the same fields at every depth: a member no field
// decodes (it would land in an Extra), or a field no fixture exercises, is
// a mistake in one or the other. The members of interactive_selections (a
// map keyed by ids) and of previous_acceptance (raw JSON) are no fields.
func TestFixturesCoverEveryField(t *testing.T) {
	inFixtures := map[webhooks.EventType]map[string]bool{}
	for name, eventType := range fixtures {
		if inFixtures[eventType] == nil {
			inFixtures[eventType] = map[string]bool{}
		}
		body := fixture(t, name)
		var decoded any
		require.NoError(t, json.Unmarshal(body, &decoded))
		jsonPaths("", decoded, inFixtures[eventType])

		extras := map[string]invoicing.Extra{}
		collectExtras(reflect.ValueOf(mustParse(t, eventType, body)).Elem(), "", extras)
		for path, extra := range extras {
			assert.Empty(t, extra.Names(), "%s: members of %s no field decodes", name, pathOrTop(path))
		}
	}
	// A quote just created has no share link yet; the field is exercised
	// by the other quote events.
	inFixtures[webhooks.EventQuoteCreated][".quote_public_url"] = true

	eventTypes := map[webhooks.EventType]reflect.Type{}
	for _, e := range expectedEvents {
		eventTypes[e.EventType()] = reflect.TypeOf(e).Elem()
	}
	for eventType, paths := range inFixtures {
		// The event built in code with every slice of one element and every
		// pointer set writes every field, at every depth.
		full := reflect.New(eventTypes[eventType])
		fillAll(full.Elem())
		b, err := json.Marshal(full.Interface())
		require.NoError(t, err)
		var decoded any
		require.NoError(t, json.Unmarshal(b, &decoded))
		inStruct := map[string]bool{}
		jsonPaths("", decoded, inStruct)
		for path := range inStruct {
			assert.True(t, paths[path], "%s: no fixture has %s", eventType, path)
		}
		for path := range paths {
			if !strings.HasPrefix(path, ".interactive_selections.") && !strings.HasPrefix(path, ".previous_acceptance.") {
				assert.True(t, inStruct[path], "%s: no field is %s", eventType, path)
			}
		}
	}
}

// jsonPaths adds the path of every object key in v to paths, such as
// ".line_items[].optional".
func jsonPaths(prefix string, v any, paths map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			paths[prefix+"."+k] = true
			jsonPaths(prefix+"."+k, child, paths)
		}
	case []any:
		for _, child := range v {
			jsonPaths(prefix+"[]", child, paths)
		}
	}
}

// fillAll gives every pointer in v a value and every slice one element, at
// every depth, so that the event writes a member for every field.
func fillAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			fillAll(v.Index(0))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && v.Type().Field(i).Name != "Extra" {
				fillAll(v.Field(i))
			}
		}
	}
}

func TestParseOptionalFields(t *testing.T) {
	t.Run("payment.received without invoice_number and reference", func(t *testing.T) {
		p := parseAs[webhooks.PaymentReceived](t, webhooks.EventPaymentReceived, fixture(t, "payment.received.minimal.json"))
		assert.Nil(t, p.InvoiceNumber)
		assert.Nil(t, p.Reference)
	})
	t.Run("payment.received with empty and null optional fields", func(t *testing.T) {
		body := `{"payment_id": "p", "invoice_id": "i", "amount": "1.00", "payment_method": "bank_transfer",
			"received_at": "2026-03-05T09:14:21Z", "invoice_number": "", "reference": null}`
		p := parseAs[webhooks.PaymentReceived](t, webhooks.EventPaymentReceived, []byte(body))
		require.NotNil(t, p.InvoiceNumber, "an empty string is present, not absent")
		assert.Equal(t, "", *p.InvoiceNumber)
		assert.Nil(t, p.Reference)
	})
	t.Run("quote.accepted without invoice fields or accepting contact", func(t *testing.T) {
		q := parseAs[webhooks.QuoteAccepted](t, webhooks.EventQuoteAccepted, fixture(t, "quote.accepted.no_invoice.json"))
		assert.Nil(t, q.InvoiceID)
		assert.Nil(t, q.InvoiceNumber)
		assert.Nil(t, q.InvoiceStatus)
		assert.Nil(t, q.InvoiceAdminURL)
		assert.Nil(t, q.InvoiceShareURL)
		assert.Nil(t, q.AcceptingContact)
	})
	t.Run("quote.created without a share link", func(t *testing.T) {
		assert.Nil(t, parseAs[webhooks.QuoteCreated](t, webhooks.EventQuoteCreated, fixture(t, "quote.created.json")).QuotePublicURL)
	})
	t.Run("quote.viewed with a known viewer", func(t *testing.T) {
		body := `{"quote_id": "q", "viewed_at": "2026-03-05T09:14:21Z", "viewer": {"contact_id": "c-1", "contact_name": "Jane", "contact_email": "j@x.example", "contact_type": "to"}}`
		q := parseAs[webhooks.QuoteViewed](t, webhooks.EventQuoteViewed, []byte(body))
		require.NotNil(t, q.Viewer.ContactID)
		assert.Equal(t, "c-1", *q.Viewer.ContactID)
	})
}

func TestParseMoneyIsExact(t *testing.T) {
	body := `{"payment_id": "p", "invoice_id": "i", "amount": "0.10", "payment_method": "bank_transfer", "received_at": "2026-03-05T09:14:21Z"}`
	amount := parseAs[webhooks.PaymentReceived](t, webhooks.EventPaymentReceived, []byte(body)).Amount
	assert.Equal(t, "0.3", amount.Add(amount).Add(amount).String())
	assert.Equal(t, "0.10", amount.StringFixed(2))

	// A JSON number is accepted too.
	paid := parseAs[webhooks.InvoicePaid](t, webhooks.EventInvoicePaid, []byte(`{"invoice_id": "i", "paid_at": "2026-03-05T09:14:21Z", "amount_paid": 12.5}`))
	assert.True(t, dec("12.5").Equal(paid.AmountPaid))
}

// TestMoneyKeepsItsJSONKind: the service sends money as JSON strings, and
// an event built in code writes it so; money sent as a JSON number (in the
// body, a line item, a nested object) is written back as that number, with
// its digits, and money sent as a string stays that string. Both APIs agree.
func TestMoneyKeepsItsJSONKind(t *testing.T) {
	const ids = `"invoice_id": "i", "paid_at": "2026-03-05T09:14:21Z"`
	for _, tc := range []struct {
		eventType webhooks.EventType
		body      string
		member    func(any) any // the money member in the decoded JSON
		want      any           // decodeAny of it
	}{
		{webhooks.EventInvoicePaid, `{` + ids + `, "amount_paid": 12.50}`, top("amount_paid"), v1json.Number("12.50")},
		{webhooks.EventInvoicePaid, `{` + ids + `, "amount_paid": 1e3}`, top("amount_paid"), v1json.Number("1e3")},
		{webhooks.EventInvoicePaid, `{` + ids + `, "amount_paid": -0}`, top("amount_paid"), v1json.Number("-0")},
		{webhooks.EventInvoicePaid, `{` + ids + `, "amount_paid": "12.50"}`, top("amount_paid"), "12.50"},
		{webhooks.EventInvoicePaid, `{` + ids + `, "amount_paid": "1e3"}`, top("amount_paid"), "1e3"},
		{webhooks.EventInvoicePaid, `{` + ids + `, "amount_paid": "-0.00"}`, top("amount_paid"), "-0.00"},
		{webhooks.EventQuoteSent, `{"quote_id": "q", "sent_at": "2026-03-05T09:14:21Z", "total": 4950.00,
			"line_items": [{"id": "l-1", "unit_price": 4500, "total": "4950.00"}]}`, top("total"), v1json.Number("4950.00")},
		{webhooks.EventQuoteSent, `{"quote_id": "q", "sent_at": "2026-03-05T09:14:21Z", "total": 4950.00,
			"line_items": [{"id": "l-1", "unit_price": 4500, "total": "4950.00"}]}`, line("unit_price"), v1json.Number("4500")},
		{webhooks.EventQuoteSent, `{"quote_id": "q", "sent_at": "2026-03-05T09:14:21Z", "total": 4950.00,
			"line_items": [{"id": "l-1", "unit_price": 4500, "total": "4950.00"}]}`, line("total"), "4950.00"},
	} {
		e := mustParse(t, tc.eventType, []byte(tc.body))
		for _, marshal := range []func(any) ([]byte, error){
			v1json.Marshal,
			func(v any) ([]byte, error) { return json.Marshal(v) },
		} {
			b, err := marshal(e)
			require.NoError(t, err)
			assert.Equal(t, tc.want, tc.member(decodeAny(t, b)), "%s: %s", tc.body, b)
		}
		// Built in code from the same values, the event writes strings.
		b, err := json.Marshal(builtCopy(e))
		require.NoError(t, err)
		got := tc.member(decodeAny(t, b))
		require.IsType(t, "", got, "%s", b)
		amount, err := decimal.NewFromString(got.(string))
		require.NoError(t, err)
		want, _ := decimal.NewFromString(fmt.Sprint(tc.want))
		assert.True(t, want.Equal(amount), "%s: %s", tc.body, b)
	}
}

// top returns the member name of a decoded JSON object.
func top(name string) func(any) any {
	return func(v any) any { return v.(map[string]any)[name] }
}

// line returns the member name of the first line item of a decoded quote.
func line(name string) func(any) any {
	return func(v any) any { return v.(map[string]any)["line_items"].([]any)[0].(map[string]any)[name] }
}

func TestParseUnknownEventType(t *testing.T) {
	body := []byte(`{"credit_note_id": "cn-1", "total": "10.00"}`)
	e, err := webhooks.Parse("credit_note.created", body)
	require.NoError(t, err)
	raw, ok := e.(*webhooks.RawEvent)
	require.True(t, ok, "got %T", e)
	assert.Equal(t, webhooks.EventType("credit_note.created"), raw.Type)
	assert.Equal(t, webhooks.EventType("credit_note.created"), raw.EventType())
	assert.JSONEq(t, string(body), string(raw.Body))

	// The body is a copy.
	body[2] = 'X'
	assert.Equal(t, byte('c'), raw.Body[2])

	// Event types are matched exactly.
	e, err = webhooks.Parse("Invoice.Created", fixture(t, "invoice.created.json"))
	require.NoError(t, err)
	assert.IsType(t, &webhooks.RawEvent{}, e)
}

// TestRawEventMarshals: a RawEvent marshals, with either API, as its Type
// and its Body (compacted), and decodes back. A Body with a name given
// twice keeps it; encoding/json/v2 writes and reads that only when allowed
// (jsontext.AllowDuplicateNames), as for any JSON. Invalid UTF-8 is written
// as U+FFFD.
func TestRawEventMarshals(t *testing.T) {
	marshals := map[string]func(any) ([]byte, error){
		"encoding/json":    v1json.Marshal,
		"encoding/json/v2": func(v any) ([]byte, error) { return json.Marshal(v) },
		"encoding/json/v2, names twice allowed": func(v any) ([]byte, error) {
			return json.Marshal(v, jsontext.AllowDuplicateNames(true))
		},
	}
	unmarshals := map[string]func([]byte, any) error{
		"encoding/json":    v1json.Unmarshal,
		"encoding/json/v2": func(b []byte, v any) error { return json.Unmarshal(b, v) },
	}
	for _, tc := range []struct {
		body, compact string
		twice         bool
	}{
		{`{"credit_note_id": "cn-1", "total": "10.00", "lines": [ 1, {"a": null} ]}`, `{"credit_note_id":"cn-1","total":"10.00","lines":[1,{"a":null}]}`, false},
		{`{"credit_note_id": "cn-1", "total": "10.00", "total": "11.00"}`, `{"credit_note_id":"cn-1","total":"10.00","total":"11.00"}`, true},
		{"{\"note\": \"caf\xe9 <&>\", \"caf\xe9\": 1, \"lone\": \"\\ud800\"}", `{"note":"caf\ufffd <&>","caf\ufffd":1,"lone":"\ufffd"}`, false},
	} {
		e, err := webhooks.Parse("credit_note.created", []byte(tc.body))
		require.NoError(t, err)
		require.Equal(t, []byte(tc.body), []byte(e.(*webhooks.RawEvent).Body), "Body is the body as received")
		for mname, marshal := range marshals {
			b, err := marshal(e)
			if tc.twice && mname == "encoding/json/v2" {
				require.ErrorIs(t, err, jsontext.ErrDuplicateName)
				continue
			}
			require.NoError(t, err, mname)
			require.Equal(t, decodeAny(t, []byte(`{"Type":"credit_note.created","Body":`+tc.compact+`}`)), decodeAny(t, b), mname)
			require.True(t, validJSON(b), "%s wrote invalid JSON: %q", mname, b)
			require.Equal(t, compactJSON(t, b), string(b), "%s: compact", mname)
			if tc.twice {
				require.Contains(t, string(b), `"total":"10.00","total":"11.00"`, "%s: the name given twice stays twice", mname)
			}
			for uname, unmarshal := range unmarshals {
				var again webhooks.RawEvent
				err := unmarshal(b, &again)
				if tc.twice && uname == "encoding/json/v2" {
					require.ErrorIs(t, err, jsontext.ErrDuplicateName)
					err = json.Unmarshal(b, &again, jsontext.AllowDuplicateNames(true))
				}
				require.NoError(t, err, "%s, then %s", mname, uname)
				require.Equal(t, "credit_note.created", string(again.Type))
				require.Equal(t, decodeAny(t, []byte(tc.compact)), decodeAny(t, again.Body), "%s, then %s", mname, uname)
			}
		}
	}

	// A RawEvent built in code without a Body, and null.
	b, err := json.Marshal(webhooks.RawEvent{Type: "x"})
	require.NoError(t, err)
	require.Equal(t, `{"Type":"x","Body":null}`, string(b))
	var again webhooks.RawEvent
	require.NoError(t, json.Unmarshal(b, &again))
	require.Equal(t, webhooks.RawEvent{Type: "x", Body: jsontext.Value("null")}, again, "the Body null is read back as the JSON null")
	require.NoError(t, v1json.Unmarshal([]byte(`null`), &again))
	require.Equal(t, webhooks.RawEvent{Type: "x", Body: jsontext.Value("null")}, again, "encoding/json: null leaves it unchanged")
	require.Error(t, v1json.Unmarshal([]byte(`{"Type": 1}`), &again))
	require.Error(t, v1json.Unmarshal([]byte(`[]`), &again))
}

func TestParseKeepsUnknownFields(t *testing.T) {
	body := `{"bill_id": "b-1", "bill_number": "BILL-1", "supplier_id": "s-1", "approved_at": "2026-03-08T04:30:00Z",
		"approved_by": {"name": "Ann"}, "new_flag": true, "amounts": [1, 2]}`
	e, err := webhooks.Parse(webhooks.EventBillApproved, []byte(body))
	require.NoError(t, err)
	assert.Equal(t, &webhooks.BillApproved{
		BillID: "b-1", BillNumber: "BILL-1", SupplierID: "s-1", ApprovedAt: datetime("2026-03-08T04:30:00Z"),
		Extra: invoicing.Extra{
			"approved_by": jsontext.Value(`{"name": "Ann"}`),
			"new_flag":    jsontext.Value(`true`),
			"amounts":     jsontext.Value(`[1, 2]`),
		},
	}, e)
	var approver struct {
		Name string `json:"name"`
	}
	require.NoError(t, e.(*webhooks.BillApproved).Extra.Get("approved_by", &approver))
	assert.Equal(t, "Ann", approver.Name)
}

// TestParseMatchesNamesExactly: a member whose name differs from a field's
// only in case is not that field (encoding/json v1 matched it); it is kept
// in Extra, and the field keeps the exactly named member's value.
func TestParseMatchesNamesExactly(t *testing.T) {
	body := `{"invoice_id": "i-1", "Invoice_ID": "i-2", "created_at": "2026-03-05T09:14:21Z", "TOTAL": "9.99"}`
	ic := parseAs[webhooks.InvoiceCreated](t, webhooks.EventInvoiceCreated, []byte(body))
	assert.Equal(t, "i-1", ic.InvoiceID)
	assert.True(t, ic.Total.IsZero())
	assert.Equal(t, []string{"Invoice_ID", "TOTAL"}, ic.Extra.Names())

	_, err := webhooks.Parse(webhooks.EventInvoiceCreated, []byte(`{"Invoice_ID": "i-2", "created_at": "2026-03-05T09:14:21Z"}`))
	require.ErrorIs(t, err, webhooks.ErrInvalidPayload)
	require.ErrorContains(t, err, "has no invoice_id")
}

func TestParseKeepsUnknownEnumValues(t *testing.T) {
	status := parseAs[webhooks.InvoiceCreated](t, webhooks.EventInvoiceCreated,
		[]byte(`{"invoice_id": "i", "created_at": "2026-03-05T09:14:21Z", "status": "partially_paid"}`)).Status
	assert.Equal(t, invoicing.InvoiceStatus("partially_paid"), status)
	assert.False(t, status.Known())
}

func TestParseInvalidPayloads(t *testing.T) {
	tests := []struct {
		name      string
		eventType webhooks.EventType
		body      string
	}{
		{"empty", webhooks.EventTest, ""},
		{"white space", webhooks.EventTest, " \n"},
		{"null", webhooks.EventTest, "null"},
		{"array", webhooks.EventTest, `[{"event": "test"}]`},
		{"string", webhooks.EventTest, `"test"`},
		{"truncated", webhooks.EventTest, `{"event": "test"`},
		{"trailing garbage", webhooks.EventTest, `{"event": "test"} x`},
		{"money not a decimal", webhooks.EventInvoiceCreated, `{"total": "12,50"}`},
		{"money an object", webhooks.EventInvoiceCreated, `{"total": {"amount": "1"}}`},
		{"date not YYYY-MM-DD", webhooks.EventQuoteCreated, `{"issue_date": "02/03/2026"}`},
		{"datetime without zone", webhooks.EventInvoiceCreated, `{"created_at": "2026-03-05T09:14:27"}`},
		{"count a string", webhooks.EventQuoteViewed, `{"view_count": "3"}`},
		{"optional a number", webhooks.EventQuoteSent, `{"line_items": [{"optional": "yes"}]}`},
		{"unknown type, invalid JSON", "credit_note.created", `{"a": }`},
		{"unknown type, not an object", "credit_note.created", `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := webhooks.Parse(tt.eventType, []byte(tt.body))
			require.ErrorIs(t, err, webhooks.ErrInvalidPayload)
			require.Nil(t, e)
		})
	}
}

// identityFields maps every known event type but EventTest to the id and
// time fields Parse requires of its body.
var identityFields = map[webhooks.EventType][2]string{
	webhooks.EventInvoiceCreated:  {"invoice_id", "created_at"},
	webhooks.EventInvoiceSent:     {"invoice_id", "sent_at"},
	webhooks.EventInvoiceUpdated:  {"invoice_id", "updated_at"},
	webhooks.EventInvoicePaid:     {"invoice_id", "paid_at"},
	webhooks.EventBillCreated:     {"bill_id", "created_at"},
	webhooks.EventBillApproved:    {"bill_id", "approved_at"},
	webhooks.EventContactCreated:  {"contact_id", "created_at"},
	webhooks.EventPaymentReceived: {"payment_id", "received_at"},
	webhooks.EventQuoteCreated:    {"quote_id", "created_at"},
	webhooks.EventQuoteSent:       {"quote_id", "sent_at"},
	webhooks.EventQuoteViewed:     {"quote_id", "viewed_at"},
	webhooks.EventQuoteAccepted:   {"quote_id", "accepted_at"},
	webhooks.EventQuoteUnaccepted: {"quote_id", "unaccepted_at"},
}

func TestParseRequiresIdentityFields(t *testing.T) {
	for eventType, fields := range identityFields {
		t.Run(string(eventType), func(t *testing.T) {
			body := func(id, at string) []byte {
				return []byte(`{"` + fields[0] + `": ` + id + `, "` + fields[1] + `": ` + at + `}`)
			}
			const id, at = `"1b7c"`, `"2026-03-05T09:14:21Z"`
			_, err := webhooks.Parse(eventType, body(id, at))
			require.NoError(t, err, "the two fields are enough")

			for _, bad := range []string{`""`, `null`} {
				_, err = webhooks.Parse(eventType, body(bad, at))
				require.ErrorIs(t, err, webhooks.ErrInvalidPayload)
				require.ErrorContains(t, err, fields[0])
			}
			for _, bad := range []string{`null`, `"0001-01-01T00:00:00Z"`} {
				_, err = webhooks.Parse(eventType, body(id, bad))
				require.ErrorIs(t, err, webhooks.ErrInvalidPayload)
				require.ErrorContains(t, err, fields[1])
			}
			_, err = webhooks.Parse(eventType, []byte(`{"`+fields[0]+`": "1b7c"}`))
			require.ErrorContains(t, err, fields[1])
			_, err = webhooks.Parse(eventType, []byte(`{"`+fields[1]+`": "2026-03-05T09:14:21Z"}`))
			require.ErrorContains(t, err, fields[0])
		})
	}
	require.Len(t, identityFields, 13, "every documented event kind")

	// The test delivery has no id of its own and needs none.
	_, err := webhooks.Parse(webhooks.EventTest, []byte(`{}`))
	require.NoError(t, err)
}

// TestParseRefusesBodiesOfOtherEvents replays every fixture under every
// other documented event type: none fits, so none parses.
func TestParseRefusesBodiesOfOtherEvents(t *testing.T) {
	for name, own := range fixtures {
		body := fixture(t, name)
		for other := range identityFields {
			if other == own {
				continue
			}
			_, err := webhooks.Parse(other, body)
			require.ErrorIs(t, err, webhooks.ErrInvalidPayload, "%s as %s", name, other)
		}
	}
}

func TestEventTypeKnown(t *testing.T) {
	for _, eventType := range fixtures {
		assert.True(t, eventType.Known(), eventType)
	}
	assert.False(t, webhooks.EventType("credit_note.created").Known())
	assert.False(t, webhooks.EventType("").Known())
}

// TestParseNameGivenTwice: the last member of a name wins, whole, null
// included (see the package documentation, JSON); the event writes the
// name once, as its last member was sent.
func TestParseNameGivenTwice(t *testing.T) {
	const head = `{"quote_id": "q", "viewed_at": "2026-03-05T09:14:21Z", `
	type viewed = *webhooks.QuoteViewed
	for _, tc := range []struct {
		members string
		check   func(t *testing.T, e viewed)
		written string // the member in what the event writes
	}{
		// A later null empties the field, whatever its type.
		{`"title": "a", "title": null`, func(t *testing.T, e viewed) { assert.Equal(t, "", e.Title) }, `"title":null`},
		{`"status": "sent", "status": null`, func(t *testing.T, e viewed) { assert.Equal(t, invoicing.QuoteStatus(""), e.Status) }, `"status":null`},
		{`"total": "1.50", "total": null`, func(t *testing.T, e viewed) { assert.True(t, e.Total.IsZero()) }, `"total":null`},
		{`"view_count": 3, "view_count": null`, func(t *testing.T, e viewed) { assert.Zero(t, e.ViewCount) }, `"view_count":null`},
		{`"last_viewed_at": "2026-03-05T09:14:21Z", "last_viewed_at": null`, func(t *testing.T, e viewed) { assert.True(t, e.LastViewedAt.IsZero()) }, `"last_viewed_at":null`},
		{`"line_items": [{"id": "l", "optional": true, "optional": null}]`, func(t *testing.T, e viewed) { assert.False(t, e.LineItems[0].Optional) }, `"line_items":[{"id":"l","optional":null}]`},
		{`"viewer": {"contact_name": "a"}, "viewer": null`, func(t *testing.T, e viewed) { assert.Equal(t, webhooks.Viewer{}, builtCopy(e.Viewer)) }, `"viewer":null`},
		{`"quote_public_url": "u", "quote_public_url": null`, func(t *testing.T, e viewed) { assert.Nil(t, e.QuotePublicURL) }, `"quote_public_url":null`},
		{`"issue_date": "2026-03-05", "issue_date": null`, func(t *testing.T, e viewed) { assert.True(t, e.IssueDate.IsZero()) }, `"issue_date":null`},
		{`"line_items": [{"id": "l"}], "line_items": null`, func(t *testing.T, e viewed) { assert.Nil(t, e.LineItems) }, `"line_items":null`},
		// A later value after null.
		{`"title": null, "title": "b"`, func(t *testing.T, e viewed) { assert.Equal(t, "b", e.Title) }, `"title":"b"`},
		// A later object or array replaces the earlier one whole.
		{`"viewer": {"contact_name": "a"}, "viewer": {"contact_email": "b"}`, func(t *testing.T, e viewed) {
			assert.Equal(t, webhooks.Viewer{ContactEmail: "b"}, builtCopy(e.Viewer))
		}, `"viewer":{"contact_email":"b"}`},
		{`"line_items": [{"id": "a", "title": "t"}, {"id": "b"}], "line_items": [{"title": "c"}]`, func(t *testing.T, e viewed) {
			require.Len(t, e.LineItems, 1)
			assert.Equal(t, webhooks.QuoteLineItem{Title: "c"}, builtCopy(e.LineItems[0]))
		}, `"line_items":[{"title":"c"}]`},
		// Extra keeps the last member.
		{`"future": 1, "future": [2]`, func(t *testing.T, e viewed) {
			assert.Equal(t, invoicing.Extra{"future": jsontext.Value(`[2]`)}, e.Extra)
		}, `"future":[2]`},
	} {
		body := head + tc.members + `}`
		e := mustParse(t, webhooks.EventQuoteViewed, []byte(body)).(viewed)
		tc.check(t, e)
		b, err := e.MarshalJSON()
		require.NoError(t, err)
		assert.Contains(t, string(b), tc.written, body)
		name, _, _ := strings.Cut(tc.written, ":")
		assert.Equal(t, 1, strings.Count(string(b), name+":"), "%s: written once: %s", body, b)
	}
}

// TestSetFieldIsWritten: a field set after parsing is written with its new
// value, as the field writes it, whatever the body had.
func TestSetFieldIsWritten(t *testing.T) {
	body := `{"invoice_id": "i", "paid_at": "2026-03-05T09:14:21+00:00", "amount_paid": 12.50, "reference": null, "x": 1}`
	e := mustParse(t, webhooks.EventInvoicePaid, []byte(body)).(*webhooks.InvoicePaid)
	b, err := e.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, body, string(b), "as parsed")

	e.AmountPaid = dec("13.00")
	e.Reference = "R-1"
	e.PaidAt = e.PaidAt.Add(time.Second)
	e.ClientID = "c-1"
	b, err = e.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, `{"invoice_id": "i", "paid_at": "2026-03-05T09:14:22Z", "amount_paid": "13.00", "reference": "R-1", "client_id": "c-1", "x": 1}`, string(b))

	e.ClientID = "" // back to empty: absent again, as in the body
	b, err = e.MarshalJSON()
	require.NoError(t, err)
	require.NotContains(t, string(b), "client_id")
}

// TestNameTwiceInAKeptValue: a value kept as sent keeps a name given twice
// inside it; encoding/json writes it, encoding/json/v2 only when allowed.
func TestNameTwiceInAKeptValue(t *testing.T) {
	body := `{"event": "test", "future": {"a": 1, "a": 2}}`
	e := mustParse(t, webhooks.EventTest, []byte(body))
	const kept = `"future":{"a":1,"a":2}`
	b, err := v1json.Marshal(e)
	require.NoError(t, err)
	assert.Contains(t, string(b), kept)
	_, err = json.Marshal(e)
	require.ErrorIs(t, err, jsontext.ErrDuplicateName)
	b, err = json.Marshal(e, jsontext.AllowDuplicateNames(true))
	require.NoError(t, err)
	assert.Contains(t, string(b), kept)
}
