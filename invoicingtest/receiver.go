package invoicingtest

import (
	"context"
	"net/http/httptest"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// A ReceiverOption configures a receiver started by NewReceiver.
type ReceiverOption func(*receiverConfig)

type receiverConfig struct {
	events  []webhooks.EventType
	handler []webhooks.HandlerOption
}

// Subscribe makes the receiver's endpoint receive only the given events
// (every event of AllEvents without this option). NewReceiver panics on an
// event type outside AllEvents.
func Subscribe(events ...webhooks.EventType) ReceiverOption {
	return func(c *receiverConfig) { c.events = append(c.events, events...) }
}

// WithHandlerOptions passes opts to webhooks.Handler, for the receiver to
// de-duplicate (webhooks.WithDeduper) or log (webhooks.WithLogger) as yours
// does.
func WithHandlerOptions(opts ...webhooks.HandlerOption) ReceiverOption {
	return func(c *receiverConfig) { c.handler = append(c.handler, opts...) }
}

// NewReceiver starts a webhook receiver on a loopback address and makes it
// a webhook endpoint of the business, in one call, and returns the
// endpoint. The receiver runs webhooks.Handler with fn, verifying each
// delivery with the endpoint's signing secret and measuring the timestamp
// tolerance on the server's Clock (so deliveries signed on a FakeClock are
// accepted), so fn receives each delivery with its typed event
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
// A handler of your own that needs the secret to be built follows the same
// steps: take a listener's address for the endpoint's URL, then build the
// handler with the endpoint's secret and start serving:
//
//	ts := httptest.NewUnstartedServer(nil)
//	ep := srv.AddWebhookEndpoint("http://" + ts.Listener.Addr().String() + "/webhooks")
//	ts.Config.Handler = myapp.NewWebhookHandler(ep.Secret())
//	ts.Start()
//	defer ts.Close()
func (s *Server) NewReceiver(fn func(ctx context.Context, d *webhooks.Delivery) error, opts ...ReceiverOption) *WebhookEndpoint {
	if fn == nil {
		panic("invoicingtest: NewReceiver needs a function")
	}
	var cfg receiverConfig
	for _, o := range opts {
		o(&cfg)
	}
	events := subscription("NewReceiver", cfg.events) // panics before anything is started
	ts := httptest.NewUnstartedServer(nil)
	ep := s.addEndpoint("http://"+ts.Listener.Addr().String()+"/webhooks", events)
	v, err := webhooks.NewVerifier(ep.Secret(), webhooks.WithClock(s.clock.Now))
	if err != nil {
		panic("invoicingtest: NewReceiver: " + err.Error()) // the secret is 64 hex characters
	}
	ts.Config.Handler = webhooks.Handler(v, fn, cfg.handler...)
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
