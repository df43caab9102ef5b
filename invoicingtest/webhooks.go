package invoicingtest

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// RetrySchedule returns the documented retry schedule of webhook
// deliveries: after the first attempt fails, retries follow 1 minute,
// 5 minutes, 30 minutes, 2 hours and 24 hours after the previous attempt.
// A delivery whose fifth retry (sixth attempt) fails is marked failed.
func RetrySchedule() []time.Duration {
	return []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 24 * time.Hour}
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"   // not yet succeeded; a retry is scheduled or held by a pause
	DeliverySucceeded = "succeeded" // an attempt got a 2xx response
	DeliveryFailed    = "failed"    // every attempt failed; Retry may try once more
)

// WebhookEndpoint is a webhook endpoint of the business, as configured in
// the service's user interface: a destination URL, the subscribed events
// and a signing secret. Its methods are safe for concurrent use.
type WebhookEndpoint struct {
	s      *Server
	id     string
	url    string
	events map[webhooks.EventType]bool // nil: every event

	// guarded by s.mu
	secret     string
	paused     bool
	deleted    bool
	deliveries []*delivery
}

// delivery is one event sent to one endpoint, with its attempts.
type delivery struct {
	id       string
	event    webhooks.EventType
	body     []byte
	status   string
	attempts []Attempt
	next     time.Time // when the scheduled retry is due; zero if none
	timer    Timer
	held     bool // a retry came due while the endpoint was paused
	inFlight bool
	noRetry  bool // test deliveries and manual retries are tried once
}

// Delivery is a snapshot of one delivery of an event to an endpoint.
type Delivery struct {
	// ID is the X-Service-Delivery value, the same on every attempt.
	ID string
	// Event is the X-Service-Event value.
	Event webhooks.EventType
	// Body is the exact request body, the same on every attempt.
	Body []byte
	// Status is DeliveryPending, DeliverySucceeded or DeliveryFailed.
	Status string
	// Attempts lists the attempts made so far, oldest first.
	Attempts []Attempt
	// NextRetryAt is when the next retry is due; zero when none is scheduled.
	NextRetryAt time.Time
}

// Attempt is one HTTP POST of a delivery.
type Attempt struct {
	// Number is 1 for the first attempt, 2 for the first retry, and so on.
	Number int
	// At is when the attempt was made, on the server's clock; it is also the
	// X-Service-Timestamp sent.
	At time.Time
	// StatusCode is the receiver's HTTP status, or 0 when no response came
	// (connection refused, timeout).
	StatusCode int
	// Error describes a failure to get a response; empty otherwise.
	Error string
	// NextRetryAt is when the retry this failure scheduled is due; zero when
	// the attempt succeeded or no retry follows.
	NextRetryAt time.Time
}

// AddWebhookEndpoint registers a webhook endpoint that receives the given
// events (every event of AllEvents when none is given) at url, and returns
// its handle with a new 64-hex-character signing secret. It panics on an
// event type outside AllEvents, which is a mistake in the test's setup.
func (s *Server) AddWebhookEndpoint(url string, events ...webhooks.EventType) *WebhookEndpoint {
	return s.addEndpoint(url, subscription("AddWebhookEndpoint", events))
}

// subscription returns the set of events, nil for every event. It panics,
// naming the caller, on an event type outside AllEvents.
func subscription(caller string, events []webhooks.EventType) map[webhooks.EventType]bool {
	if len(events) == 0 {
		return nil
	}
	set := map[webhooks.EventType]bool{}
	known := AllEvents()
	for _, e := range events {
		if !slices.Contains(known, e) {
			panic(fmt.Sprintf("invoicingtest: %s: unknown event %q", caller, e))
		}
		set[e] = true
	}
	return set
}

// addEndpoint registers an endpoint receiving events (nil for every event)
// at url.
func (s *Server) addEndpoint(url string, events map[webhooks.EventType]bool) *WebhookEndpoint {
	ep := &WebhookEndpoint{s: s, id: uuid.NewString(), url: url, secret: randomHex(32), events: events}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endpoints = append(s.endpoints, ep)
	return ep
}

// ID returns the endpoint's id.
func (ep *WebhookEndpoint) ID() string { return ep.id }

// URL returns the destination URL.
func (ep *WebhookEndpoint) URL() string { return ep.url }

