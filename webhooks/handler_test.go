package webhooks_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// recorder is a handler function that records the deliveries it gets and
// returns err.
type recorder struct {
	mu  sync.Mutex
	got []*webhooks.Delivery
	err error
}

func (rec *recorder) handle(ctx context.Context, d *webhooks.Delivery) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.got = append(rec.got, d)
	return rec.err
}

func (rec *recorder) calls() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.got)
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandlerStatuses(t *testing.T) {
	body := fixture(t, "quote.accepted.json")
	stale := strconv.FormatInt(testNow.Add(-time.Hour).Unix(), 10)
	without := func(header string) func() *http.Request {
		return func() *http.Request {
			r := signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
			r.Header.Del(header)
			return r
		}
	}
	tests := []struct {
		name    string
		request func() *http.Request
		fnErr   error
		status  int
		called  bool
	}{
		{
			name: "verified delivery",
			request: func() *http.Request {
				return signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
			},
			status: http.StatusOK, called: true,
		},
		{
			name: "function fails",
			request: func() *http.Request {
				return signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
			},
			fnErr:  errors.New("database is down"),
			status: http.StatusInternalServerError, called: true,
		},
		{
			name:    "wrong secret",
			request: func() *http.Request { return signedRequest("wrong", testTimestamp, webhooks.EventQuoteAccepted, body) },
			status:  http.StatusUnauthorized,
		},
		{
			name: "tampered body",
			request: func() *http.Request {
				r := signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
				r.Body = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(bytes.Replace(body, []byte("7120.34"), []byte("0.01"), 1))).Body
				r.ContentLength = -1
				return r
			},
			status: http.StatusUnauthorized,
		},
		{
			name:    "no signature",
			request: without(webhooks.HeaderSignature),
			status:  http.StatusUnauthorized,
		},
		{
			name:    "stale",
			request: func() *http.Request { return signedRequest(testSecret, stale, webhooks.EventQuoteAccepted, body) },
			status:  http.StatusUnauthorized,
		},
		{
			name:    "no event header",
			request: without(webhooks.HeaderEvent),
			status:  http.StatusBadRequest,
		},
		{
			name: "payload does not decode",
			request: func() *http.Request {
				return signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, []byte(`{"total": true}`))
			},
			status: http.StatusBadRequest,
		},
		{
			name: "GET",
			request: func() *http.Request {
				r := signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)
				r.Method = http.MethodGet
				return r
			},
			status: http.StatusMethodNotAllowed,
		},
		{
			name: "body too large",
			request: func() *http.Request {
				big := bytes.Repeat([]byte(" "), webhooks.DefaultMaxBodyBytes+1)
				return signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, big)
			},
			status: http.StatusRequestEntityTooLarge,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{err: tt.fnErr}
			w := serve(webhooks.Handler(newVerifier(t), rec.handle), tt.request())
			require.Equal(t, tt.status, w.Code)
			if tt.called {
				require.Equal(t, 1, rec.calls())
				assertSameEvent(t, expectedEvents["quote.accepted.json"], rec.got[0].Event)
			} else {
				require.Zero(t, rec.calls())
			}
			if tt.status == http.StatusMethodNotAllowed {
				assert.Equal(t, http.MethodPost, w.Header().Get("Allow"))
			}
			// Only the status text goes back to the sender.
			if tt.status != http.StatusOK {
				assert.Equal(t, http.StatusText(tt.status)+"\n", w.Body.String())
			}
		})
	}
}

func TestHandlerDeduplicates(t *testing.T) {
	body := fixture(t, "payment.received.json")
	request := func(id string) *http.Request {
		r := signedRequest(testSecret, testTimestamp, webhooks.EventPaymentReceived, body)
		r.Header.Set(webhooks.HeaderDelivery, id)
		return r
	}
	rec := &recorder{}
	h := webhooks.Handler(newVerifier(t), rec.handle, webhooks.WithDeduper(webhooks.NewMemoryDeduper(time.Hour)))

	require.Equal(t, http.StatusOK, serve(h, request("d-1")).Code)
	require.Equal(t, http.StatusOK, serve(h, request("d-1")).Code, "a duplicate is acknowledged")
	require.Equal(t, 1, rec.calls(), "a duplicate is not processed")

	require.Equal(t, http.StatusOK, serve(h, request("d-2")).Code)
	require.Equal(t, 2, rec.calls())

	// Without a Deduper, duplicates are processed.
	rec2 := &recorder{}
	h2 := webhooks.Handler(newVerifier(t), rec2.handle)
	serve(h2, request("d-1"))
	serve(h2, request("d-1"))
	require.Equal(t, 2, rec2.calls())
}

