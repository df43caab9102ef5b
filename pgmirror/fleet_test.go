package pgmirror_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// This file is the fake service with many businesses: a fleet is N fake
// businesses (one invoicingtest.Server each) behind one loopback base URL,
// requests being routed by their API key, as the real service scopes a
// request to the business owning its key. It uses only invoicingtest, the
// SDK (and decimal, which its API takes), webhooks, testify and the standard
// library, not pgmirror, so that it compiles whatever pgmirror's API is.
//
// The router talks to each business's Server over in-memory connections
// (net.Pipe, through a listener given with invoicingtest.WithListener), not
// over TCP: a thousand businesses then take no port and no file
// descriptor. The price is that Server.URL (http://bizNNNN.fleet.invalid)
// is reachable only through the router: send HTTP to fleet.URL, and call
// the Server's Go helpers (SendInvoice, RecordPayment, ...) directly.

// fleetStart is the fleet clock's time when a fleet starts (the t0 of the
// other tests, repeated so that this file depends on none of them).
var fleetStart = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// fleetUnauthorized is the detail the service (and invoicingtest) answers a
// missing or unknown API key with, in a 401.
const fleetUnauthorized = "Invalid or missing API key"

// fleet is N fake businesses behind one base URL, requests being routed by
// their API key. The exported fields are set by newFleet and read-only
// after.
type fleet struct {
	// URL is the base URL of every business, including
	// invoicingtest.BasePath and without a trailing slash, on a loopback
	// address.
	URL string
	// Clock is the FakeClock every business reads time from (one clock for
	// the fleet: Advance moves every business's "today" and runs every
	// business's webhook retries that fall due).
	Clock *invoicingtest.FakeClock
	// Businesses are the fleet's businesses, named biz0000, biz0001, ...
	// in this order.
	Businesses []*fleetBusiness

	byName map[string]*fleetBusiness
	pipes  map[string]*fleetListener // by host name of Server.URL
	base   time.Duration             // latency added to every request
	jitter time.Duration             // and a uniform extra in [0, jitter]
	// abandoned counts the requests whose client went away during the
	// latency: their Server never saw them.
	abandoned atomic.Int64

	mu    sync.RWMutex
	byKey map[string]*fleetBusiness // every key the router passes on
}

// fleetBusiness is one business of a fleet.
type fleetBusiness struct {
	// Name is the business's name in the fleet, e.g. "biz0007".
	Name string
	// Srv is the business's fake. Its URL is reachable only through the
	// fleet's router (in-memory connections); use its Go helpers to change
	// data, and fleet.URL with Key for HTTP. Its BusinessID, and the ids of
	// its seed data (invoicingtest.Seed*), are the same in every business:
	// invoicingtest has one business per Server and fixed seed ids.
	Srv *invoicingtest.Server
	// Key is an API key of this business with every scope (Srv.FullKey).
	// The router also passes on Srv.ReadOnlyKey and the keys NewKey mints.
	Key string
	// Clock is the fleet's clock (fleet.Clock), shared by every business.
	Clock *invoicingtest.FakeClock

	fleet *fleet
	proxy *httputil.ReverseProxy

	mu      sync.Mutex
	times   []time.Time // arrival of each request, wall clock
	limited []time.Time // arrival of each request answered 429 by Limit
	limit   float64     // Limit's requests per second; 0: none
	tokens  float64     // Limit's bucket
	at      time.Time   // when tokens was counted
	status  int         // answer every request with this status; 0: serve
}

// fleetConfig is what fleetOptions set.
type fleetConfig struct {
	base, jitter time.Duration
	seed         func(b *fleetBusiness)
	clock        *invoicingtest.FakeClock
}

// fleetOption configures newFleet.
type fleetOption func(*fleetConfig)

// withFleetLatency makes the router wait base plus a uniform extra in [0,
// jitter] before answering each API request (the answer of a failing or
// unknown key included), as invoicingtest.WithLatency does for one
// business: requests wait in parallel, and one whose client goes away
// meanwhile is dropped (it still counts in Requests). Webhook deliveries
// are not delayed.
func withFleetLatency(base, jitter time.Duration) fleetOption {
	return func(c *fleetConfig) { c.base, c.jitter = base, jitter }
}

// withFleetSeed makes newFleet call seed for each business, in order, once
// the business exists and before the router serves; seed runs on the test's
// goroutine, so it may use require.
func withFleetSeed(seed func(b *fleetBusiness)) fleetOption {
	return func(c *fleetConfig) { c.seed = seed }
}

// withFleetClock makes every business read time from clock instead of a
// new FakeClock at fleetStart.
func withFleetClock(clock *invoicingtest.FakeClock) fleetOption {
	return func(c *fleetConfig) { c.clock = clock }
}

