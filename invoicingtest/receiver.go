package invoicingtest

import (
	"context"
	"net/http"
	"net/http/httptest"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// A ReceiverOption configures a receiver started by NewReceiver or
// NewHandlerReceiver.
type ReceiverOption func(*receiverConfig)

type receiverConfig struct {
	events  []webhooks.EventType
	handler []webhooks.HandlerOption
	secret  string // "": the business's webhook secret, or a new one
}

// Subscribe makes the receiver's endpoint receive only the given events
// (every event of AllEvents without this option). NewReceiver and
// NewHandlerReceiver panic on an event type outside AllEvents.
func Subscribe(events ...webhooks.EventType) ReceiverOption {
	return func(c *receiverConfig) { c.events = append(c.events, events...) }
}

// WithHandlerOptions passes opts to webhooks.Handler, for the receiver to
// de-duplicate (webhooks.WithDeduper) or log (webhooks.WithLogger) as yours
// does. It is for NewReceiver only: NewHandlerReceiver runs your handler as
// it is, and panics if given this option.
func WithHandlerOptions(opts ...webhooks.HandlerOption) ReceiverOption {
	return func(c *receiverConfig) { c.handler = append(c.handler, opts...) }
}

// WithSecret makes the receiver's endpoint sign with secret, the one your
// handler was built with, instead of the business's webhook secret
// (SetWebhookSecret) or, without one, a new random secret. NewReceiver and
// NewHandlerReceiver panic unless secret is 64 hexadecimal characters, the
// service's format (see AddWebhookEndpointWithSecret).
func WithSecret(secret string) ReceiverOption {
	return func(c *receiverConfig) { c.secret = secret }
}

// NewReceiver starts a webhook receiver on a loopback address and makes it
// a webhook endpoint of the business, in one call, and returns the
// endpoint. The receiver runs webhooks.Handler with fn, verifying each
// delivery with the endpoint's signing secret and measuring the timestamp
// tolerance on the clock deliveries are signed with (the server's Clock, so
// deliveries signed on a FakeClock are accepted; the wall clock for an
// OffsetClock), so fn receives each delivery with its typed event
// (*webhooks.InvoiceCreated, *webhooks.QuoteAccepted, ...):
//
//	srv.NewReceiver(func(ctx context.Context, d *webhooks.Delivery) error {
//		if e, ok := d.Event.(*webhooks.InvoiceCreated); ok {
//			created = append(created, e.InvoiceNumber)
//		}
//		return nil
//	})
//
// Deliveries are synchronous: when the API call or helper that raised an
// event returns, fn has returned for it. An error from fn answers 500, and
// the delivery is retried on RetrySchedule by the server's Clock. The
// receiver keeps the secret it started with: after RotateSecret it refuses
// deliveries with 401, as a receiver not given the new secret would. It is
// closed by the server's Close. NewReceiver panics if fn is nil.
//
// To test an http.Handler of your own (built with the secret from your
// configuration), use NewHandlerReceiver with WithSecret instead.
func (s *Server) NewReceiver(fn func(ctx context.Context, d *webhooks.Delivery) error, opts ...ReceiverOption) *WebhookEndpoint {
	if fn == nil {
		panic("invoicingtest: NewReceiver needs a function")
	}
	cfg := s.receiverOptions("NewReceiver", opts)
	v, err := webhooks.NewVerifier(cfg.secret, webhooks.WithClock(s.signingNow))
	if err != nil {
		panic("invoicingtest: NewReceiver: " + err.Error()) // the secret is 64 hex characters
	}
	return s.startReceiver("NewReceiver", webhooks.Handler(v, fn, cfg.handler...), cfg)
}

// NewHandlerReceiver starts h on a loopback address, serving the path
// /webhooks, and makes it a webhook endpoint of the business, in one call,
// and returns the endpoint, as NewReceiver does for a function: h gets
// every delivery of the events chosen with Subscribe (all of them by
// default), signed with the secret given with WithSecret (without it, the
// business's WebhookSecret, or a new random one: read it with the
// endpoint's Secret, too late to build h with), before the API call or
// helper that raised the event returns. A non-2xx answer is retried on
// RetrySchedule by the server's Clock. The
// deliveries' X-Service-Timestamp is on the server's Clock (on a FakeClock,
// h's verifier must read that clock, webhooks.WithClock(srv.Now)), except
// on an OffsetClock, which signs with the wall time. The receiver is
// closed by the server's Close:
//
//	h := myapp.NewWebhookHandler(secret) // your handler, your secret
//	srv.NewHandlerReceiver(h, invoicingtest.WithSecret(secret))
//
// NewHandlerReceiver panics if h is nil, if given WithHandlerOptions (which
// configures the handler NewReceiver builds, not yours), on a secret that
// is not 64 hexadecimal characters and on an event type outside AllEvents.
func (s *Server) NewHandlerReceiver(h http.Handler, opts ...ReceiverOption) *WebhookEndpoint {
	if h == nil {
		panic("invoicingtest: NewHandlerReceiver needs a handler")
	}
	cfg := s.receiverOptions("NewHandlerReceiver", opts)
	if len(cfg.handler) > 0 {
		panic("invoicingtest: NewHandlerReceiver: WithHandlerOptions configures NewReceiver's handler; configure your own handler yourself")
	}
	return s.startReceiver("NewHandlerReceiver", h, cfg)
}

// receiverOptions applies opts and checks them, panicking (naming the
// caller) on an unknown event or a malformed secret before anything starts.
// A secret not given is the business's webhook secret, or a new one.
func (s *Server) receiverOptions(caller string, opts []ReceiverOption) receiverConfig {
	var cfg receiverConfig
	for _, o := range opts {
		o(&cfg)
	}
	subscription(caller, cfg.events)
	if cfg.secret == "" {
		cfg.secret = s.newEndpointSecret()
	}
	mustBeSecret(caller, cfg.secret)
	return cfg
}

// startReceiver serves h on a new loopback server at /webhooks, registers
// it as an endpoint as cfg says, and has the server's Close close it.
func (s *Server) startReceiver(caller string, h http.Handler, cfg receiverConfig) *WebhookEndpoint {
	ts := httptest.NewUnstartedServer(h)
	ep := s.addEndpoint("http://"+ts.Listener.Addr().String()+"/webhooks", subscription(caller, cfg.events), cfg.secret)
	ts.Start()

	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.receivers = append(s.receivers, ts)
	}
	s.mu.Unlock()
	if closed {
		ts.Close()
	}
	return ep
}