func TestHandlerRetriesFailedDeliveries(t *testing.T) {
	body := fixture(t, "invoice.paid.json")
	rec := &recorder{err: errors.New("temporary")}
	h := webhooks.Handler(newVerifier(t), rec.handle, webhooks.WithDeduper(webhooks.NewMemoryDeduper(time.Hour)))

	require.Equal(t, http.StatusInternalServerError, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventInvoicePaid, body)).Code)
	rec.err = nil
	require.Equal(t, http.StatusOK, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventInvoicePaid, body)).Code)
	require.Equal(t, 2, rec.calls(), "the retry of a failed delivery is processed")
	require.Equal(t, http.StatusOK, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventInvoicePaid, body)).Code)
	require.Equal(t, 2, rec.calls(), "once processed, it is a duplicate")
}

func TestHandlerConcurrentDuplicate(t *testing.T) {
	body := fixture(t, "invoice.paid.json")
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	h := webhooks.Handler(newVerifier(t), func(context.Context, *webhooks.Delivery) error {
		if calls.Add(1) == 1 {
			close(entered)
		}
		<-release
		return nil
	}, webhooks.WithDeduper(webhooks.NewMemoryDeduper(time.Hour)))

	first := make(chan int, 1)
	go func() {
		first <- serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventInvoicePaid, body)).Code
	}()
	select {
	case <-entered:
	case code := <-first:
		t.Fatalf("the first delivery was answered %d without being processed", code)
	case <-time.After(10 * time.Second):
		t.Fatal("the first delivery was not processed")
	}

	// The same delivery while the first is being processed: neither
	// processed nor acknowledged, so the service tries again later.
	require.Equal(t, http.StatusConflict, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventInvoicePaid, body)).Code)

	close(release)
	require.Equal(t, http.StatusOK, <-first)
	require.Equal(t, http.StatusOK, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventInvoicePaid, body)).Code)
	require.Equal(t, int32(1), calls.Load())
}

func TestHandlerRecoversPanic(t *testing.T) {
	body := fixture(t, "quote.accepted.json")
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	var calls atomic.Int32
	f := &fakeDeduper{}
	h := webhooks.Handler(newVerifier(t), func(context.Context, *webhooks.Delivery) error {
		if calls.Add(1) == 1 {
			panic("boom")
		}
		return nil
	}, webhooks.WithDeduper(f), webhooks.WithLogger(logger))

	w := serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body))
	require.Equal(t, http.StatusInternalServerError, w.Code)
	require.Equal(t, []bool{false}, f.released, "the claim is released as not processed")

	// The handler keeps serving.
	require.Equal(t, http.StatusOK, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)).Code)
	require.Equal(t, int32(2), calls.Load())
	require.Equal(t, []bool{false, true}, f.released)

	out := logs.String()
	assert.Contains(t, out, `level=ERROR msg="webhooks: delivery function panicked" status=500 delivery_id=dlv_01HQ7Z3K8M2N4P6R8T0V event=quote.accepted panic=boom stack=`)
	assert.Contains(t, out, "handler_test.go", "the stack trace reaches the panicking function")
	assert.Equal(t, 1, strings.Count(out, "level=ERROR"), "one line per panic")
	assert.NotContains(t, out, testSecret)
	assert.NotContains(t, out, "Harbour Lane", "the body is not logged")
}

func TestHandlerRecoversPanicWithoutDeduper(t *testing.T) {
	body := fixture(t, "test.json")
	h := webhooks.Handler(newVerifier(t), func(_ context.Context, d *webhooks.Delivery) error {
		var none []byte
		_ = none[len(d.Body)] // a runtime error: index out of range
		return nil
	})
	require.NotPanics(t, func() {
		require.Equal(t, http.StatusInternalServerError, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventTest, body)).Code)
	})
}