// Secret returns the current signing secret: 64 lowercase hexadecimal
// characters, used as a UTF-8 string (not hex-decoded) for the HMAC key.
func (ep *WebhookEndpoint) Secret() string {
	ep.s.mu.Lock()
	defer ep.s.mu.Unlock()
	return ep.secret
}

// Subscribed reports whether the endpoint receives the event type.
func (ep *WebhookEndpoint) Subscribed(event webhooks.EventType) bool {
	return ep.events == nil || ep.events[event]
}

// Pause stops deliveries to the endpoint: events raised while paused are not
// delivered to it at all, and retries that come due are held until Resume.
func (ep *WebhookEndpoint) Pause() {
	ep.s.mu.Lock()
	defer ep.s.mu.Unlock()
	ep.paused = true
}

// Resume restarts deliveries and at once attempts the retries held while the
// endpoint was paused.
func (ep *WebhookEndpoint) Resume() {
	ep.s.mu.Lock()
	ep.paused = false
	var held []*delivery
	for _, d := range ep.deliveries {
		if d.held {
			d.held = false
			held = append(held, d)
		}
	}
	ep.s.mu.Unlock()
	for _, d := range held {
		ep.s.attempt(ep, d)
	}
}

// RotateSecret replaces the signing secret and returns the new one. The old
// secret is invalid immediately: every later attempt, retries included, is
// signed with the new one.
func (ep *WebhookEndpoint) RotateSecret() string {
	secret := randomHex(32)
	ep.s.mu.Lock()
	defer ep.s.mu.Unlock()
	ep.secret = secret
	return secret
}

// Delete removes the endpoint for good: it receives nothing more and its
// scheduled retries are cancelled. Its delivery log stays readable.
func (ep *WebhookEndpoint) Delete() {
	s := ep.s
	s.mu.Lock()
	defer s.mu.Unlock()
	ep.deleted = true
	ep.stopTimers()
	for i, other := range s.endpoints {
		if other == ep {
			s.endpoints = append(s.endpoints[:i], s.endpoints[i+1:]...)
			break
		}
	}
}

// Test sends a test delivery (event test, body {event, timestamp, message,
// business_id}) and returns it once attempted. Test deliveries are tried
// once, never retried. It returns ErrPaused or ErrDeleted, sending nothing,
// when the endpoint is paused or deleted.
func (ep *WebhookEndpoint) Test() (Delivery, error) {
	s := ep.s
	s.mu.Lock()
	if ep.deleted || ep.paused {
		s.mu.Unlock()
		if ep.deleted {
			return Delivery{}, ErrDeleted
		}
		return Delivery{}, ErrPaused
	}
	ev := s.newEvent(webhooks.EventTest, jsonobj.Object{
		{Key: "event", Value: webhooks.EventTest},
		{Key: "timestamp", Value: formatTime(s.now())},
		{Key: "message", Value: "This is a test webhook delivery."},
		{Key: "business_id", Value: SeedBusinessID},
	})
	if ev.err != nil {
		s.mu.Unlock()
		return Delivery{}, ev.err
	}
	return ep.attemptOnce(ep.newDelivery(ev)), nil
}

// Retry makes one more attempt of a failed delivery, as the "retry" button
// of the webhook details page does, and returns the delivery afterwards. A
// failed manual retry leaves the delivery failed without scheduling more.
func (ep *WebhookEndpoint) Retry(deliveryID string) (Delivery, error) {
	s := ep.s
	s.mu.Lock()
	var d *delivery
	for _, x := range ep.deliveries {
		if x.id == deliveryID {
			d = x
		}
	}
	switch {
	case ep.deleted:
		s.mu.Unlock()
		return Delivery{}, ErrDeleted
	case d == nil:
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("invoicingtest: no delivery %s on this endpoint", deliveryID)
	case d.status != DeliveryFailed:
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("invoicingtest: delivery %s is %s, only failed deliveries can be retried", deliveryID, d.status)
	}
	d.status = DeliveryPending
	return ep.attemptOnce(d), nil
}

// attemptOnce makes one attempt of d, never retried, and returns d after
// it. The caller holds s.mu; attemptOnce releases it.
func (ep *WebhookEndpoint) attemptOnce(d *delivery) Delivery {
	s := ep.s
	d.noRetry = true
	s.mu.Unlock()
	s.attempt(ep, d)
	s.mu.Lock()
	defer s.mu.Unlock()
	return d.snapshot()
}