// newFleet starts n (at least 1) fake businesses behind one router on a
// loopback address, closed with the test.
func newFleet(t testing.TB, n int, opts ...fleetOption) *fleet {
	t.Helper()
	require.Positive(t, n, "a fleet has at least one business")
	cfg := fleetConfig{}
	for _, o := range opts {
		o(&cfg)
	}
	require.False(t, cfg.base < 0 || cfg.jitter < 0, "a latency is not negative")
	if cfg.clock == nil {
		cfg.clock = invoicingtest.NewFakeClock(fleetStart)
	}
	f := &fleet{
		Clock:  cfg.clock,
		byKey:  make(map[string]*fleetBusiness, n),
		byName: make(map[string]*fleetBusiness, n),
		pipes:  make(map[string]*fleetListener, n),
		base:   cfg.base,
		jitter: cfg.jitter,
	}
	transport := &http.Transport{
		DialContext:         f.dial,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     time.Minute,
	}
	buffers := &fleetBuffers{}
	for i := range n {
		name := fmt.Sprintf("biz%04d", i)
		host := name + ".fleet.invalid" // .invalid never resolves (RFC 6761)
		l := newFleetListener(host)
		srv := invoicingtest.NewTestServer(t, invoicingtest.WithClock(f.Clock), invoicingtest.WithListener(l))
		target, err := url.Parse("http://" + host)
		require.NoError(t, err)
		b := &fleetBusiness{Name: name, Srv: srv, Key: srv.FullKey, Clock: f.Clock, fleet: f}
		b.proxy = &httputil.ReverseProxy{
			Rewrite:    func(r *httputil.ProxyRequest) { r.SetURL(target) },
			Transport:  transport,
			BufferPool: buffers,
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				if r.Context().Err() == nil {
					fleetWriteDetail(w, http.StatusBadGateway, "fleet: "+err.Error())
				}
			},
		}
		f.Businesses = append(f.Businesses, b)
		f.byName[name] = b
		f.pipes[host] = l
	}
	t.Cleanup(transport.CloseIdleConnections) // after the router closes, before the servers
	for _, b := range f.Businesses {
		if cfg.seed != nil {
			cfg.seed(b)
		}
		b.Key = b.Srv.FullKey // after seeding: LoadState sets the keys
		f.byKey[b.Srv.FullKey], f.byKey[b.Srv.ReadOnlyKey] = b, b
	}
	router := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(router.Close) // first: no request reaches a closed server
	f.URL = router.URL + invoicingtest.BasePath
	return f
}

// Client returns an SDK client on f.URL whose own key is the first
// business's (pass invoicing.WithAPIKey per call for another business),
// with short retry waits so that 429s and 5xx do not slow the tests.
func (f *fleet) Client(t testing.TB) *invoicing.Client {
	t.Helper()
	c, err := invoicing.NewClient(f.URL, f.Businesses[0].Key, invoicing.WithRetryWait(5*time.Millisecond, 50*time.Millisecond))
	require.NoError(t, err)
	return c
}

// Business returns the business named name (e.g. "biz0007"). It panics for
// a name the fleet does not have, a mistake in the test.
func (f *fleet) Business(name string) *fleetBusiness {
	b := f.byName[name]
	if b == nil {
		panic("fleet: no business named " + strconv.Quote(name))
	}
	return b
}

// Requests returns how many API requests the router received with the key
// of business name, answered or not (failed, dropped while waiting for the
// latency).
func (f *fleet) Requests(name string) int {
	b := f.Business(name)
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.times)
}

// RequestTimes returns when (wall clock, not the fleet's Clock) each API
// request with the key of business name reached the router, oldest first,
// to measure a request rate against a budget.
func (f *fleet) RequestTimes(name string) []time.Time {
	b := f.Business(name)
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Time(nil), b.times...)
}

// Fail makes the router answer every later request of business name with
// status instead of passing it on: 429 with Retry-After: 1 and
// {"detail": "Rate limit exceeded"} as invoicingtest's RateLimitNext
// answers; 401 with the API's {"detail": "Invalid or missing API key"}, as
// for a revoked key; any other status with {"detail": its status text}.
// Fail(name, 0) serves the business again. It panics for a status that is
// neither 0 nor 400..599, or an unknown name.
func (f *fleet) Fail(name string, status int) {
	if status != 0 && (status < 400 || status > 599) {
		panic(fmt.Sprintf("fleet: Fail with status %d, want 0 or 400..599", status))
	}
	b := f.Business(name)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.status = status
}

// Limit makes the router answer a request of the business named name
// with 429 (and Retry-After: 1) when it comes faster than perSecond
// requests a second, as a service's rate limit does: a token bucket of a
// second's worth. 0 lifts the limit. Limited returns when it did.
func (f *fleet) Limit(name string, perSecond float64) {
	b := f.Business(name)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limit, b.tokens, b.at = perSecond, perSecond, time.Now()
}

// Limited returns the arrival of each request of the business named name
// that Limit answered 429.
func (f *fleet) Limited(name string) []time.Time {
	b := f.Business(name)
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.limited)
}

// overLimit takes a token of b's Limit bucket, and reports whether there
// was none (the request is answered 429). The caller holds b.mu.
func (b *fleetBusiness) overLimit(now time.Time) bool {
	if b.limit == 0 {
		return false
	}
	b.tokens = min(b.limit, b.tokens+b.limit*now.Sub(b.at).Seconds())
	b.at = now
	if b.tokens < 1 {
		b.limited = append(b.limited, now)
		return true
	}
	b.tokens--
	return false
}

// Subscribe adds a webhook endpoint of b delivering every event to url
// (e.g. receiverBase+"/webhooks/"+b.Name), signed with secret (64
// hexadecimal characters, else it panics), and returns it.
func (b *fleetBusiness) Subscribe(url, secret string) *invoicingtest.WebhookEndpoint {
	return b.Srv.AddWebhookEndpointWithSecret(url, secret)
}

// NewKey mints an API key of b with the given scopes (invoicingtest's
// NewAPIKey) and has the router pass it on to b, e.g. to rotate b's key.
// Srv.RevokeAPIKey revokes it: the router still passes it on, and b's
// Server answers 401.
func (b *fleetBusiness) NewKey(scopes ...string) string {
	key := b.Srv.NewAPIKey(scopes...)
	b.fleet.mu.Lock()
	defer b.fleet.mu.Unlock()
	b.fleet.byKey[key] = b
	return key
}

