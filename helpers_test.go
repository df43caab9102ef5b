package invoicing_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// The unit tests' one fake is httpmock: a mock transport behind each
// Client, answering with http.HandlerFuncs. The end-to-end tests (e2e_test.go)
// use invoicingtest instead.

const (
	testKey = "sk_test_9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	prefix  = "/api/v1/external"
	testURL = "https://api.invoicing.test" + prefix
)

// seenRequest is what the mock received.
type seenRequest struct {
	Method string
	Path   string // without the /api/v1/external prefix
	Query  string
	Header http.Header
	Body   []byte
}

// mockAPI records every request a Client sends and answers it with handler.
type mockAPI struct {
	mu      sync.Mutex
	reqs    []seenRequest
	handler http.HandlerFunc
}

func (a *mockAPI) requests() []seenRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]seenRequest(nil), a.reqs...)
}

func (a *mockAPI) last(t *testing.T) seenRequest {
	t.Helper()
	r := a.requests()
	require.NotEmpty(t, r, "no request reached the mock")
	return r[len(r)-1]
}

// newMock returns a Client whose requests go to h through an httpmock
// transport, with fast retries (opts come after, and win).
func newMock(t *testing.T, h http.HandlerFunc, opts ...invoicing.Option) (*invoicing.Client, *mockAPI) {
	t.Helper()
	a := &mockAPI{handler: h}
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(a.respond)
	opts = append([]invoicing.Option{
		invoicing.WithHTTPClient(&http.Client{Transport: mt}),
		invoicing.WithRetryWait(time.Millisecond, 20*time.Millisecond),
	}, opts...)
	c, err := invoicing.NewClient(testURL, testKey, opts...)
	require.NoError(t, err)
	return c, a
}

// respond records r and answers it with the handler.
func (a *mockAPI) respond(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	a.mu.Lock()
	a.reqs = append(a.reqs, seenRequest{
		Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, prefix),
		Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body,
	})
	a.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	a.handler(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// reply answers with status, a JSON (or other) body and header pairs.
func reply(w http.ResponseWriter, status int, body string, header ...string) {
	w.Header().Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// always answers every request the same way.
func always(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { reply(w, status, body, header...) }
}

// sequence answers the n-th request with the n-th handler, repeating the last.
func sequence(hs ...http.HandlerFunc) http.HandlerFunc {
	var mu sync.Mutex
	n := 0
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := hs[min(n, len(hs)-1)]
		n++
		mu.Unlock()
		h(w, r)
	}
}

// fixture returns testdata/name.
func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// rawJSON returns v encoded with encoding/json: for a record decoded from
// the service, the members it was decoded from.
func rawJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
