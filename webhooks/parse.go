package webhooks

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// Parse decodes a delivery body into the typed event for eventType: a
// *InvoiceCreated for EventInvoiceCreated, a *QuoteAccepted for
// EventQuoteAccepted, a *Test for EventTest, and so on. A type the package
// does not know gives a *RawEvent holding the type and a copy of the body, not
// an error. Members the event has no field for are kept in its Extra, and
// those of a nested object in that object's Extra. Names match exactly: a
// member whose name differs from a field's only in case is not that field
// (it goes to Extra). A name given twice in one object is accepted and the
// last member wins; invalid UTF-8 in a string becomes U+FFFD. The event
// marshals back to the members of the body, each written as sent (see the
// package documentation, JSON).
//
// The body of every known type except EventTest must carry the event's own
// id and time fields, non-empty: invoice_id for invoice.*, bill_id for bill.*,
// contact_id for contact.created, payment_id for payment.received, quote_id
// for quote.*, and the time the type is named for (created_at, sent_at,
// updated_at, paid_at, approved_at, received_at, viewed_at, accepted_at or
// unaccepted_at). Every body the service sends has them; the check refuses a
// signed body replayed under the event type header of another kind of event,
// which the signature does not cover.
//
// Parse does not verify anything: call it only on a body that passed
// Verifier.Verify, or use Verifier.Read or Verifier.ParseDelivery, which do
// both. It fails with an error wrapping ErrInvalidPayload when body is not a
// JSON object, a known field has the wrong type or format (a money string
// that is not a decimal, a date that is not YYYY-MM-DD, a datetime that is
// not RFC 3339), or a required id or time field is absent, null or empty.
func Parse(eventType EventType, body []byte) (Event, error) {
	// A body that opens with '{' and decodes (or is valid JSON) is an object.
	if !opensObject(body) {
		return nil, fmt.Errorf("%w: %s body is not a JSON object", ErrInvalidPayload, eventType)
	}
	e := newEvent(eventType)
	if e == nil {
		if !jsontext.Value(body).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) {
			return nil, fmt.Errorf("%w: %s body is not valid JSON", ErrInvalidPayload, eventType)
		}
		return &RawEvent{Type: eventType, Body: append(jsontext.Value(nil), body...)}, nil
	}
	if err := codec.Decode(body, true, e.(record).decodeJSON); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPayload, eventType, err)
	}
	if e, ok := e.(identified); ok {
		switch id := e.identity(); {
		case id.id == "":
			return nil, fmt.Errorf("%w: %s body has no %s", ErrInvalidPayload, eventType, id.idField)
		case id.at.IsZero():
			return nil, fmt.Errorf("%w: %s body has no %s", ErrInvalidPayload, eventType, id.atField)
		}
	}
	return e, nil
}

// record is implemented by every event type but RawEvent.
type record interface{ decodeJSON(*codec.Decoder) error }

// newEvent returns a new, empty event of type t, or nil for an unknown type.
func newEvent(t EventType) Event {
	switch t {
	case EventInvoiceCreated:
		return new(InvoiceCreated)
	case EventInvoiceSent:
		return new(InvoiceSent)
	case EventInvoiceUpdated:
		return new(InvoiceUpdated)
	case EventInvoicePaid:
		return new(InvoicePaid)
	case EventBillCreated:
		return new(BillCreated)
	case EventBillApproved:
		return new(BillApproved)
	case EventContactCreated:
		return new(ContactCreated)
	case EventPaymentReceived:
		return new(PaymentReceived)
	case EventQuoteCreated:
		return new(QuoteCreated)
	case EventQuoteSent:
		return new(QuoteSent)
	case EventQuoteViewed:
		return new(QuoteViewed)
	case EventQuoteAccepted:
		return new(QuoteAccepted)
	case EventQuoteUnaccepted:
		return new(QuoteUnaccepted)
	case EventTest:
		return new(Test)
	}
	return nil
}

// opensObject reports whether the first byte of body after JSON white space
// is '{'.
func opensObject(body []byte) bool {
	for _, c := range body {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}
