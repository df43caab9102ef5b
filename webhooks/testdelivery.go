package webhooks

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net/http"
	"time"
)

// userAgent is the User-Agent the service sends with every delivery.
const userAgent = "Service-Webhooks/1.0"

// TestDelivery is a delivery as the service would send it, for a receiver's
// tests (of any event type, not only EventTest): Header and Request sign it
// with Sign.
//
//	r, err := webhooks.TestDelivery{Secret: secret, Type: webhooks.EventInvoicePaid, Body: body}.Request("/webhooks")
//	handler.ServeHTTP(w, r)
type TestDelivery struct {
	// Secret is the signing secret; any value is used, even one no Verifier
	// accepts (such as "").
	Secret string
	// Type is sent in the X-Service-Event header; "" sends the header empty.
	Type EventType
	// DeliveryID is sent in the X-Service-Delivery header; a fresh random id
	// when "".
	DeliveryID string
	// Timestamp is the signing time, to the second; the current time when
	// zero.
	Timestamp time.Time
	// Body is the JSON body, signed and sent exactly as given.
	Body []byte
}

// Header returns the headers the service sends with the delivery:
// Content-Type application/json, User-Agent Service-Webhooks/1.0 and the four
// X-Service- headers (DefaultHeaderPrefix), signed with Sign. Each call fills
// an unset DeliveryID or Timestamp afresh.
func (td TestDelivery) Header() http.Header {
	id := td.DeliveryID
	if id == "" {
		id = rand.Text()
	}
	at := td.Timestamp
	if at.IsZero() {
		at = time.Now()
	}
	ts, sig := Sign(td.Secret, at, td.Body)
	return http.Header{
		"Content-Type":  {"application/json"},
		"User-Agent":    {userAgent},
		HeaderEvent:     {string(td.Type)},
		HeaderDelivery:  {id},
		HeaderTimestamp: {ts},
		HeaderSignature: {sig},
	}
}

// Request returns a POST of the delivery to url with the headers of Header,
// ready for a handler's ServeHTTP (url may then be a path such as
// "/webhooks") or for an http.Client. It fails only when url does not parse.
func (td TestDelivery) Request(url string) (*http.Request, error) {
	r, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(td.Body))
	if err != nil {
		return nil, fmt.Errorf("webhooks: test delivery request: %w", err)
	}
	r.Header = td.Header()
	return r, nil
}