// Deliveries returns the endpoint's deliveries, oldest first, with their
// attempts.
func (ep *WebhookEndpoint) Deliveries() []Delivery {
	ep.s.mu.Lock()
	defer ep.s.mu.Unlock()
	out := make([]Delivery, 0, len(ep.deliveries))
	for _, d := range ep.deliveries {
		out = append(out, d.snapshot())
	}
	return out
}

// newDelivery records a new pending delivery of ev. The caller holds s.mu.
func (ep *WebhookEndpoint) newDelivery(ev event) *delivery {
	d := &delivery{id: uuid.NewString(), event: ev.name, body: ev.body, status: DeliveryPending}
	ep.deliveries = append(ep.deliveries, d)
	return d
}

// stopTimers cancels scheduled retries. The caller holds s.mu.
func (ep *WebhookEndpoint) stopTimers() {
	for _, d := range ep.deliveries {
		if d.timer != nil {
			d.timer.Stop()
			d.timer = nil
			d.next = time.Time{}
		}
	}
}

// snapshot copies the delivery for callers. The caller holds s.mu.
func (d *delivery) snapshot() Delivery {
	return Delivery{
		ID: d.id, Event: d.event, Body: bytes.Clone(d.body), Status: d.status,
		Attempts: append([]Attempt(nil), d.attempts...), NextRetryAt: d.next,
	}
}

// publish records events and delivers each to every subscribed, active
// endpoint, synchronously and in order: when publish returns, every first
// attempt has been made. The caller must not hold s.mu. An event whose
// payload could not be encoded (a mistake in the fake) makes publish panic
// before anything is published; as s.mu is not held, the server goes on
// serving and Close still returns.
func (s *Server) publish(events ...event) {
	type job struct {
		ep *WebhookEndpoint
		d  *delivery
	}
	for _, ev := range events {
		if ev.err != nil {
			panic(ev.err)
		}
	}
	for _, ev := range events {
		if ev.name == "" {
			continue
		}
		s.mu.Lock()
		s.events = append(s.events, ev)
		var jobs []job
		for _, ep := range s.endpoints {
			if !ep.paused && ep.Subscribed(ev.name) {
				jobs = append(jobs, job{ep, ep.newDelivery(ev)})
			}
		}
		s.mu.Unlock()
		for _, j := range jobs {
			s.attempt(j.ep, j.d)
		}
	}
}

// attempt makes one delivery attempt, records it and, when it fails,
// schedules the next retry on the server's clock (or marks the delivery
// failed). The caller must not hold s.mu.
func (s *Server) attempt(ep *WebhookEndpoint, d *delivery) {
	s.mu.Lock()
	if s.closed || ep.deleted || d.status != DeliveryPending || d.inFlight {
		s.mu.Unlock()
		return
	}
	if ep.paused {
		d.held = true
		d.timer = nil
		s.mu.Unlock()
		return
	}
	d.inFlight = true
	d.timer = nil
	d.next = time.Time{}
	secret, url := ep.secret, ep.url
	at := s.now()
	number := len(d.attempts) + 1
	s.mu.Unlock()

	code, err := s.post(url, webhooks.TestDelivery{Secret: secret, Type: d.event, DeliveryID: d.id, Timestamp: at, Body: d.body})

	s.mu.Lock()
	defer s.mu.Unlock()
	d.inFlight = false
	a := Attempt{Number: number, At: at, StatusCode: code}
	if err != nil {
		a.Error = err.Error()
	}
	schedule := RetrySchedule()
	switch {
	case err == nil && code >= 200 && code < 300:
		d.status = DeliverySucceeded
	case d.noRetry || number > len(schedule) || s.closed || ep.deleted:
		d.status = DeliveryFailed
	default:
		wait := schedule[number-1]
		d.next = at.Add(wait)
		a.NextRetryAt = d.next
		d.timer = s.clock.AfterFunc(wait, func() { s.attempt(ep, d) })
	}
	d.attempts = append(d.attempts, a)
}

// post sends one attempt, signed and with the headers of API.md 6.2, and
// returns the response status.
func (s *Server) post(url string, td webhooks.TestDelivery) (int, error) {
	req, err := td.Request(url)
	if err != nil {
		return 0, err
	}
	resp, err := s.webhookClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, nil
}
