package invoicing_test

import (
	"context"
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

	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

const (
	testKey = "sk_test_9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	prefix  = "/api/v1/external"
)

// seenRequest is what the test server received.
type seenRequest struct {
	Method string
	Path   string // without the /api/v1/external prefix
	Query  string
	Header http.Header
	Body   []byte
}

// testAPI is an httptest server with the API mounted under the prefix; it
// records every request and answers with handler.
type testAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []seenRequest
	handler http.HandlerFunc
}

func (a *testAPI) requests() []seenRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]seenRequest(nil), a.reqs...)
}

func (a *testAPI) last(t *testing.T) seenRequest {
	t.Helper()
	r := a.requests()
	require.NotEmpty(t, r, "no request reached the server")
	return r[len(r)-1]
}

// newTestAPI starts the server and a Client for it with fast retries.
func newTestAPI(t *testing.T, h http.HandlerFunc, opts ...invoicing.Option) (*invoicing.Client, *testAPI) {
	t.Helper()
	a := &testAPI{handler: h}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.HasPrefix(r.URL.Path, prefix+"/") {
			t.Errorf("request outside the API prefix: %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		a.mu.Lock()
		a.reqs = append(a.reqs, seenRequest{
			Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, prefix),
			Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body,
		})
		a.mu.Unlock()
		a.handler(w, r)
	}))
	t.Cleanup(a.srv.Close)
	opts = append([]invoicing.Option{invoicing.WithRetryWait(time.Millisecond, 20*time.Millisecond)}, opts...)
	c, err := invoicing.NewClient(a.srv.URL+prefix, testKey, opts...)
	require.NoError(t, err)
	return c, a
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

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// fakeClock is a Client clock (invoicing.WithClock) on which waiting takes
// no time: Sleep records the wait and moves the clock forward by it. With
// hold set, Sleep first signals on sleeping and waits until hold is closed
// (or its context ends), for tests of what happens during a wait.
type fakeClock struct {
	mu       sync.Mutex
	now      time.Time
	sleeps   []time.Duration
	hold     chan struct{}
	sleeping chan time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Now(), sleeping: make(chan time.Duration, 64)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	f.mu.Lock()
	f.sleeps = append(f.sleeps, d)
	hold := f.hold
	f.mu.Unlock()
	if hold != nil {
		f.sleeping <- d
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	if end := f.now.Add(d); end.After(f.now) {
		f.now = end
	}
	f.mu.Unlock()
	return nil
}

// holdSleeps makes every later Sleep wait until the returned func is called.
func (f *fakeClock) holdSleeps() (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = make(chan struct{})
	h := f.hold
	return func() {
		f.mu.Lock()
		f.hold = nil
		f.mu.Unlock()
		close(h)
	}
}

// waits returns the waits slept so far.
func (f *fakeClock) waits() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// rawJSON returns v encoded with encoding/json: for a record decoded from
// the service, the members it was decoded from.
func rawJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
