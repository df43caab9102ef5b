package webhooks

// DefaultHeaderPrefix is the prefix of the four delivery headers as the API
// documentation names them. It carries a neutral word in place of the
// product's name; use WithHeaderPrefix when deliveries arrive with another
// prefix.
const DefaultHeaderPrefix = "X-Service-"

// The delivery headers under DefaultHeaderPrefix.
const (
	// HeaderEvent holds the event type, such as "invoice.created", or "test".
	HeaderEvent = DefaultHeaderPrefix + "Event"
	// HeaderDelivery holds the delivery's unique id, for de-duplication.
	HeaderDelivery = DefaultHeaderPrefix + "Delivery"
	// HeaderTimestamp holds the signing time in Unix seconds, as decimal digits.
	HeaderTimestamp = DefaultHeaderPrefix + "Timestamp"
	// HeaderSignature holds "sha256=" followed by the lowercase hex HMAC-SHA256.
	HeaderSignature = DefaultHeaderPrefix + "Signature"
)

// EventType is the kind of event a delivery carries, taken from the
// X-Service-Event header. Types the package does not know are kept as they
// are and parse into a *RawEvent.
type EventType string

// Event types documented by the API, and the type of the test delivery sent
// from the webhook settings page.
const (
	EventInvoiceCreated  EventType = "invoice.created"
	EventInvoiceSent     EventType = "invoice.sent"
	EventInvoiceUpdated  EventType = "invoice.updated"
	EventInvoicePaid     EventType = "invoice.paid"
	EventBillCreated     EventType = "bill.created"
	EventBillApproved    EventType = "bill.approved"
	EventContactCreated  EventType = "contact.created"
	EventPaymentReceived EventType = "payment.received"
	EventQuoteCreated    EventType = "quote.created"
	EventQuoteSent       EventType = "quote.sent"
	EventQuoteViewed     EventType = "quote.viewed"
	EventQuoteAccepted   EventType = "quote.accepted"
	EventQuoteUnaccepted EventType = "quote.unaccepted"
	EventTest            EventType = "test"
)

// headerNames are the canonical names of the four delivery headers for one
// prefix.
type headerNames struct {
	event, delivery, timestamp, signature string
}

// defaultHeaders are the header names under DefaultHeaderPrefix.
var defaultHeaders = headerNames{event: HeaderEvent, delivery: HeaderDelivery, timestamp: HeaderTimestamp, signature: HeaderSignature}

// Known reports whether t is one of the event types this package parses into
// a typed event (the thirteen documented event kinds and EventTest).
func (t EventType) Known() bool {
	switch t {
	case EventInvoiceCreated, EventInvoiceSent, EventInvoiceUpdated, EventInvoicePaid,
		EventBillCreated, EventBillApproved, EventContactCreated, EventPaymentReceived,
		EventQuoteCreated, EventQuoteSent, EventQuoteViewed, EventQuoteAccepted, EventQuoteUnaccepted,
		EventTest:
		return true
	}
	return false
}