func TestHandlerRecoversPanicAfterRetry(t *testing.T) {
	// With the MemoryDeduper, a delivery whose processing panicked is
	// processed again when the service retries it.
	body := fixture(t, "test.json")
	var calls atomic.Int32
	h := webhooks.Handler(newVerifier(t), func(context.Context, *webhooks.Delivery) error {
		if calls.Add(1) == 1 {
			panic(errors.New("boom"))
		}
		return nil
	}, webhooks.WithDeduper(webhooks.NewMemoryDeduper(time.Hour)))
	require.Equal(t, http.StatusInternalServerError, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventTest, body)).Code)
	require.Equal(t, http.StatusOK, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventTest, body)).Code)
	require.Equal(t, http.StatusOK, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventTest, body)).Code)
	require.Equal(t, int32(2), calls.Load(), "processed once after the panic, then a duplicate")
}

func TestHandlerRepanicsErrAbortHandler(t *testing.T) {
	body := fixture(t, "test.json")
	f := &fakeDeduper{}
	h := webhooks.Handler(newVerifier(t), func(context.Context, *webhooks.Delivery) error {
		panic(http.ErrAbortHandler)
	}, webhooks.WithDeduper(f))
	require.PanicsWithValue(t, http.ErrAbortHandler, func() {
		serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventTest, body))
	})
	require.Equal(t, []bool{false}, f.released, "the claim is released all the same")
}

// TestHandlerPanicOverHTTP runs the handler in a real server: after a panic
// the client gets a 500, and the next request on the same connection works.
func TestHandlerPanicOverHTTP(t *testing.T) {
	body := fixture(t, "test.json")
	var calls atomic.Int32
	h := webhooks.Handler(newVerifier(t, webhooks.WithoutTimestampCheck()), func(context.Context, *webhooks.Delivery) error {
		if calls.Add(1) == 1 {
			panic("boom")
		}
		return nil
	}, webhooks.WithDeduper(webhooks.NewMemoryDeduper(time.Hour)))
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, want := range []int{http.StatusInternalServerError, http.StatusOK} {
		r := signedRequest(testSecret, testTimestamp, webhooks.EventTest, body)
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header = r.Header
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode)
	}
	require.Equal(t, int32(2), calls.Load())
}

// fakeDeduper is a Deduper that fails or records as told.
type fakeDeduper struct {
	invalid       bool // Claim returns the invalid status 0
	claimErr      error
	releaseErr    error
	releaseCtxErr error
	released      []bool
}

func (f *fakeDeduper) Claim(context.Context, string) (webhooks.ClaimStatus, error) {
	switch {
	case f.claimErr != nil:
		return 0, f.claimErr
	case f.invalid:
		return 0, nil
	}
	return webhooks.ClaimNew, nil
}

func (f *fakeDeduper) Release(ctx context.Context, _ string, processed bool) error {
	f.releaseCtxErr = ctx.Err()
	f.released = append(f.released, processed)
	return f.releaseErr
}

func TestHandlerDeduperErrors(t *testing.T) {
	body := fixture(t, "test.json")

	rec := &recorder{}
	h := webhooks.Handler(newVerifier(t), rec.handle, webhooks.WithDeduper(&fakeDeduper{claimErr: errors.New("redis down")}))
	require.Equal(t, http.StatusInternalServerError, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventTest, body)).Code)
	require.Zero(t, rec.calls())

	// A Deduper answering nonsense is an error, not a licence to process.
	h = webhooks.Handler(newVerifier(t), rec.handle, webhooks.WithDeduper(&fakeDeduper{invalid: true}))
	require.Equal(t, http.StatusInternalServerError, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventTest, body)).Code)
	require.Zero(t, rec.calls())

	// A failed release after success still acknowledges: the work is done.
	f := &fakeDeduper{releaseErr: errors.New("redis down")}
	h = webhooks.Handler(newVerifier(t), rec.handle, webhooks.WithDeduper(f))
	require.Equal(t, http.StatusOK, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventTest, body)).Code)
	require.Equal(t, []bool{true}, f.released)
}

