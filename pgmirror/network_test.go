package pgmirror_test

import (
	"crypto/sha256"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// network carries the fake service's webhook deliveries to the mirror's
// replicas as a poor network and load balancer would: each attempt goes to
// a random replica (dead ones included), and some attempts are lost
// (answered 503 without reaching a replica: the service retries on its
// schedule, later and out of order), some replies are lost (the replica
// stored the delivery, the service sees 503 and sends it again), some
// attempts are duplicated, and about 2% of the deliveries never get
// through (their every attempt is lost; only the reconciliation can make up
// for them).
//
// The fake service signs each attempt at its fake clock's time, which the
// test moves hours ahead to run the retry schedule; the network signs each
// attempt again, body and delivery id untouched, at the wall clock's time,
// so that the replicas verify deliveries with the default 5-minute
// tolerance, as in production.
type network struct {
	secret string
	// secrets, for a mirror of many businesses, are the secrets by
	// business: an attempt to /webhooks/NAME goes to a replica's
	// /webhooks/NAME, signed with NAME's secret. Set before the first
	// delivery.
	secrets map[string]string
	client  *http.Client

	mu      sync.Mutex
	rng     *rand.Rand
	targets []string

	attempts, lost, lostReplies, duplicated, neverDelivered, unreachable atomic.Int64
}

func newNetwork(t testing.TB, seed uint64) (*network, string) {
	n := &network{rng: rand.New(rand.NewPCG(seed, seed+1)), client: &http.Client{Timeout: 30 * time.Second}}
	s := httptest.NewServer(n)
	t.Cleanup(s.Close)
	return n, s.URL + "/webhooks"
}

// route adds a replica's webhook URL.
func (n *network) route(url string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.targets = append(n.targets, url)
}

// neverGetsThrough picks the deliveries that are lost for good.
func neverGetsThrough(deliveryID string) bool {
	h := sha256.Sum256([]byte(deliveryID))
	return h[0] < 5 // 5 in 256
}

func (n *network) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.attempts.Add(1)
	secret, suffix := n.secret, ""
	if n.secrets != nil {
		business := strings.TrimPrefix(r.URL.Path, "/webhooks/")
		secret, suffix = n.secrets[business], "/"+business
	}
	d := webhooks.TestDelivery{Secret: secret, Type: webhooks.EventType(r.Header.Get(webhooks.HeaderEvent)),
		DeliveryID: r.Header.Get(webhooks.HeaderDelivery), Body: body}
	if neverGetsThrough(d.DeliveryID) {
		n.neverDelivered.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	n.mu.Lock()
	roll := n.rng.Float64()
	target := n.targets[n.rng.IntN(len(n.targets))] + suffix
	n.mu.Unlock()
	switch {
	case roll < 0.10:
		n.lost.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case roll < 0.15:
		n.forward(target, d)
		n.lostReplies.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case roll < 0.20:
		n.duplicated.Add(1)
		n.forward(target, d)
	}
	w.WriteHeader(n.forward(target, d))
}

// forward signs d now and sends it to target, and returns the status (502
// when the replica does not answer).
func (n *network) forward(target string, d webhooks.TestDelivery) int {
	d.Timestamp = time.Now()
	req, err := d.Request(target)
	if err != nil {
		return http.StatusBadGateway
	}
	resp, err := n.client.Do(req)
	if err != nil {
		n.unreachable.Add(1)
		return http.StatusBadGateway
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// gate is a proxy in front of the fake's API that can hold the invoice
// list's pages from a given page on, until released: it stops a backfill in
// the middle of its walk so that the test can kill the replica walking.
type gate struct {
	proxy    *httputil.ReverseProxy
	holdFrom int
	released chan struct{}
	once     sync.Once
	holding  atomic.Int64 // requests held now
}

// newGate returns a gate in front of the service at target (a base URL
// such as an invoicingtest.Server's URL) holding invoice pages from
// holdFrom on (0: holding nothing) and the API base URL to use through it.
func newGate(t testing.TB, target string, holdFrom int) (*gate, string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.ErrorLog = log.New(io.Discard, "", 0) // requests of a killed replica end in errors
	g := &gate{proxy: proxy, holdFrom: holdFrom, released: make(chan struct{})}
	if holdFrom == 0 {
		g.release()
	}
	s := httptest.NewServer(g)
	t.Cleanup(s.Close)
	t.Cleanup(g.release)
	return g, s.URL + invoicingtest.BasePath
}

func (g *gate) release() { g.once.Do(func() { close(g.released) }) }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	if r.URL.Path == invoicingtest.BasePath+"/invoices" && q.Get("page_size") == "100" && page >= g.holdFrom {
		g.holding.Add(1)
		select {
		case <-g.released:
			g.holding.Add(-1)
		case <-r.Context().Done(): // the replica went away
			g.holding.Add(-1)
			return
		}
	}
	g.proxy.ServeHTTP(w, r)
}