// serve is the router: it counts the request against the business of its
// key, waits for the latency, then answers 401 for an unknown key, the
// business's Fail status if set, else passes the request to its Server.
func (f *fleet) serve(w http.ResponseWriter, r *http.Request) {
	var b *fleetBusiness
	if key, ok := fleetBearer(r.Header.Get("Authorization")); ok {
		f.mu.RLock()
		b = f.byKey[key]
		f.mu.RUnlock()
	}
	status := 0
	if b != nil {
		b.mu.Lock()
		now := time.Now()
		b.times = append(b.times, now)
		status = b.status
		if status == 0 && b.overLimit(now) {
			status = http.StatusTooManyRequests
		}
		b.mu.Unlock()
	}
	if !f.wait(r.Context()) {
		f.abandoned.Add(1)
		return
	}
	switch {
	case b == nil || status == http.StatusUnauthorized:
		fleetWriteDetail(w, http.StatusUnauthorized, fleetUnauthorized)
	case status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		fleetWriteDetail(w, status, "Rate limit exceeded")
	case status != 0:
		fleetWriteDetail(w, status, http.StatusText(status))
	default:
		b.proxy.ServeHTTP(w, r)
	}
}

// wait sleeps for one request's latency; it reports false when ctx ended
// first.
func (f *fleet) wait(ctx context.Context) bool {
	d := f.base
	if f.jitter > 0 {
		d += rand.N(f.jitter + 1)
	}
	if d == 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// dial connects the router's transport to the Server whose URL names addr,
// in memory.
func (f *fleet) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	l := f.pipes[host]
	if l == nil {
		return nil, fmt.Errorf("fleet: no business at %s", addr)
	}
	return l.dial(ctx)
}

