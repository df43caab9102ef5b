package webhooks

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// A Delivery is one verified webhook request.
type Delivery struct {
	// ID is the X-Service-Delivery header, the delivery's unique id, on
	// which the service advises receivers to de-duplicate. The signature
	// does not cover it: see EventKey.
	ID string
	// Type is the X-Service-Event header. The signature does not cover it,
	// but Parse refuses a body that lacks the id and time fields of Type.
	Type EventType
	// Timestamp is the signing time from X-Service-Timestamp, in UTC, to the
	// second.
	Timestamp time.Time
	// Event is the parsed body: the typed event for Type, or a *RawEvent
	// when the package does not know Type.
	Event Event
	// Body is the request body exactly as received and verified.
	Body []byte
	// Business is the business the delivery was addressed to, from the
	// URL, when BusinessHandler received it; "" otherwise.
	Business string
}

// EventKey returns a key naming the event the body describes rather than the
// delivery: the event type, the body's own id and its event time, as in
// "invoice.paid/<invoice_id>/<paid_at>", the time in UTC as RFC 3339 (with
// fractional seconds when the body has them). It returns "" for a test
// delivery and for an event type the package does not know.
//
// Unlike ID, the key comes from the signed body (Parse checks that the body
// fits the type), so a captured body replayed under a new delivery id has the
// same key, and recording the keys processed (in a Deduper, for instance)
// catches it. Two events of one type about one record at the same instant, to
// the precision of the body's time, share a key: a receiver that
// de-duplicates on it treats the second as a replay of the first.
func (d *Delivery) EventKey() string {
	e, ok := d.Event.(identified)
	if !ok {
		return ""
	}
	id := e.identity()
	return string(d.Event.EventType()) + "/" + id.id + "/" + id.at.UTC().Format(time.RFC3339Nano)
}

// Read reads r's body (at most the Verifier's body limit), verifies it and
// parses it, as ParseDelivery does. It does not check the method or close the
// body. Besides the errors of ParseDelivery it returns one wrapping
// ErrBodyTooLarge for a longer body, and the read error for a body that could
// not be read.
func (v *Verifier) Read(r *http.Request) (*Delivery, error) {
	body, err := v.readBody(r)
	if err != nil {
		return nil, err
	}
	return v.ParseDelivery(r.Header, body)
}

// ParseDelivery verifies body against header as Verify does, then parses it
// into a Delivery whose Event is the typed event named by the event header.
// It returns Verify's errors; once verified, an error wrapping
// ErrMissingHeader when the event or delivery header is absent, or one
// wrapping ErrInvalidPayload when the body cannot be decoded. The Delivery
// keeps body; do not modify it afterwards.
func (v *Verifier) ParseDelivery(header http.Header, body []byte) (*Delivery, error) {
	signedAt, err := v.verify(header, body)
	if err != nil {
		return nil, err
	}
	return v.parse(header, body, signedAt)
}

// parse builds the Delivery for a verified body.
func (v *Verifier) parse(header http.Header, body []byte, signedAt time.Time) (*Delivery, error) {
	eventType := header.Get(v.headers.event)
	if eventType == "" {
		return nil, fmt.Errorf("%w: %s", ErrMissingHeader, v.headers.event)
	}
	id := header.Get(v.headers.delivery)
	if id == "" {
		return nil, fmt.Errorf("%w: %s", ErrMissingHeader, v.headers.delivery)
	}
	event, err := Parse(EventType(eventType), body)
	if err != nil {
		return nil, err
	}
	return &Delivery{ID: id, Type: EventType(eventType), Timestamp: signedAt, Event: event, Body: body}, nil
}

// readBody reads r's body up to the Verifier's limit.
func (v *Verifier) readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > v.maxBody {
		return nil, fmt.Errorf("%w: Content-Length %d, limit %d", ErrBodyTooLarge, r.ContentLength, v.maxBody)
	}
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, v.maxBody+1))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, fmt.Errorf("%w: %w", ErrBodyTooLarge, err)
		}
		return nil, fmt.Errorf("webhooks: reading body: %w", err)
	}
	if int64(len(body)) > v.maxBody {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, v.maxBody)
	}
	return body, nil
}
