package invoicingtest

import (
	"bytes"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// AllEvents returns every event type an endpoint can subscribe to: the
// thirteen documented event types, in the order the API documentation lists
// them. webhooks.EventTest, the type of WebhookEndpoint.Test's deliveries,
// is not among them.
func AllEvents() []webhooks.EventType {
	return []webhooks.EventType{
		webhooks.EventInvoiceCreated, webhooks.EventInvoiceSent, webhooks.EventInvoiceUpdated, webhooks.EventInvoicePaid,
		webhooks.EventBillCreated, webhooks.EventBillApproved, webhooks.EventContactCreated, webhooks.EventPaymentReceived,
		webhooks.EventQuoteCreated, webhooks.EventQuoteSent, webhooks.EventQuoteViewed, webhooks.EventQuoteAccepted,
		webhooks.EventQuoteUnaccepted,
	}
}

// Event is a business event the server raised, whether or not any webhook
// endpoint was subscribed to it.
type Event struct {
	// Name is the event type, e.g. webhooks.EventInvoiceCreated, as sent in
	// the X-Service-Event header.
	Name webhooks.EventType
	// Body is the JSON payload exactly as delivered to webhook endpoints.
	Body []byte
	// At is when the event happened, on the server's clock.
	At time.Time
}

// Events returns the events raised so far, oldest first.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Event, len(s.events))
	for i, e := range s.events {
		out[i] = Event{Name: e.name, Body: bytes.Clone(e.body), At: e.at}
	}
	return out
}

// event is an event ready to publish: its name and its serialised body.
type event struct {
	name webhooks.EventType
	body []byte
	at   time.Time
	// err is why the payload could not be serialised: a mistake in the
	// fake, which publish reports once s.mu is released.
	err error
}

// newEvent serialises payload as an event body. The caller holds s.mu (for
// the clock reading to be consistent with the change it reports), so
// newEvent never panics: a payload that cannot be encoded gives an event
// whose err is set, for publish to report without the lock.
func (s *Server) newEvent(name webhooks.EventType, payload any) event {
	body, err := json.Marshal(payload, encodeOptions)
	if err != nil {
		err = fmt.Errorf("invoicingtest: encoding the %s payload: %w", name, err)
	}
	return event{name: name, body: body, at: s.now(), err: err}
}
