package invoicingtest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BasePath is the path prefix under which the API is mounted, as in the real
// service's base URL. Server.URL already ends with it.
const BasePath = "/api/v1/external"

// Server is an in-memory fake of the Invoicing Service External API, served
// over HTTP on a loopback address. It holds one seeded business (the Seed*
// ids), answers every documented endpoint under BasePath,
// delivers signed webhooks to the endpoints registered with
// AddWebhookEndpoint, and offers helpers for what the API cannot do (send,
// view and accept quotes, record payments, inject faults). All methods are
// safe for concurrent use.
type Server struct {
	// URL is the API's base URL, including BasePath and without a trailing
	// slash, e.g. http://127.0.0.1:41234/api/v1/external.
	URL string
	// FullKey is an API key with every scope.
	FullKey string
	// ReadOnlyKey is an API key with only the :read scopes.
	ReadOnlyKey string

	ts            *httptest.Server
	root          string // scheme://host:port, for the admin and share links
	clock         Clock
	webhookClient *http.Client
	control       bool                    // serve the control endpoints (WithControl)
	latency       atomic.Pointer[latency] // never nil
	waiting       atomic.Int64            // requests waiting for their latency now

	mu         sync.Mutex // guards everything below
	data       store
	keys       map[string]map[string]bool
	conversion QuoteConversion
	faults     []*activeFault
	requests   []Request
	events     []*raisedEvent
	endpoints  []*WebhookEndpoint
	receivers  []*httptest.Server // started by NewReceiver, closed by Close
	closed     bool
}

// Option configures a Server in NewServer.
type Option func(*config)

type config struct {
	clock         Clock
	conversion    QuoteConversion
	webhookClient *http.Client
	latency       latency
	listener      net.Listener // nil: a new loopback listener
	control       bool
}

// WithClock makes the server read time from c (default SystemClock). Pass a
// *FakeClock to control "today" and to run webhook retries with Advance.
func WithClock(c Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithQuoteConversion sets the business's on-acceptance rule for quotes
// (default ConvertToDraftInvoice). SetQuoteConversion changes it later.
func WithQuoteConversion(m QuoteConversion) Option {
	return func(cfg *config) { cfg.conversion = m }
}

// WithWebhookClient sets the HTTP client that delivers webhooks. The default
// has a 30-second timeout, the response time the service recommends to
// receivers; a delivery that times out counts as failed and is retried.
func WithWebhookClient(c *http.Client) Option {
	return func(cfg *config) { cfg.webhookClient = c }
}

// NewServer starts a fake server on a loopback address (or on the listener
// given with WithListener) with the seed data loaded. Call Close when done;
// in a test, NewTestServer does that for you.
func NewServer(opts ...Option) *Server {
	cfg := config{
		clock:         SystemClock{},
		conversion:    ConvertToDraftInvoice,
		webhookClient: &http.Client{Timeout: 30 * time.Second},
	}
	for _, o := range opts {
		o(&cfg)
	}
	s := &Server{
		clock:         cfg.clock,
		conversion:    cfg.conversion,
		webhookClient: cfg.webhookClient,
		control:       cfg.control,
		keys:          map[string]map[string]bool{},
	}
	s.latency.Store(&cfg.latency)
	s.FullKey = s.NewAPIKey(AllScopes()...)
	s.ReadOnlyKey = s.NewAPIKey(ReadScopes()...)
	s.seed()
	s.ts = httptest.NewUnstartedServer(s.handler())
	if cfg.listener != nil {
		s.ts.Listener.Close()
		s.ts.Listener = cfg.listener
	}
	s.ts.Start()
	s.root = rootURL(s.ts.Listener.Addr())
	s.URL = s.root + BasePath
	return s
}

// NewTestServer starts a server like NewServer and closes it when tb and
// its subtests finish:
//
//	srv := invoicingtest.NewTestServer(t)
//	c := srv.Client()
func NewTestServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := NewServer(opts...)
	tb.Cleanup(s.Close)
	return s
}

// Close shuts the server down, cancels pending webhook retries and blocks
// until outstanding requests finish, then closes the receivers NewReceiver
// started. Calling it more than once is harmless.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for _, ep := range s.endpoints {
		ep.stopTimers()
	}
	receivers := s.receivers
	s.receivers = nil
	s.mu.Unlock()
	s.ts.Close() // requests still running may deliver to the receivers
	for _, r := range receivers {
		r.Close()
	}
}

// BusinessID returns the id of the fake's single business (SeedBusinessID).
func (s *Server) BusinessID() string { return SeedBusinessID }

// Now returns the current time on the server's clock.
func (s *Server) Now() time.Time { return s.clock.Now() }

// now is the server's time in UTC, truncated to whole seconds as the API
// shows datetimes. Callers may hold s.mu.
func (s *Server) now() time.Time { return s.clock.Now().UTC().Truncate(time.Second) }

// today is the business's current date (UTC).
func (s *Server) today() time.Time { return dateOf(s.now()) }
