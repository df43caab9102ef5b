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
	// X-Service-Timestamp sent, except on an *OffsetClock: its deliveries
	// are signed with the wall time (time.Now), which is what a receiver
	// checks the timestamp against, however far the clock was advanced.
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
// its handle with a signing secret: the business's WebhookSecret when set,
// else a new 64-hex-character one. It panics on an event type outside
// AllEvents, which is a mistake in the test's setup.
func (s *Server) AddWebhookEndpoint(url string, events ...webhooks.EventType) *WebhookEndpoint {
	return s.addEndpoint(url, subscription("AddWebhookEndpoint", events), s.newEndpointSecret())
}

// SetWebhookSecret makes secret the business's webhook secret: the one its
// endpoints added later without a secret of their own sign with
// (AddWebhookEndpoint, NewReceiver and NewHandlerReceiver without
// WithSecret, POST /_mock/webhooks without "secret"), so that one receiver
// configuration serves every endpoint of the business. Endpoints that exist
// keep their secrets. "" goes back to a new secret for each endpoint, the
// default of a server made by NewServer; each business of a MultiServer
// starts with a secret of its own. It panics unless secret is "" or 64
// hexadecimal characters.
func (s *Server) SetWebhookSecret(secret string) {
	if secret != "" {
		mustBeSecret("SetWebhookSecret", secret)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhookSecret = secret
}

// WebhookSecret returns the business's webhook secret (see
// SetWebhookSecret), or "" when each new endpoint gets a secret of its own.
func (s *Server) WebhookSecret() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhookSecret
}

// newEndpointSecret is the secret of an endpoint added without one: the
// business's webhook secret, else a new one.
func (s *Server) newEndpointSecret() string {
	if secret := s.WebhookSecret(); secret != "" {
		return secret
	}
	return randomHex(32)
}

// AddWebhookEndpointWithSecret registers a webhook endpoint like
// AddWebhookEndpoint, signing with the secret the caller chose instead of a
// new one, so that a handler configured with that secret can be built
// before the endpoint exists. It panics unless secret is 64 hexadecimal
// characters (the service's format), or on an event type outside
// AllEvents.
func (s *Server) AddWebhookEndpointWithSecret(url, secret string, events ...webhooks.EventType) *WebhookEndpoint {
	mustBeSecret("AddWebhookEndpointWithSecret", secret)
	return s.addEndpoint(url, subscription("AddWebhookEndpointWithSecret", events), secret)
}

// secretLength is the length of a signing secret: 64 hexadecimal
// characters (API.md 6.4 and 8).
const secretLength = 64