// fleetBearer extracts the key of an "Authorization: Bearer <key>" header
// (the scheme in any case, as invoicingtest reads it).
func fleetBearer(header string) (string, bool) {
	scheme, key, found := strings.Cut(header, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	key = strings.TrimSpace(key)
	return key, key != ""
}

// fleetWriteDetail writes the API's error body, {"detail": detail}.
func fleetWriteDetail(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"detail":%s}`, strconv.Quote(detail))
}

// fleetBuffers is the router's httputil.BufferPool: without one, each
// request it passes on allocates a 32 KiB copy buffer.
type fleetBuffers struct{ pool sync.Pool }

// Get returns a 32 KiB buffer.
func (p *fleetBuffers) Get() []byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, 32<<10)
}

// Put keeps b for a later Get.
func (p *fleetBuffers) Put(b []byte) { p.pool.Put(&b) }

// fleetListener is a net.Listener whose connections are the server ends of
// net.Pipe pairs made by dial.
type fleetListener struct {
	addr  fleetAddr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newFleetListener(host string) *fleetListener {
	return &fleetListener{addr: fleetAddr(host), conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for the next connection dial makes.
func (l *fleetListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept; connections already made stay open.
func (l *fleetListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the host name the Server's URL shows.
func (l *fleetListener) Addr() net.Addr { return l.addr }

// dial hands the server end of a new pipe to Accept and returns the client
// end.
func (l *fleetListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		err := errors.Join(net.ErrClosed, client.Close(), server.Close())
		return nil, err
	case <-ctx.Done():
		_, _ = client.Close(), server.Close()
		return nil, ctx.Err()
	}
}

// fleetAddr is a fleetListener's address: a host name.
type fleetAddr string

// Network names the kind of address.
func (fleetAddr) Network() string { return "pipe" }

// String is the host name.
func (a fleetAddr) String() string { return string(a) }

// seedBusiness adds to b, through SaveState and LoadState (the Go API, not
// HTTP), a small business on top of invoicingtest's seed data: 3 + n/50
// clients, 2 suppliers and 3 catalog items more; n invoices of 1 to 3 lines
// (draft, awaiting payment, some part paid, or overdue) numbered INV-0001
// up; n/4 quotes (draft, or sent to the client), some lines linked to
// items; 2 + n/20 bills (draft, awaiting approval or approved); n/10 bank
// transactions. Records are made with a random source seeded by b.Name, so
// the same name gets the same data; their ids are new UUIDs (the seed
// data's are the same in every business). Creation times fall in the day
// before the fleet clock's now. It keeps b's API keys.
func seedBusiness(t testing.TB, b *fleetBusiness, n int) {
	t.Helper()
	require.NoError(t, fleetSeed(b, n))
}

// fleetSeed is seedBusiness returning its error, for use off the test's
// goroutine.
func fleetSeed(b *fleetBusiness, n int) error {
	var buf bytes.Buffer
	if err := b.Srv.SaveState(&buf); err != nil {
		return err
	}
	var st map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &st); err != nil {
		return err
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(b.Name))
	rng := rand.New(rand.NewPCG(h.Sum64(), 25))
	g := fleetGen{rng: rng, now: b.Clock.Now().UTC().Truncate(time.Second)}
	add := g.records(n)

	for key, recs := range add {
		merged, err := fleetAppend(st[key], recs)
		if err != nil {
			return fmt.Errorf("state member %s: %w", key, err)
		}
		st[key] = merged
	}
	counters, err := json.Marshal(map[string]int{"invoices": n, "quotes": n / 4, "bills": 2 + n/20})
	if err != nil {
		return err
	}
	st["counters"] = counters
	// The document by hand: json.Marshal would check and compact every
	// member again, which took a third of the time.
	doc := bytes.NewBufferString("{")
	for key, raw := range st {
		if doc.Len() > 1 {
			doc.WriteByte(',')
		}
		doc.WriteString(strconv.Quote(key) + ":") // the document's names are plain ASCII
		doc.Write(raw)
	}
	doc.WriteByte('}')
	return b.Srv.LoadState(doc)
}

// fleetAppend returns the JSON array array with records appended.
func fleetAppend(array json.RawMessage, records []any) (json.RawMessage, error) {
	array = bytes.TrimSpace(array)
	if len(array) < 2 || array[0] != '[' || array[len(array)-1] != ']' {
		return nil, fmt.Errorf("not a JSON array: %.20q", array)
	}
	out := bytes.NewBuffer(array[: len(array)-1 : len(array)-1]) // a copy as it grows
	empty := len(bytes.TrimSpace(array[1:len(array)-1])) == 0
	for _, r := range records {
		raw, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		if !empty {
			out.WriteByte(',')
		}
		out.Write(raw)
		empty = false
	}
	out.WriteByte(']')
	return out.Bytes(), nil
}

// fleetGen makes the records of seedBusiness, in the JSON shapes of
// invoicingtest's state document.
type fleetGen struct {
	rng *rand.Rand
	now time.Time
	seq int // creation order, for created_at
}

// The records seedBusiness adds, in the JSON shapes of invoicingtest's
// state document (decimals as strings, dates as YYYY-MM-DD).
type (
	fleetContact struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Email     string `json:"email"`
		Phone     string `json:"phone"`
		Line1     string `json:"address_line1"`
		City      string `json:"city"`
		State     string `json:"state"`
		Postcode  string `json:"postcode"`
		Country   string `json:"country"`
		CreatedAt string `json:"created_at"`
	}
	fleetItem struct {
		ID          string `json:"id"`
		Code        string `json:"item_code"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Type        string `json:"item_type"`
		UnitPrice   string `json:"unit_price"`
		IsTaxable   bool   `json:"is_taxable"`
		IsActive    bool   `json:"is_active"`
		AccountID   string `json:"account_id"`
		TaxCodeID   string `json:"tax_code_id"`
		CreatedAt   string `json:"created_at"`
	}
	fleetLine struct {
		ID          string `json:"id"`
		ItemID      string `json:"item_id,omitempty"`
		ItemCode    string `json:"item_code,omitempty"`
		ItemName    string `json:"item_name,omitempty"`
		Description string `json:"description"`
		Quantity    string `json:"quantity"`
		UnitPrice   string `json:"unit_price"`
		TaxRate     string `json:"tax_rate"`
		AccountID   string `json:"account_id"`
		TaxCodeID   string `json:"tax_code_id"`
	}
	fleetInvoice struct {
		ID         string      `json:"id"`
		Number     string      `json:"invoice_number"`
		ClientID   string      `json:"client_id"`
		Status     string      `json:"status"`
		IssueDate  string      `json:"issue_date"`
		DueDate    string      `json:"due_date"`
		Currency   string      `json:"currency"`
		Notes      string      `json:"notes"`
		Reference  string      `json:"reference"`
		Lines      []fleetLine `json:"line_items"`
		CreatedAt  string      `json:"created_at"`
		ShareToken string      `json:"share_token,omitempty"`
	}
	fleetPayment struct {
		ID         string `json:"id"`
		InvoiceID  string `json:"invoice_id"`
		Amount     string `json:"amount"`
		Method     string `json:"payment_method"`
		ReceivedAt string `json:"received_at"`
	}
	fleetRecipient struct {
		QuoteContactID string `json:"quote_contact_id"`
		ContactID      string `json:"contact_id"`
		Name           string `json:"name"`
		Email          string `json:"email"`
		Type           string `json:"type"`
	}
	fleetQuote struct {
		ID         string           `json:"id"`
		Number     string           `json:"quote_number"`
		Title      string           `json:"title"`
		ClientID   string           `json:"client_id"`
		Status     string           `json:"status"`
		IssueDate  string           `json:"issue_date"`
		ValidUntil string           `json:"valid_until"`
		Currency   string           `json:"currency"`
		Notes      string           `json:"notes"`
		Lines      []fleetLine      `json:"line_items"`
		CreatedAt  string           `json:"created_at"`
		ShareToken string           `json:"share_token,omitempty"`
		Recipients []fleetRecipient `json:"recipients,omitempty"`
	}
	fleetBill struct {
		ID         string      `json:"id"`
		Number     string      `json:"bill_number"`
		SupplierID string      `json:"supplier_id"`
		Status     string      `json:"status"`
		IssueDate  string      `json:"issue_date"`
		DueDate    string      `json:"due_date"`
		Currency   string      `json:"currency"`
		Lines      []fleetLine `json:"line_items"`
		CreatedAt  string      `json:"created_at"`
	}
	fleetBankTransaction struct {
		ID            string `json:"id"`
		BankAccountID string `json:"bank_account_id"`
		Date          string `json:"date"`
		Description   string `json:"description"`
		Reference     string `json:"reference"`
		Amount        string `json:"amount"`
		Status        string `json:"status"`
	}
)

