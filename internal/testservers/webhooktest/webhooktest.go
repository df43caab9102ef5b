// Package webhooktest is the test support shared by the tests of the
// webhooks store adapters (webhooks/redisdedup, webhooks/pginbox): signed
// deliveries, a TestMain for a real server, and the harnesses that send
// deliveries to a receiver's replicas (Storm), while its store goes away
// (Outage), or as fast as they are acknowledged (Throughput).
//
// It is part of the test-infrastructure module (internal/testservers),
// not of the SDK's: it uses only the standard library and the SDK's
// packages, and the store modules' tests import it under the same internal
// path. The benchmarks' hand-written baseline verifier is
// internal/benchpair.BaselineVerify, in the SDK's module, which the SDK's
// own benchmarks use too.
package webhooktest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// Secret signs the tests' deliveries.
const Secret = "5f0d1c3b9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817065f4e"

// Main runs m's tests with the server a TestMain has just started (err is
// the error starting it), closes the server and exits with the tests' code.
// A server that did not start ends the run at once, with err on stderr and
// exit code 1: the tests fail rather than skip.
func Main(m *testing.M, server io.Closer, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "these tests need a real server:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := server.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// NewVerifier returns a Verifier of Secret with opts, and fails tb if
// webhooks.NewVerifier refuses them.
func NewVerifier(tb testing.TB, opts ...webhooks.Option) *webhooks.Verifier {
	tb.Helper()
	v, err := webhooks.NewVerifier(Secret, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// Delivery is one contact.created delivery: the same id and body on every
// attempt of the service.
type Delivery struct {
	// ID is the X-Service-Delivery value, also the event's contact_id.
	ID string
	// Body is the JSON body, signed and sent exactly as it is.
	Body []byte
}

// Deliveries returns n deliveries with distinct random ids (UUIDs).
func Deliveries(n int) []Delivery {
	out := make([]Delivery, n)
	for i := range out {
		id := newUUID()
		out[i] = Delivery{ID: id, Body: fmt.Appendf(nil,
			`{"contact_id":%q,"contact_type":"client","name":"Client %d","email":"c%d@example.com","created_at":"2026-01-02T03:04:05Z"}`, id, i, i)}
	}
	return out
}

// Attempts returns each of deliveries times times, shuffled: the attempts of
// a service that sends every delivery several times, in random order.
func Attempts(deliveries []Delivery, times int) []Delivery {
	var out []Delivery
	for range times {
		out = append(out, deliveries...)
	}
	mathrand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Request returns one attempt of the delivery as the service sends it to
// url, signed with Secret now: url may be a path such as "/webhooks", for a
// handler's ServeHTTP, or a server's URL, for an http.Client.
func (d Delivery) Request(url string) (*http.Request, error) {
	return d.signed().Request(url)
}

// Send serves one attempt of the delivery with h and returns the status of
// the answer.
func (d Delivery) Send(h http.Handler) int {
	r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(d.Body))
	r.Header = d.signed().Header()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

func (d Delivery) signed() webhooks.TestDelivery {
	return webhooks.TestDelivery{Secret: Secret, Type: webhooks.EventContactCreated, DeliveryID: d.ID, Body: d.Body}
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// Counter counts something per delivery id, such as the successful runs of a
// receiver's callback. It is safe for concurrent use; its zero value is
// ready.
type Counter struct {
	mu sync.Mutex
	n  map[string]int
}

// Add counts one more for id.
func (c *Counter) Add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[string]int)
	}
	c.n[id]++
}

// Count returns how many were counted for id.
func (c *Counter) Count(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[id]
}

// Len returns how many ids were counted.
func (c *Counter) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.n)
}