func TestHandlerReleasesWithLiveContext(t *testing.T) {
	body := fixture(t, "test.json")
	f := &fakeDeduper{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := webhooks.Handler(newVerifier(t), func(context.Context, *webhooks.Delivery) error {
		cancel() // the sender hung up while we worked
		return nil
	}, webhooks.WithDeduper(f))
	serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventTest, body).WithContext(ctx))
	require.Equal(t, []bool{true}, f.released)
	require.NoError(t, f.releaseCtxErr)
}

func TestHandlerLogs(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	body := fixture(t, "quote.accepted.json")
	h := webhooks.Handler(newVerifier(t), func(context.Context, *webhooks.Delivery) error { return nil }, webhooks.WithLogger(logger))

	serve(h, signedRequest("wrong", testTimestamp, webhooks.EventQuoteAccepted, body))
	serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body))
	logs := buf.String()
	assert.Contains(t, logs, "level=WARN msg=\"webhooks: delivery refused\" status=401 delivery_id=dlv_01HQ7Z3K8M2N4P6R8T0V event=quote.accepted error=\"webhooks: signature mismatch\"")
	assert.Contains(t, logs, "level=DEBUG msg=\"webhooks: delivery handled\" status=200")
	assert.NotContains(t, logs, testSecret)
	assert.NotContains(t, logs, "Harbour Lane", "the body is not logged")
}

// WithErrorHandler takes the failures (the 500s) from the log; refusals are
// still logged.
func TestHandlerGivesFailuresToTheErrorHandler(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	body := fixture(t, "quote.accepted.json")
	stored := errors.New("the database is away")
	var got []error
	h := webhooks.Handler(newVerifier(t), func(context.Context, *webhooks.Delivery) error { return stored },
		webhooks.WithLogger(logger), webhooks.WithErrorHandler(func(_ context.Context, err error) { got = append(got, err) }))

	assert.Equal(t, http.StatusInternalServerError, serve(h, signedRequest(testSecret, testTimestamp, webhooks.EventQuoteAccepted, body)).Code)
	assert.Equal(t, http.StatusUnauthorized, serve(h, signedRequest("wrong", testTimestamp, webhooks.EventQuoteAccepted, body)).Code)
	require.Len(t, got, 1)
	assert.ErrorIs(t, got[0], stored)
	logs := buf.String()
	assert.NotContains(t, logs, "delivery failed", "the failure went to the error handler only")
	assert.Contains(t, logs, `msg="webhooks: delivery refused" status=401`)
}

func TestHandlerPanicsOnNil(t *testing.T) {
	fn := func(context.Context, *webhooks.Delivery) error { return nil }
	assert.Panics(t, func() { webhooks.Handler(nil, fn) })
	assert.Panics(t, func() { webhooks.Handler(newVerifier(t), nil) })
}

// The signing secrets of two businesses' endpoints (64 hex characters), and
// the secret business "acme" rotated away from, still accepted meanwhile.
const (
	acmeSecret    = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
	acmeOldSecret = "1111111111111111111111111111111111111111111111111111111111111111"
	globexSecret  = "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1"
)