// records returns the records to append, by state document member.
func (g *fleetGen) records(n int) map[string][]any {
	out := map[string][]any{}
	clients := []string{invoicingtest.SeedClientID, invoicingtest.SeedOtherClientID}
	for i := range 3 + n/50 {
		c := fleetContact{ID: g.uuid(), Name: fmt.Sprintf("Client %d", i), Email: fmt.Sprintf("client%d@example.com", i),
			Phone: "+61 2 9000 1000", Line1: fmt.Sprintf("%d George Street", 1+i), City: "Sydney", State: "NSW",
			Postcode: "2000", Country: "AU", CreatedAt: g.createdAt()}
		out["clients"] = append(out["clients"], c)
		clients = append(clients, c.ID)
	}
	suppliers := []string{invoicingtest.SeedSupplierID, invoicingtest.SeedOtherSupplierID}
	for i := range 2 {
		c := fleetContact{ID: g.uuid(), Name: fmt.Sprintf("Supplier %d", i), Email: fmt.Sprintf("supplier%d@example.com", i),
			Country: "AU", CreatedAt: g.createdAt()}
		out["suppliers"] = append(out["suppliers"], c)
		suppliers = append(suppliers, c.ID)
	}
	items := []fleetItem{{ID: invoicingtest.SeedItemID, Code: "CONSULT", Name: "Consulting hour"}}
	for i := range 3 {
		it := fleetItem{ID: g.uuid(), Code: fmt.Sprintf("ITEM-%02d", i+1), Name: fmt.Sprintf("Item %d", i+1),
			Description: "A catalog item", Type: "SALES", UnitPrice: fmt.Sprintf("%d.50", 10+g.rng.IntN(90)),
			IsTaxable: true, IsActive: true, AccountID: invoicingtest.SeedRevenueAccountID,
			TaxCodeID: invoicingtest.SeedGSTTaxCodeID, CreatedAt: g.createdAt()}
		out["items"] = append(out["items"], it)
		items = append(items, it)
	}
	taxCodes := []struct{ id, rate string }{{invoicingtest.SeedGSTTaxCodeID, "10"},
		{invoicingtest.SeedOnePercentTaxCodeID, "1"}, {invoicingtest.SeedGSTFreeTaxCodeID, "0"}}
	lines := func(account string, linked bool) []fleetLine {
		var ls []fleetLine
		for range 1 + g.rng.IntN(3) {
			tc := taxCodes[g.rng.IntN(len(taxCodes))]
			l := fleetLine{ID: g.uuid(), Description: "Work", Quantity: fmt.Sprintf("%d.%d", 1+g.rng.IntN(5), g.rng.IntN(4)*25),
				UnitPrice: fmt.Sprintf("%d.%02d", 20+g.rng.IntN(500), g.rng.IntN(100)), TaxRate: tc.rate,
				AccountID: account, TaxCodeID: tc.id}
			if linked && g.rng.IntN(3) == 0 {
				it := items[g.rng.IntN(len(items))]
				l.ItemID, l.ItemCode, l.ItemName, l.Description = it.ID, it.Code, it.Name, it.Name
			}
			ls = append(ls, l)
		}
		return ls
	}
	for i := range n {
		inv := fleetInvoice{ID: g.uuid(), Number: fmt.Sprintf("INV-%04d", i+1), ClientID: clients[g.rng.IntN(len(clients))],
			Status:    []string{"draft", "awaiting_payment", "awaiting_payment", "overdue"}[g.rng.IntN(4)],
			IssueDate: g.day(-60 + g.rng.IntN(60)), DueDate: g.day(g.rng.IntN(30)), Currency: "AUD",
			Notes: fmt.Sprintf("Invoice %d", i+1), Lines: lines(invoicingtest.SeedRevenueAccountID, false), CreatedAt: g.createdAt()}
		if inv.Status != "draft" {
			inv.ShareToken = g.token()
			if g.rng.IntN(5) == 0 { // part paid: every invoice's total is above 20.00
				out["payments"] = append(out["payments"], fleetPayment{ID: g.uuid(), InvoiceID: inv.ID,
					Amount: "10.00", Method: "bank_transfer", ReceivedAt: inv.CreatedAt})
			}
		}
		out["invoices"] = append(out["invoices"], inv)
	}
	for i := range n / 4 {
		q := fleetQuote{ID: g.uuid(), Number: fmt.Sprintf("QU-%04d", i+1), Title: fmt.Sprintf("Quote %d", i+1),
			ClientID: clients[g.rng.IntN(len(clients))], Status: "draft", IssueDate: g.day(-20 + g.rng.IntN(20)),
			ValidUntil: g.day(30), Currency: "AUD", Lines: lines(invoicingtest.SeedRevenueAccountID, true), CreatedAt: g.createdAt()}
		if g.rng.IntN(2) == 0 {
			q.Status, q.ShareToken = "sent", g.token()
			q.Recipients = []fleetRecipient{{QuoteContactID: g.uuid(), ContactID: q.ClientID, Name: "Recipient",
				Email: "recipient@example.com", Type: "to"}}
		}
		out["quotes"] = append(out["quotes"], q)
	}
	for i := range 2 + n/20 {
		out["bills"] = append(out["bills"], fleetBill{ID: g.uuid(), Number: fmt.Sprintf("BILL-%04d", i+1),
			SupplierID: suppliers[g.rng.IntN(len(suppliers))], Status: []string{"draft", "awaiting_approval", "approved"}[g.rng.IntN(3)],
			IssueDate: g.day(-10), DueDate: g.day(20), Currency: "AUD",
			Lines: lines(invoicingtest.SeedExpenseAccountID, false), CreatedAt: g.createdAt()})
	}
	for i := range n / 10 {
		out["bank_transactions"] = append(out["bank_transactions"], fleetBankTransaction{ID: g.uuid(),
			BankAccountID: invoicingtest.SeedBankAccountID, Date: g.day(-g.rng.IntN(90)),
			Description: fmt.Sprintf("Transaction %d", i+1), Reference: fmt.Sprintf("REF-%d", i+1),
			Amount: fmt.Sprintf("%d.%02d", g.rng.IntN(2000)-1000, g.rng.IntN(100)), Status: "unreconciled"})
	}
	return out
}

