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

	ts            *httptest.Server // nil for a business of a MultiServer
	h             http.Handler     // the API, under BasePath
	root          string           // scheme://host:port, for the admin and share links
	name          string           // the business's name in a MultiServer; "" alone
	businessID    string
	peers         []*Server // the businesses of its MultiServer, which share its clock; nil alone
	clock         Clock
	webhookClient *http.Client
	control       bool                    // serve the control endpoints (WithControl)
	latency       atomic.Pointer[latency] // never nil
	waiting       atomic.Int64            // requests waiting for their latency now

	mu            sync.Mutex // guards everything below
	data          store
	keys          map[string]map[string]bool
	webhookSecret string // what new endpoints sign with; "": a new secret each
	conversion    QuoteConversion
	faults        []*activeFault
	requests      []Request
	events        []*raisedEvent
	endpoints     []*WebhookEndpoint
	receivers     []*httptest.Server // started by NewReceiver, closed by Close
	closed        bool
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
	cfg := newConfig(opts)
	s := buildServer(cfg, "", SeedBusinessID, true)
	s.ts = serveHTTP(s.h, cfg.listener)
	s.setRoot(rootURL(s.ts.Listener.Addr()))
	s.ts.Start()
	return s
}

// newConfig applies opts to the defaults.
func newConfig(opts []Option) config {
	cfg := config{
		clock:         SystemClock{},
		conversion:    ConvertToDraftInvoice,
		webhookClient: &http.Client{Timeout: 30 * time.Second},
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// buildServer makes the business named name (with id businessID), with its
// seed data and, when withKeys, its FullKey and ReadOnlyKey, and its
// handler; it serves nothing yet.
func buildServer(cfg config, name, businessID string, withKeys bool) *Server {
	s := &Server{
		name:          name,
		businessID:    businessID,
		clock:         cfg.clock,
		conversion:    cfg.conversion,
		webhookClient: cfg.webhookClient,
		control:       cfg.control,
		keys:          map[string]map[string]bool{},
	}
	s.latency.Store(&cfg.latency)
	if withKeys {
		s.FullKey = s.NewAPIKey(AllScopes()...)
		s.ReadOnlyKey = s.NewAPIKey(ReadScopes()...)
	}
	s.seed()
	s.h = s.handler()
	return s
}

// serveHTTP returns an unstarted server of h on l, or on a new loopback
// listener when l is nil.
func serveHTTP(h http.Handler, l net.Listener) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	if l != nil {
		ts.Listener.Close()
		ts.Listener = l
	}
	return ts
}

// setRoot sets the scheme://host:port the server is reached at, and URL.
func (s *Server) setRoot(root string) {
	s.root = root
	s.URL = root + BasePath
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
// started. Calling it more than once is harmless. A business of a
// MultiServer is closed by the MultiServer's Close; closed alone, it stops
// its webhooks and receivers, and the MultiServer still passes it requests.
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
	if s.ts != nil {
		s.ts.Close() // requests still running may deliver to the receivers
	}
	for _, r := range receivers {
		r.Close()
	}
}

// BusinessID returns the id of the server's business: SeedBusinessID, or
// for a business of a MultiServer an id derived from its name (the same
// name always gives the same id).
func (s *Server) BusinessID() string { return s.businessID }

// BusinessName returns the name of the business in its MultiServer, or ""
// for a server made by NewServer.
func (s *Server) BusinessName() string { return s.name }

// Now returns the current time on the server's clock.
func (s *Server) Now() time.Time { return s.clock.Now() }

// now is the server's time in UTC, truncated to whole seconds as the API
// shows datetimes. Callers may hold s.mu.
func (s *Server) now() time.Time { return s.clock.Now().UTC().Truncate(time.Second) }

// today is the business's current date (UTC).
func (s *Server) today() time.Time { return dateOf(s.now()) }