// validSecret reports whether secret is 64 hexadecimal characters (either
// case).
func validSecret(secret string) bool {
	if len(secret) != secretLength {
		return false
	}
	for _, c := range []byte(secret) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// mustBeSecret panics, naming the caller, unless secret is a valid signing
// secret.
func mustBeSecret(caller, secret string) {
	if !validSecret(secret) {
		panic(fmt.Sprintf("invoicingtest: %s: a signing secret is %d hexadecimal characters, got %d characters", caller, secretLength, len(secret)))
	}
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
// at url, signing with secret.
func (s *Server) addEndpoint(url string, events map[webhooks.EventType]bool, secret string) *WebhookEndpoint {
	ep := &WebhookEndpoint{s: s, id: uuid.NewString(), url: url, secret: secret, events: events}
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
	ep.setSecret(secret)
	return secret
}

// setSecret replaces the signing secret, as RotateSecret does.
func (ep *WebhookEndpoint) setSecret(secret string) {
	ep.s.mu.Lock()
	defer ep.s.mu.Unlock()
	ep.secret = secret
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
	d, err := ep.test()
	if err != nil {
		return Delivery{}, err
	}
	return ep.s.snapshot(d), nil
}

// test sends a test delivery and returns it once attempted.
func (ep *WebhookEndpoint) test() (*delivery, error) {
	s := ep.s
	s.mu.Lock()
	if ep.deleted || ep.paused {
		s.mu.Unlock()
		if ep.deleted {
			return nil, ErrDeleted
		}
		return nil, ErrPaused
	}
	ev := s.newEvent(webhooks.EventTest, jsonobj.Object{
		{Key: "event", Value: webhooks.EventTest},
		{Key: "timestamp", Value: formatTime(s.now())},
		{Key: "message", Value: "This is a test webhook delivery."},
		{Key: "business_id", Value: s.businessID},
	})
	if ev.err != nil {
		s.mu.Unlock()
		return nil, ev.err
	}
	d := ep.newDelivery(ev)
	ep.attemptOnce(d)
	return d, nil
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
	ep.attemptOnce(d)
	return s.snapshot(d), nil
}

// attemptOnce makes one attempt of d, never retried. The caller holds s.mu;
// attemptOnce releases it.
func (ep *WebhookEndpoint) attemptOnce(d *delivery) {
	d.noRetry = true
	ep.s.mu.Unlock()
	ep.s.attempt(ep, d)
}

// snapshot copies the delivery for callers.
func (s *Server) snapshot(d *delivery) Delivery {
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

// act makes a change under s.mu, then publishes the events it raised and
// reports them; nothing is published when change fails. The caller must
// not hold s.mu.
func (s *Server) act(change func() ([]event, error)) ([]ControlEventReport, error) {
	s.mu.Lock()
	events, err := change()
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return s.publish(events...), nil
}

// publish records events and delivers each to every subscribed, active
// endpoint, synchronously and in order: when publish returns, every first
// attempt has been made. It reports each event published with its
// deliveries as they stand after their first attempts. The caller must not
// hold s.mu. An event whose payload could not be encoded (a mistake in the
// fake) makes publish panic before anything is published; as s.mu is not
// held, the server goes on serving and Close still returns.
func (s *Server) publish(events ...event) []ControlEventReport {
	for _, ev := range events {
		if ev.err != nil {
			panic(ev.err)
		}
	}
	reports := make([]ControlEventReport, 0, len(events))
	for _, ev := range events {
		if ev.name == "" {
			continue
		}
		s.mu.Lock()
		raised := &raisedEvent{event: ev, seq: len(s.events) + 1}
		s.events = append(s.events, raised)
		for _, ep := range s.endpoints {
			if !ep.paused && ep.Subscribed(ev.name) {
				raised.sent = append(raised.sent, sentDelivery{ep, ep.newDelivery(ev)})
			}
		}
		s.mu.Unlock()
		for _, sd := range raised.sent {
			s.attempt(sd.ep, sd.d)
		}
		s.mu.Lock()
		reports = append(reports, raised.report())
		s.mu.Unlock()
	}
	return reports
}

// raisedEvent is an event the server published, numbered from 1 in the
// order published, with the deliveries it made.
type raisedEvent struct {
	event
	seq  int
	sent []sentDelivery // guarded by s.mu once published
}

// sentDelivery is a delivery made to an endpoint.
type sentDelivery struct {
	ep *WebhookEndpoint
	d  *delivery
}

// report describes the event and its deliveries now. The caller holds s.mu.
func (e *raisedEvent) report() ControlEventReport {
	r := ControlEventReport{Type: e.name, Deliveries: make([]ControlDelivery, 0, len(e.sent))}
	for _, sd := range e.sent {
		r.Deliveries = append(r.Deliveries, sd.d.report(sd.ep))
	}
	return r
}

// report describes the delivery to ep now. The caller holds s.mu.
func (d *delivery) report(ep *WebhookEndpoint) ControlDelivery {
	r := ControlDelivery{DeliveryID: d.id, EndpointID: ep.id, URL: ep.url, Status: d.status}
	if n := len(d.attempts); n > 0 {
		r.StatusCode, r.Error = d.attempts[n-1].StatusCode, d.attempts[n-1].Error
	}
	return r
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

	td := webhooks.TestDelivery{Secret: secret, Type: d.event, DeliveryID: d.id, Timestamp: s.signingTime(at), Body: d.body}
	code, err := s.post(url, td)

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

// signingTime is the X-Service-Timestamp of an attempt made at at on the
// server's clock: at itself, or the wall time on an *OffsetClock, whose
// advanced time a receiver would refuse as too far in the future.
func (s *Server) signingTime(at time.Time) time.Time {
	if _, ok := s.clock.(*OffsetClock); ok {
		return time.Now()
	}
	return at
}

// signingNow is the current time on the clock deliveries are signed with.
func (s *Server) signingNow() time.Time { return s.signingTime(s.clock.Now()) }

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