// token returns a random share token (32 hexadecimal characters).
func (g *fleetGen) token() string { return fmt.Sprintf("%016x%016x", g.rng.Uint64(), g.rng.Uint64()) }

// uuid returns a random version 4 UUID from the generator's source.
func (g *fleetGen) uuid() string {
	hi, lo := g.rng.Uint64(), g.rng.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", hi>>32, hi>>16&0xffff, hi&0xfff, 0x8000|lo>>48&0x3fff, lo&0xffffffffffff)
}

// createdAt returns the next creation time: one second after the previous,
// starting a day before now.
func (g *fleetGen) createdAt() string {
	g.seq++
	return g.now.Add(-24*time.Hour + time.Duration(g.seq)*time.Second).Format(time.RFC3339)
}

// day returns the date d days from today.
func (g *fleetGen) day(d int) string { return g.now.AddDate(0, 0, d).Format(time.DateOnly) }

// fleetInvoiceIDs lists every invoice of the business whose key is key,
// through the router.
func fleetInvoiceIDs(t testing.TB, c *invoicing.Client, key string) []string {
	t.Helper()
	var ids []string
	for inv, err := range c.Invoices.List(context.Background(), nil, invoicing.WithAPIKey(key)) {
		require.NoError(t, err)
		ids = append(ids, inv.ID)
	}
	return ids
}

// fleetGet sends GET path (relative to f.URL) with key, and returns the
// status, the Retry-After header and the body.
func fleetGet(t testing.TB, f *fleet, path, key string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.URL+path, nil)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(body)
}

func TestFleetRoutesByKey(t *testing.T) {
	t.Parallel()
	sizes := map[string]int{"biz0000": 5, "biz0001": 8}
	f := newFleet(t, 2, withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, sizes[b.Name]) }))
	a, b := f.Business("biz0000"), f.Business("biz0001")
	require.NotEqual(t, a.Key, b.Key)
	c := f.Client(t)

	idsA, idsB := fleetInvoiceIDs(t, c, a.Key), fleetInvoiceIDs(t, c, b.Key)
	require.Len(t, idsA, 5)
	require.Len(t, idsB, 8)
	require.NotContains(t, idsB, idsA[0])
	inv, err := c.Invoices.Get(context.Background(), idsB[0], invoicing.WithAPIKey(b.Key))
	require.NoError(t, err)
	require.Equal(t, idsB[0], inv.ID)
	_, err = c.Invoices.Get(context.Background(), idsB[0], invoicing.WithAPIKey(a.Key))
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr, "A's key must not reach B's invoice")
	require.Equal(t, http.StatusNotFound, apiErr.StatusCode)
	require.Equal(t, f.Requests("biz0000"), len(a.Srv.Requests()), "every request of A reached A's server")
	require.Len(t, b.Srv.Requests(), 2, "B's server saw only B's list and get")
	require.Equal(t, 2, f.Requests("biz0001"))
	require.Len(t, f.RequestTimes("biz0001"), 2)

	// An unknown or missing key: 401 as the API answers it, counted for no one.
	before := f.Requests("biz0000") + f.Requests("biz0001")
	for _, key := range []string{"sk_test_unknown", ""} {
		status, _, body := fleetGet(t, f, "/invoices", key)
		require.Equal(t, http.StatusUnauthorized, status)
		require.JSONEq(t, `{"detail": "Invalid or missing API key"}`, body)
	}
	_, err = c.Invoices.Get(context.Background(), idsA[0], invoicing.WithAPIKey("sk_test_unknown"))
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
	require.Equal(t, "Invalid or missing API key", apiErr.Detail)
	require.Equal(t, before, f.Requests("biz0000")+f.Requests("biz0001"))

	// Fail: A answers 429 then 401 without reaching its server; B is served.
	served := len(a.Srv.Requests())
	f.Fail("biz0000", http.StatusTooManyRequests)
	status, retryAfter, body := fleetGet(t, f, "/invoices", a.Key)
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Equal(t, "1", retryAfter)
	require.JSONEq(t, `{"detail": "Rate limit exceeded"}`, body)
	status, _, _ = fleetGet(t, f, "/invoices", b.Key)
	require.Equal(t, http.StatusOK, status)
	f.Fail("biz0000", http.StatusUnauthorized)
	status, retryAfter, body = fleetGet(t, f, "/invoices", a.Key)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Empty(t, retryAfter)
	require.JSONEq(t, `{"detail": "Invalid or missing API key"}`, body)
	f.Fail("biz0000", http.StatusServiceUnavailable)
	status, _, body = fleetGet(t, f, "/invoices", a.Key)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.JSONEq(t, `{"detail": "Service Unavailable"}`, body)
	require.Len(t, a.Srv.Requests(), served, "a failing business's server sees nothing")
	f.Fail("biz0000", 0)
	status, _, _ = fleetGet(t, f, "/invoices", a.Key)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, a.Srv.Requests(), served+1)

	require.Panics(t, func() { f.Fail("biz0000", http.StatusOK) })
	require.Panics(t, func() { f.Fail("biz9999", http.StatusTooManyRequests) })
	require.Panics(t, func() { f.Requests("biz9999") })
}

