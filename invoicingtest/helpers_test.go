package invoicingtest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// These tests talk to the fake with plain net/http and encoding/json/v2 at
// its defaults (strict: no duplicate names, valid UTF-8), never through the
// SDK, so that the fake is checked against API.md and not against the
// SDK's reading of it.

// testStart is "now" on the fake clock of every test server.
var testStart = time.Date(2026, time.March, 10, 9, 30, 0, 0, time.UTC)

func newServer(t *testing.T, opts ...Option) (*Server, *FakeClock) {
	t.Helper()
	clock := NewFakeClock(testStart)
	srv := NewTestServer(t, append([]Option{WithClock(clock)}, opts...)...)
	return srv, clock
}

// newDirectServer starts a server on the fake clock of testStart, closed
// when tb ends, and returns a function that serves a request with its full
// key straight through its handler (no network, no latency).
func newDirectServer(tb testing.TB) func(req *http.Request) *httptest.ResponseRecorder {
	srv := NewServer(WithClock(NewFakeClock(testStart)))
	tb.Cleanup(srv.Close)
	h := srv.handler()
	return func(req *http.Request) *httptest.ResponseRecorder {
		req.Header.Set("Authorization", "Bearer "+srv.FullKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// call sends a request to the API. body may be nil, a string (sent raw) or
// any value (sent as JSON).
func call(t *testing.T, srv *Server, method, path, key string, body any) response {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, srv.URL+path, r)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return send(t, req)
}

// send sends req and returns the response with its body read.
func send(t *testing.T, req *http.Request) response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{resp.StatusCode, resp.Header, raw}
}

func get(t *testing.T, srv *Server, path string) response {
	t.Helper()
	return call(t, srv, http.MethodGet, path, srv.FullKey, nil)
}

func post(t *testing.T, srv *Server, path string, body any) response {
	t.Helper()
	return call(t, srv, http.MethodPost, path, srv.FullKey, body)
}

// object decodes the body as a JSON object, keeping numbers as jsonNumber
// so their exact text can be checked (and told apart from strings).
func (r response) object(t *testing.T) map[string]any {
	t.Helper()
	return decodeObject(t, r.body)
}

func decodeObject(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m, keepNumbers), "body: %s", raw)
	return m
}

// jsonNumber is the exact text of a JSON number: decodeObject gives one for
// every number, and a request body sends one as the number it holds.
type jsonNumber string

// MarshalJSONTo writes the number as it is.
func (n jsonNumber) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(jsontext.Value(n))
}

// keepNumbers decodes every JSON number held in an any as a jsonNumber.
var keepNumbers = json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
	if dec.PeekKind() != '0' {
		return errors.ErrUnsupported
	}
	n, err := dec.ReadValue()
	*v = jsonNumber(n)
	return err
}))

// detail returns the {detail} text of an error body.
func (r response) detail(t *testing.T) string {
	t.Helper()
	m := r.object(t)
	require.Len(t, m, 1, "error body must be exactly {detail}: %s", r.body)
	d, ok := m["detail"].(string)
	require.True(t, ok, "detail must be a string: %s", r.body)
	return d
}

// requireStatus fails with the body when the status differs.
func (r response) requireStatus(t *testing.T, want int) response {
	t.Helper()
	require.Equal(t, want, r.status, "body: %s", r.body)
	return r
}

func list(t *testing.T, m map[string]any, key string) []map[string]any {
	t.Helper()
	raw, ok := m[key].([]any)
	require.True(t, ok, "%s must be an array in %v", key, m)
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i] = x.(map[string]any)
	}
	return out
}

func num(s string) jsonNumber { return jsonNumber(s) }

// withExtra returns body with extra's members added (a member of both:
// extra's).
func withExtra(body, extra map[string]any) map[string]any {
	maps.Copy(body, extra)
	return body
}

// invoiceBody is a valid POST /invoices body with one line of 100 at 1% tax.
func invoiceBody(extra map[string]any) map[string]any {
	return withExtra(map[string]any{
		"client_id":           SeedClientID,
		"default_account_id":  SeedRevenueAccountID,
		"default_tax_code_id": SeedOnePercentTaxCodeID,
		"line_items":          []any{map[string]any{"description": "Widget", "unit_price": jsonNumber("100")}},
	}, extra)
}

func createInvoice(t *testing.T, srv *Server, extra map[string]any) map[string]any {
	t.Helper()
	return post(t, srv, "/invoices", invoiceBody(extra)).requireStatus(t, http.StatusCreated).object(t)
}

func quoteBody(extra map[string]any) map[string]any {
	return withExtra(map[string]any{
		"client_id":           SeedClientID,
		"default_account_id":  SeedRevenueAccountID,
		"default_tax_code_id": SeedGSTTaxCodeID,
		"line_items": []any{
			map[string]any{"description": "Design work", "quantity": jsonNumber("2"), "unit_price": jsonNumber("100")},
			map[string]any{"description": "Extended support", "unit_price": jsonNumber("50")},
		},
	}, extra)
}

func createQuote(t *testing.T, srv *Server, extra map[string]any) map[string]any {
	t.Helper()
	return post(t, srv, "/quotes", quoteBody(extra)).requireStatus(t, http.StatusCreated).object(t)
}

// received is one webhook request as the receiver saw it.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a webhook receiver that records deliveries and answers with
// the status codes queued in statuses (200 once they run out).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []received
	statuses []int
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	t.Helper()
	rc := &receiver{statuses: statuses}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{r.Header.Clone(), body})
		status := http.StatusOK
		if len(rc.statuses) > 0 {
			status, rc.statuses = rc.statuses[0], rc.statuses[1:]
		}
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// setStatuses replaces the queued answers.
func (rc *receiver) setStatuses(statuses ...int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.statuses = statuses
}

func (rc *receiver) deliveries() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// only returns the deliveries of one event type.
func (rc *receiver) only(event webhooks.EventType) []received {
	var out []received
	for _, d := range rc.deliveries() {
		if d.header.Get("X-Service-Event") == string(event) {
			out = append(out, d)
		}
	}
	return out
}

// verify checks a delivery's signature the way API.md 6.4 tells receivers
// to: HMAC-SHA256 keyed with the secret's UTF-8 bytes over
// "<timestamp>.<raw body>", hex, behind "sha256=", compared in constant
// time.
func verify(secret string, d received) bool {
	sig, ok := strings.CutPrefix(d.header.Get("X-Service-Signature"), "sha256=")
	if !ok {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(d.header.Get("X-Service-Timestamp") + "." + string(d.body)))
	want := hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(sig), []byte(want))
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// DeliveryLog records the deliveries a receiver's function (Handle) is
// given. It is exported for the package's external tests too.
type DeliveryLog struct {
	mu   sync.Mutex
	got  []*webhooks.Delivery
	fail error // returned by Handle while set
}

// Handle is a receiver's function: it records d and returns the error
// SetFail set.
func (l *DeliveryLog) Handle(_ context.Context, d *webhooks.Delivery) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, d)
	return l.fail
}

// All returns the deliveries Handle was given, in order.
func (l *DeliveryLog) All() []*webhooks.Delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*webhooks.Delivery(nil), l.got...)
}

// SetFail makes Handle return err (nil: succeed).
func (l *DeliveryLog) SetFail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail = err
}
