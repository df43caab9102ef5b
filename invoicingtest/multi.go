package invoicingtest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/uuid"
)

// MultiServer is several fake businesses behind one base URL, as the
// service serves every business: a request goes to the business whose API
// key it carries, so a key of one business never reaches another's data.
// Each business is a *Server of its own (Business), with its seed data, API
// keys, webhook endpoints, webhook secret, faults and request log, whose
// URL is the MultiServer's. A request with a key no business holds, or
// none, is answered as the service answers it: 401 (404 for a path the API
// does not have). The control endpoints (WithControl) act on the business
// of the key they are called with. All methods are safe for concurrent use.
type MultiServer struct {
	// URL is the base URL of every business, including BasePath and
	// without a trailing slash.
	URL string

	ts         *httptest.Server
	businesses []*Server
	byName     map[string]*Server
	nobody     *Server // a business without keys: answers the requests no business's key chose
	closeOnce  sync.Once

	mu    sync.Mutex
	byKey map[string]*Server // a key, and the business that held it when last seen
}

// NewMultiServer starts one fake business per name behind one base URL on a
// loopback address (or on the listener given with WithListener). The other
// options apply to every business: they share one Clock, as businesses
// share time, so that a FakeClock's Advance moves every business's "today"
// (and the control endpoints' clock advance, through any business's key,
// also expires every business's quotes past valid_until). Each
// business starts with the seed data (the same Seed* ids in each, as the
// ids of different businesses never meet), API keys of its own, a webhook
// secret of its own (Server.WebhookSecret), and a BusinessID derived from
// its name. Call Close when done; in a test, NewTestMultiServer does that.
// It panics when names is empty, or holds "" or a name twice: a mistake in
// the test's setup.
func NewMultiServer(names []string, opts ...Option) *MultiServer {
	if len(names) == 0 {
		panic("invoicingtest: NewMultiServer needs at least one business name")
	}
	cfg := newConfig(opts)
	m := &MultiServer{byName: map[string]*Server{}, byKey: map[string]*Server{}}
	for _, name := range names {
		switch {
		case name == "":
			panic("invoicingtest: NewMultiServer: a business name is empty")
		case m.byName[name] != nil:
			panic("invoicingtest: NewMultiServer: business " + name + " is named twice")
		}
		b := buildServer(cfg, name, businessID(name), true)
		b.webhookSecret = randomHex(32)
		m.businesses = append(m.businesses, b)
		m.byName[name] = b
	}
	for _, b := range m.businesses {
		b.peers = m.businesses
	}
	m.nobody = buildServer(cfg, "", "", false)
	m.ts = serveHTTP(http.HandlerFunc(m.route), cfg.listener)
	root := rootURL(m.ts.Listener.Addr())
	for _, b := range append(m.Businesses(), m.nobody) {
		b.setRoot(root)
	}
	m.URL = root + BasePath
	m.ts.Start()
	return m
}

// NewTestMultiServer starts businesses like NewMultiServer and closes them
// when tb and its subtests finish:
//
//	m := invoicingtest.NewTestMultiServer(t, []string{"acme", "globex"})
//	acme := m.Business("acme").Client()
func NewTestMultiServer(tb testing.TB, names []string, opts ...Option) *MultiServer {
	tb.Helper()
	m := NewMultiServer(names, opts...)
	tb.Cleanup(m.Close)
	return m
}

// businessID is the id of the business named name: a UUID derived from
// the name, the same on every run.
func businessID(name string) string {
	return uuid.NewSHA1(uuid.MustParse(SeedBusinessID), []byte(name)).String()
}

// Business returns the business named name. It panics for a name the
// server was not started with, a mistake in the test.
func (m *MultiServer) Business(name string) *Server {
	b := m.byName[name]
	if b == nil {
		panic("invoicingtest: MultiServer has no business named " + name)
	}
	return b
}

// Businesses returns the businesses in the order they were named.
func (m *MultiServer) Businesses() []*Server {
	return append([]*Server(nil), m.businesses...)
}

// Close shuts the server down, blocking until outstanding requests finish,
// then closes every business as Server.Close does (pending webhook retries
// are cancelled, receivers closed). Calling it more than once is harmless.
func (m *MultiServer) Close() {
	m.closeOnce.Do(func() {
		m.ts.Close()
		for _, b := range m.businesses {
			b.Close()
		}
		m.nobody.Close()
	})
}

// route passes the request to the business whose API key it carries.
func (m *MultiServer) route(w http.ResponseWriter, r *http.Request) {
	m.owner(r).h.ServeHTTP(w, r)
}

// owner returns the business that holds the request's API key now, or
// m.nobody when none does.
func (m *MultiServer) owner(r *http.Request) *Server {
	key, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return m.nobody
	}
	m.mu.Lock()
	b := m.byKey[key]
	m.mu.Unlock()
	if b != nil && b.hasKey(key) {
		return b
	}
	for _, b := range m.businesses {
		if b.hasKey(key) {
			m.mu.Lock()
			m.byKey[key] = b
			m.mu.Unlock()
			return b
		}
	}
	return m.nobody
}