func TestFleetNewKey(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 2)
	b := f.Business("biz0001")
	status, _, _ := fleetGet(t, f, "/invoices", b.Srv.ReadOnlyKey)
	require.Equal(t, http.StatusOK, status, "the read-only key is routed")

	// Rotation: a new key is routed to its business; the old one, revoked,
	// gets its Server's 401.
	key := b.NewKey(invoicingtest.AllScopes()...)
	status, _, _ = fleetGet(t, f, "/invoices", key)
	require.Equal(t, http.StatusOK, status)
	b.Srv.RevokeAPIKey(b.Key)
	status, _, body := fleetGet(t, f, "/invoices", b.Key)
	require.Equal(t, http.StatusUnauthorized, status)
	require.JSONEq(t, `{"detail": "Invalid or missing API key"}`, body)
	require.Equal(t, 3, f.Requests("biz0001"))
	require.Len(t, b.Srv.Requests(), 3)
	require.Zero(t, f.Requests("biz0000"))

	// A key's scopes are its Server's to check.
	status, _, _ = fleetGet(t, f, "/invoices", b.NewKey(invoicingtest.ScopeItemsRead))
	require.Equal(t, http.StatusForbidden, status)
}

func TestFleetFailThroughSDK(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 2)
	f.Fail("biz0000", http.StatusTooManyRequests)
	c, err := invoicing.NewClient(f.URL, f.Businesses[1].Key, invoicing.WithMaxRetries(0))
	require.NoError(t, err)
	_, err = c.Invoices.ListPage(context.Background(), nil, invoicing.WithAPIKey(f.Businesses[0].Key))
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusTooManyRequests, apiErr.StatusCode)
	require.Equal(t, time.Second, apiErr.RetryAfter)
	// The SDK pauses only A's key: B goes on.
	_, err = c.Invoices.ListPage(context.Background(), nil)
	require.NoError(t, err)
	require.Equal(t, 1, f.Requests("biz0000"))
	require.Equal(t, 1, f.Requests("biz0001"))
}

func TestFleetSubscribe(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 2, withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, 4) }))
	type delivery struct {
		path   string
		header http.Header
		body   []byte
	}
	got := make(chan delivery, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got <- delivery{r.URL.Path, r.Header.Clone(), body}
	}))
	t.Cleanup(receiver.Close)
	secrets := map[string]string{"biz0000": strings.Repeat("a1", 32), "biz0001": strings.Repeat("b2", 32)}
	for _, b := range f.Businesses {
		b.Subscribe(receiver.URL+"/webhooks/"+b.Name, secrets[b.Name])
	}

	b := f.Business("biz0001")
	c := f.Client(t)
	// A draft made through the router (invoice.created), then sent with
	// the Go helper (invoice.sent): both reach B's URL only, signed with B's
	// secret only.
	res, err := c.Invoices.Create(context.Background(), &invoicing.InvoiceCreateParams{ClientID: invoicingtest.SeedClientID,
		LineItems: []invoicing.LineItemParams{{Description: "Work", UnitPrice: decimal.NewFromInt(100),
			AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID}}}, invoicing.WithAPIKey(b.Key))
	require.NoError(t, err)
	require.NoError(t, b.Srv.SendInvoice(res.ID))
	for _, event := range []webhooks.EventType{webhooks.EventInvoiceCreated, webhooks.EventInvoiceSent} {
		d := <-got
		require.Equal(t, "/webhooks/biz0001", d.path)
		require.Equal(t, string(event), d.header.Get(webhooks.HeaderEvent))
		require.Contains(t, string(d.body), res.ID)
		for name, secret := range secrets {
			v, err := webhooks.NewVerifier(secret, webhooks.WithClock(f.Clock.Now))
			require.NoError(t, err)
			if name == b.Name {
				require.NoError(t, v.Verify(d.header, d.body))
			} else {
				require.ErrorIs(t, v.Verify(d.header, d.body), webhooks.ErrSignatureMismatch, "signed with B's secret only")
			}
		}
	}
	require.Empty(t, got, "two events, to B's endpoint only")
}

func TestFleetLatency(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 1, withFleetLatency(40*time.Millisecond, 0))
	start := time.Now()
	status, _, _ := fleetGet(t, f, "/invoices", "sk_test_unknown")
	require.Equal(t, http.StatusUnauthorized, status)
	status, _, _ = fleetGet(t, f, "/invoices", f.Businesses[0].Key)
	require.Equal(t, http.StatusOK, status)
	require.GreaterOrEqual(t, time.Since(start), 80*time.Millisecond)

	// A request whose client gives up during the wait counts, and its
	// server never sees it (a wait of a minute: the client surely gives up
	// first).
	f = newFleet(t, 1, withFleetLatency(time.Minute, 0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL+"/invoices", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.Businesses[0].Key)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return f.Requests("biz0000") == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	waitUntil(t, 5*time.Second, func() (bool, string) { return f.abandoned.Load() == 1, "the router to give the request up" })
	require.Empty(t, f.Businesses[0].Srv.Requests())
}