// businesses serves "POST /webhooks/{business}" with BusinessHandler for the
// businesses acme (mid-rotation: two secrets) and globex.
func businesses(t *testing.T, fn func(context.Context, *webhooks.Delivery) error, opts ...webhooks.HandlerOption) http.Handler {
	t.Helper()
	verifiers := map[string]*webhooks.Verifier{
		"acme":   newVerifierFor(t, acmeSecret, webhooks.WithSecrets(acmeOldSecret)),
		"globex": newVerifierFor(t, globexSecret),
	}
	lookup := func(ctx context.Context, business string) (*webhooks.Verifier, error) {
		if business == "broken" {
			return nil, errors.New("the secrets store is down")
		}
		v, ok := verifiers[business]
		if !ok {
			return nil, fmt.Errorf("%w: %s", webhooks.ErrUnknownBusiness, business)
		}
		return v, nil
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", webhooks.BusinessHandler(lookup, fn, opts...))
	mux.Handle("POST /flat", webhooks.BusinessHandler(lookup, fn, opts...)) // a pattern without the wildcard
	return mux
}

// signedTo returns a delivery of body signed with secret, POSTed to path.
func signedTo(path, secret, deliveryID string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header = signedHeader(secret, testTimestamp, webhooks.EventInvoicePaid, body)
	r.Header.Set(webhooks.HeaderDelivery, deliveryID)
	return r
}

func TestBusinessHandlerVerifiesEachBusinessWithItsOwnSecrets(t *testing.T) {
	body := fixture(t, "invoice.paid.json")
	rec := &recorder{}
	h := businesses(t, rec.handle)

	for _, c := range []struct {
		path, secret string
		want         int
	}{
		{"/webhooks/acme", acmeSecret, http.StatusOK},
		{"/webhooks/acme", acmeOldSecret, http.StatusOK}, // mid-rotation
		{"/webhooks/globex", globexSecret, http.StatusOK},
		{"/webhooks/globex", acmeSecret, http.StatusUnauthorized}, // valid for acme, not for globex
		{"/webhooks/acme", globexSecret, http.StatusUnauthorized},
		{"/webhooks/initech", acmeSecret, http.StatusNotFound}, // a business the lookup does not know
		{"/flat", acmeSecret, http.StatusNotFound},             // no business in the URL
		{"/webhooks/broken", acmeSecret, http.StatusInternalServerError},
	} {
		w := serve(h, signedTo(c.path, c.secret, "dlv-"+c.path+c.secret[:4], body))
		assert.Equal(t, c.want, w.Code, "%s signed with %s...", c.path, c.secret[:4])
	}
	require.Equal(t, 3, rec.calls())
	assert.Equal(t, []string{"acme", "acme", "globex"}, []string{rec.got[0].Business, rec.got[1].Business, rec.got[2].Business})
	_, ok := rec.got[0].Event.(*webhooks.InvoicePaid)
	assert.True(t, ok, "the event is typed as with Handler")
}

func TestBusinessHandlerDeduplicatesEachBusinessApart(t *testing.T) {
	body := fixture(t, "invoice.paid.json")
	rec := &recorder{}
	h := businesses(t, rec.handle, webhooks.WithDeduper(webhooks.NewMemoryDeduper(time.Hour)))

	assert.Equal(t, http.StatusOK, serve(h, signedTo("/webhooks/acme", acmeSecret, "dlv-1", body)).Code)
	assert.Equal(t, http.StatusOK, serve(h, signedTo("/webhooks/acme", acmeSecret, "dlv-1", body)).Code, "a retry, acknowledged")
	assert.Equal(t, 1, rec.calls(), "and not processed again")
	assert.Equal(t, http.StatusOK, serve(h, signedTo("/webhooks/globex", globexSecret, "dlv-1", body)).Code)
	assert.Equal(t, 2, rec.calls(), "the same delivery id for another business is another delivery")
}

func TestBusinessHandlerLogsTheBusiness(t *testing.T) {
	var logs bytes.Buffer
	h := businesses(t, (&recorder{}).handle, webhooks.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	serve(h, signedTo("/webhooks/globex", acmeSecret, "dlv-9", fixture(t, "invoice.paid.json")))
	serve(h, signedTo("/webhooks/initech", acmeSecret, "dlv-10", fixture(t, "invoice.paid.json")))
	out := logs.String()
	assert.Contains(t, out, `msg="webhooks: delivery refused" status=401 delivery_id=dlv-9 event=invoice.paid business=globex`)
	assert.Contains(t, out, `status=404 delivery_id=dlv-10 event=invoice.paid business=initech`)
	assert.Contains(t, out, "unknown business")
	assert.NotContains(t, out, acmeSecret)
}

func TestBusinessHandlerPanicsWithoutItsFunctions(t *testing.T) {
	lookup := func(context.Context, string) (*webhooks.Verifier, error) { return nil, nil }
	assert.Panics(t, func() { webhooks.BusinessHandler(nil, (&recorder{}).handle) })
	assert.Panics(t, func() { webhooks.BusinessHandler(lookup, nil) })
	// A lookup that returns neither a Verifier nor an error is a 500.
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", webhooks.BusinessHandler(lookup, (&recorder{}).handle))
	w := serve(mux, signedTo("/webhooks/acme", acmeSecret, "dlv-1", fixture(t, "invoice.paid.json")))
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.False(t, strings.Contains(w.Body.String(), "Verifier"), "details go to the logger, not the sender")
}