func TestSeedBusiness(t *testing.T) {
	t.Parallel()
	const n = 40
	f := newFleet(t, 2, withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, n) }))
	again := newFleet(t, 1, withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, n) }))
	c, c2 := f.Client(t), again.Client(t)
	ctx := context.Background()
	for _, b := range f.Businesses {
		opt := invoicing.WithAPIKey(b.Key)
		invoices, err := c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{ListParams: invoicing.ListParams{PageSize: 100}}, opt)
		require.NoError(t, err)
		require.Equal(t, n, invoices.Total)
		for _, inv := range invoices.Items {
			require.NotEmpty(t, inv.LineItems)
			require.LessOrEqual(t, len(inv.LineItems), 3)
			require.True(t, inv.Total.IsPositive())
		}
		quotes, err := c.Quotes.ListPage(ctx, nil, opt)
		require.NoError(t, err)
		require.Equal(t, n/4, quotes.Total)
		clients, err := c.Clients.ListPage(ctx, nil, opt)
		require.NoError(t, err)
		require.Equal(t, 2+3+n/50, clients.Total)
		bills, err := c.Bills.ListPage(ctx, nil, opt)
		require.NoError(t, err)
		require.Equal(t, 2+n/20, bills.Total)
		txns, err := c.BankTransactions.ListPage(ctx, nil, opt)
		require.NoError(t, err)
		require.Equal(t, 4+n/10, txns.Total)
		items, err := c.Items.ListPage(ctx, nil, opt)
		require.NoError(t, err)
		require.Equal(t, 4, items.Total)
		require.Len(t, b.Srv.Requests(), 6, "requests reach only their business")
	}
	// The same name gets the same data; another name other data.
	require.Equal(t, fleetInvoiceIDs(t, c2, again.Businesses[0].Key), fleetInvoiceIDs(t, c, f.Businesses[0].Key))
	require.NotEqual(t, fleetInvoiceIDs(t, c, f.Businesses[1].Key), fleetInvoiceIDs(t, c, f.Businesses[0].Key))

	// A new invoice through the API takes the next number.
	res, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{ClientID: invoicingtest.SeedClientID,
		LineItems: []invoicing.LineItemParams{{Description: "Work", UnitPrice: decimal.NewFromInt(100),
			AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID}}})
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("INV-%04d", n+1), res.InvoiceNumber)
}

func TestFleetSharedClock(t *testing.T) {
	t.Parallel()
	clock := invoicingtest.NewFakeClock(fleetStart.Add(time.Hour))
	f := newFleet(t, 2, withFleetClock(clock))
	require.Same(t, clock, f.Clock)
	for _, b := range f.Businesses {
		require.Same(t, clock, b.Clock)
	}
	clock.Advance(48 * time.Hour)
	for _, b := range f.Businesses {
		require.Equal(t, fleetStart.Add(49*time.Hour), b.Srv.Now())
	}
}

// TestFleetScale builds fleets of 100 and 1,000 businesses of 200 invoices
// (with seedBusiness's quotes, bills and the rest) at 20 ms a request, logs
// the time and the heap each takes, then walks every business's invoices
// with 64 concurrent calls and logs the request rate the fake sustained. It
// runs only with PGMIRROR_SCALE=1.
func TestFleetScale(t *testing.T) {
	t.Parallel()
	needScale(t, "build 1,000 businesses")
	for _, n := range []int{100, 1000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			heap0, goroutines0 := fleetHeap(), runtime.NumGoroutine()
			start := time.Now()
			f := newFleet(t, n, withFleetLatency(20*time.Millisecond, 0),
				withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, 200) }))
			built := time.Since(start)
			heap := fleetHeap() - heap0
			t.Logf("%d businesses × 200 invoices: built in %v, heap %.1f MiB (%.0f KiB a business), %d goroutines more",
				n, built.Round(time.Millisecond), float64(heap)/(1<<20), float64(heap)/1024/float64(n), runtime.NumGoroutine()-goroutines0)

			c := f.Client(t)
			const workers = 64
			todo := make(chan *fleetBusiness, n)
			for _, b := range f.Businesses {
				todo <- b
			}
			close(todo)
			counts := make(chan int, n)
			var wg sync.WaitGroup
			start = time.Now()
			for range workers {
				wg.Go(func() {
					for b := range todo {
						seen := 0
						for _, err := range c.Invoices.List(context.Background(), nil, invoicing.WithAPIKey(b.Key)) {
							if err != nil {
								t.Error(b.Name, err)
								break
							}
							seen++
						}
						counts <- seen
					}
				})
			}
			wg.Wait()
			walked := time.Since(start)
			close(counts)
			for seen := range counts {
				require.Equal(t, 200, seen)
			}
			for _, b := range f.Businesses {
				require.Equal(t, 2, f.Requests(b.Name), "two pages of 100")
			}
			t.Logf("every business's 200 invoices, %d calls at once: %v, %.0f requests/s; then heap %.1f MiB, %d goroutines more",
				workers, walked.Round(time.Millisecond), float64(2*n)/walked.Seconds(),
				float64(fleetHeap()-heap0)/(1<<20), runtime.NumGoroutine()-goroutines0)
		})
	}
}

// fleetHeap is the heap in use after a garbage collection, in bytes.
func fleetHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkFleetRouting compares a request to one Server directly with the
// same request through a fleet's router (loopback TCP to the router, then
// in-memory to the Server), to one business and spread over 100.
func BenchmarkFleetRouting(b *testing.B) {
	ctx := context.Background()
	get := func(b *testing.B, c *invoicing.Client, opts []invoicing.RequestOption) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := c.Clients.Get(ctx, invoicingtest.SeedClientID, opts[i%len(opts)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	b.Run("direct", func(b *testing.B) {
		srv := invoicingtest.NewTestServer(b)
		get(b, srv.Client(), []invoicing.RequestOption{invoicing.WithAPIKey(srv.FullKey)})
	})
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("fleet/%d", n), func(b *testing.B) {
			f := newFleet(b, n)
			var opts []invoicing.RequestOption
			for _, biz := range f.Businesses {
				opts = append(opts, invoicing.WithAPIKey(biz.Key))
			}
			get(b, f.Client(b), opts)
		})
	}
	b.Run("direct/parallel", func(b *testing.B) {
		srv := invoicingtest.NewTestServer(b)
		c := srv.Client()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Clients.Get(ctx, invoicingtest.SeedClientID); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("fleet/100/parallel", func(b *testing.B) {
		f := newFleet(b, 100)
		c := f.Client(b)
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				key := f.Businesses[next.Add(1)%100].Key
				if _, err := c.Clients.Get(ctx, invoicingtest.SeedClientID, invoicing.WithAPIKey(key)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
