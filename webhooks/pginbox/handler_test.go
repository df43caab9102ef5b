package pginbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

func TestHandlerStoresVerifiedDeliveryOnce(t *testing.T) {
	pool := newPool(t, newSchema(t), 2)
	h := pginbox.Handler(pool, webhooktest.NewVerifier(t))
	d := webhooktest.Deliveries(1)[0]
	d.Body = append([]byte("  "), d.Body...) // stored byte for byte, spaces included

	req, err := d.Request("/webhooks")
	require.NoError(t, err)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	require.Equal(t, http.StatusOK, w.Code)

	r := readRow(t, pool, d.ID)
	assert.Equal(t, "contact.created", r.EventType)
	assert.Equal(t, d.Body, r.Body)
	assert.Equal(t, req.Header.Get(webhooks.HeaderTimestamp), strFromUnix(r.SignedAt))
	assert.Equal(t, pginbox.StatusPending, r.Status)
	assert.Zero(t, r.Attempts)

	assert.Equal(t, http.StatusOK, d.Send(h), "a copy is acknowledged")
	assert.Equal(t, 1, countRows(t, pool, ""), "and not stored again")
}

func TestHandlerRefusesAsWebhooksHandlerDoes(t *testing.T) {
	pool := newPool(t, newSchema(t), 2)
	v := webhooktest.NewVerifier(t, webhooks.WithMaxBodyBytes(1000))
	h := pginbox.Handler(pool, v)
	reference := webhooks.Handler(v, func(ctx context.Context, d *webhooks.Delivery) error { return nil })
	d := webhooktest.Deliveries(1)[0]

	cases := map[string]struct {
		status int
		change func(r *http.Request)
	}{
		"GET": {http.StatusMethodNotAllowed, func(r *http.Request) { r.Method = http.MethodGet }},
		"body over the limit": {http.StatusRequestEntityTooLarge, func(r *http.Request) {
			r.Body = io.NopCloser(strings.NewReader(strings.Repeat(" ", 1001)))
			r.ContentLength = -1
		}},
		"no signature":        {http.StatusUnauthorized, func(r *http.Request) { r.Header.Del(webhooks.HeaderSignature) }},
		"no timestamp":        {http.StatusUnauthorized, func(r *http.Request) { r.Header.Del(webhooks.HeaderTimestamp) }},
		"malformed signature": {http.StatusUnauthorized, func(r *http.Request) { r.Header.Set(webhooks.HeaderSignature, "md5=1") }},
		"wrong signature": {http.StatusUnauthorized, func(r *http.Request) {
			_, sig := webhooks.Sign("another secret", time.Now(), d.Body)
			r.Header.Set(webhooks.HeaderSignature, sig)
		}},
		"stale": {http.StatusUnauthorized, func(r *http.Request) {
			ts, sig := webhooks.Sign(webhooktest.Secret, time.Now().Add(-time.Hour), d.Body)
			r.Header.Set(webhooks.HeaderTimestamp, ts)
			r.Header.Set(webhooks.HeaderSignature, sig)
		}},
		"no delivery id": {http.StatusBadRequest, func(r *http.Request) { r.Header.Del(webhooks.HeaderDelivery) }},
		"no event type":  {http.StatusBadRequest, func(r *http.Request) { r.Header.Del(webhooks.HeaderEvent) }},
		"signed body that does not parse": {http.StatusBadRequest, func(r *http.Request) {
			body := []byte(`["not an object"]`)
			ts, sig := webhooks.Sign(webhooktest.Secret, time.Now(), body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r.Header.Set(webhooks.HeaderTimestamp, ts)
			r.Header.Set(webhooks.HeaderSignature, sig)
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			for _, handler := range []http.Handler{h, reference} {
				r, err := d.Request("/webhooks")
				require.NoError(t, err)
				c.change(r)
				w := httptest.NewRecorder()
				handler.ServeHTTP(w, r)
				assert.Equal(t, c.status, w.Code)
			}
		})
	}
	assert.Zero(t, countRows(t, pool, ""), "nothing refused is stored")
}

func TestHandlerPanicsOnNilOrNoTimeout(t *testing.T) {
	v, pool := webhooktest.NewVerifier(t), newPool(t, "public", 1)
	assert.Panics(t, func() { pginbox.Handler(nil, v) })
	assert.Panics(t, func() { pginbox.Handler(pool, nil) })
	assert.Panics(t, func() { pginbox.Handler(pool, v, pginbox.WithTimeout(0)) })
	assert.Panics(t, func() { pginbox.Handler(pool, v, pginbox.WithTimeout(-time.Second)) })
}

// The insert, and the wait for a connection before it, run with a deadline:
// DefaultHandlerTimeout, or WithTimeout's, after the delivery was verified.
func TestHandlerBoundsTheInsert(t *testing.T) {
	schema := newSchema(t)
	v := webhooktest.NewVerifier(t)
	cases := map[string]struct {
		opts  []pginbox.HandlerOption
		limit time.Duration
	}{
		"default":     {nil, pginbox.DefaultHandlerTimeout},
		"WithTimeout": {[]pginbox.HandlerOption{pginbox.WithTimeout(3 * time.Second)}, 3 * time.Second},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var tracer deadlineTracer
			pool := newTracedPool(t, schema, schema, 4, &tracer)

			before := time.Now()
			require.Equal(t, http.StatusOK, webhooktest.Deliveries(1)[0].Send(pginbox.Handler(pool, v, c.opts...)))
			after := time.Now()
			deadline, ok := tracer.deadline.Load().(time.Time)
			require.True(t, ok, "the insert ran without a deadline")
			assert.WithinRange(t, deadline, before.Add(c.limit), after.Add(c.limit))
		})
	}
	assert.Less(t, pginbox.DefaultHandlerTimeout, 30*time.Second, "the service waits 30 seconds")
}

// Only the Handler's limit ends its work: a request whose client has hung
// up (its context canceled) is still stored, so the service's retry finds
// it stored.
func TestHandlerStoresWhenClientHangsUp(t *testing.T) {
	pool := newPool(t, newSchema(t), 2)
	d := webhooktest.Deliveries(1)[0]
	req, err := d.Request("/webhooks")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	pginbox.Handler(pool, webhooktest.NewVerifier(t)).ServeHTTP(w, req.WithContext(ctx))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, pginbox.StatusPending, readRow(t, pool, d.ID).Status)
}

// deadlineTracer records the deadline of the context of the last query.
type deadlineTracer struct{ deadline atomic.Value }

func (tr *deadlineTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if d, ok := ctx.Deadline(); ok {
		tr.deadline.Store(d)
	}
	return ctx
}

func (tr *deadlineTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// strFromUnix writes t as the X-Service-Timestamp header does.
func strFromUnix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// With WithErrorHandler, the deliveries the Handler fails to store reach it
// with the database's error; the answer is still 500.
func TestHandlerGivesStoreFailuresToTheErrorHandler(t *testing.T) {
	pool := newPool(t, emptySchema(t), 1) // no inbox table: every insert fails
	var got []error
	h := pginbox.Handler(pool, webhooktest.NewVerifier(t), pginbox.WithErrorHandler(func(_ context.Context, err error) { got = append(got, err) }))
	d := webhooktest.Deliveries(1)[0]
	assert.Equal(t, http.StatusInternalServerError, d.Send(h))
	require.Len(t, got, 1)
	assert.ErrorContains(t, got[0], "storing delivery")
}

// WithStoredBody stores what its function keeps of a delivery, not the
// body as received; an error of the function answers 500 and stores
// nothing.
func TestHandlerStoresWhatWithStoredBodyKeeps(t *testing.T) {
	pool := newPool(t, newSchema(t), 2)
	ds := webhooktest.Deliveries(2)
	h := pginbox.Handler(pool, webhooktest.NewVerifier(t), pginbox.WithStoredBody(func(_ context.Context, d *webhooks.Delivery) ([]byte, error) {
		if d.ID == ds[1].ID {
			return nil, errors.New("no")
		}
		return []byte(`{"kept":true}`), nil
	}))
	require.Equal(t, http.StatusOK, ds[0].Send(h))
	assert.JSONEq(t, `{"kept":true}`, string(readRow(t, pool, ds[0].ID).Body))
	assert.Equal(t, http.StatusInternalServerError, ds[1].Send(h))
	assert.Equal(t, 1, countRows(t, pool, ""))
}

// The documented setup, built by the package example's newReceiver (which
// doc.go and the README show), with callbacks as slow as can be: while each
// of the Worker's concurrency callbacks is blocked, holding its connection,
// the Handler still stores and acknowledges deliveries. It never needs one
// of the Worker's connections.
func TestDocumentedSetupHandlerNeverWaitsForWorkers(t *testing.T) {
	ctx := context.Background()
	schema := emptySchema(t)
	inCallback, release := make(chan string, 100), make(chan struct{})
	r, err := newReceiver(ctx, server.URL+"&search_path="+schema, webhooktest.NewVerifier(t),
		func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
			inCallback <- d.ID
			<-release
			return nil
		})
	require.NoError(t, err)
	t.Cleanup(r.close)
	admin := newPool(t, schema, 1)

	busy := webhooktest.Deliveries(concurrency)
	for _, d := range busy {
		require.Equal(t, http.StatusOK, d.Send(r.handler))
	}
	start(t, r.worker)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the Worker's, which waits for the callbacks
	for range concurrency {
		select {
		case <-inCallback:
		case <-time.After(30 * time.Second):
			t.Fatal("the Worker did not take up every stored delivery")
		}
	}
	require.Equal(t, int32(concurrency), r.worker.Pool.Stat().AcquiredConns(), "each blocked callback holds a connection")
	assert.Equal(t, float64(concurrency), byLabel(gather(t, r.metrics)["invoicing_pginbox_deliveries_in_flight"])[""])

	more := webhooktest.Deliveries(20)
	for _, d := range more {
		require.Equal(t, http.StatusOK, d.Send(r.handler), "delivery %s, sent while every callback is blocked", short(d.ID))
		assert.Equal(t, pginbox.StatusPending, readRow(t, admin, d.ID).Status)
	}
	assert.Empty(t, inCallback, "the callbacks are still blocked")
	assert.Equal(t, int32(concurrency), r.worker.Pool.Stat().AcquiredConns())

	unblock()
	waitFor(t, admin, pginbox.StatusProcessed, len(busy)+len(more))
	require.Eventually(t, func() bool { return outcomes(t, r.metrics)["processed"] == float64(len(busy)+len(more)) }, 30*time.Second, time.Millisecond)
	assert.Equal(t, map[string]float64{"stored": float64(len(busy) + len(more)), "processed": float64(len(busy) + len(more))}, outcomes(t, r.metrics))
}

// The signing secrets of two businesses' endpoints, and the secret acme
// rotated away from, still accepted meanwhile.
const (
	acmeSecret    = webhooktest.Secret
	acmeOldSecret = "1111111111111111111111111111111111111111111111111111111111111111"
	globexSecret  = "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1"
)

// twoBusinesses is the VerifierFunc of acme (mid-rotation: two secrets)
// and globex; the business "broken" stands for a secrets store that fails.
func twoBusinesses(t *testing.T) webhooks.VerifierFunc {
	t.Helper()
	acme, err := webhooks.NewVerifier(acmeSecret, webhooks.WithSecrets(acmeOldSecret))
	require.NoError(t, err)
	globex, err := webhooks.NewVerifier(globexSecret)
	require.NoError(t, err)
	verifiers := map[string]*webhooks.Verifier{"acme": acme, "globex": globex}
	return func(_ context.Context, business string) (*webhooks.Verifier, error) {
		if business == "broken" {
			return nil, errors.New("the secrets store is down")
		}
		if v, ok := verifiers[business]; ok {
			return v, nil
		}
		return nil, fmt.Errorf("%w: %s", webhooks.ErrUnknownBusiness, business)
	}
}

// oneBusiness is the VerifierFunc of business alone, whose secret is
// webhooktest.Secret.
func oneBusiness(t *testing.T, business string) webhooks.VerifierFunc {
	v := webhooktest.NewVerifier(t)
	return func(_ context.Context, b string) (*webhooks.Verifier, error) {
		if b != business {
			return nil, webhooks.ErrUnknownBusiness
		}
		return v, nil
	}
}

// businessMux serves h on "POST /webhooks/{business}", and on "POST /flat",
// a pattern without the wildcard.
func businessMux(h http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", h)
	mux.Handle("POST /flat", h)
	return mux
}

// sendTo posts d, signed with secret, to path on h and returns the status.
func sendTo(h http.Handler, path, secret string, d webhooktest.Delivery) int {
	td := webhooks.TestDelivery{Secret: secret, Type: webhooks.EventContactCreated, DeliveryID: d.ID, Body: d.Body}
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(d.Body))
	r.Header = td.Header()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// businessesOf returns the businesses that have a row for delivery id, in
// order.
func businessesOf(t *testing.T, pool interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, id string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		`SELECT business FROM invoicing_webhook_inbox WHERE delivery_id = $1 ORDER BY business`, id)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

func TestBusinessHandlerVerifiesAndStoresEachBusinessApart(t *testing.T) {
	pool := newPool(t, newSchema(t), 2)
	m := pginbox.NewMetrics(pool)
	h := businessMux(pginbox.BusinessHandler(pool, twoBusinesses(t), pginbox.WithMetrics(m)))
	d := webhooktest.Deliveries(1)[0]

	assert.Equal(t, http.StatusOK, sendTo(h, "/webhooks/acme", acmeSecret, d))
	assert.Equal(t, http.StatusUnauthorized, sendTo(h, "/webhooks/globex", acmeSecret, d), "valid for acme, not for globex")
	assert.Equal(t, http.StatusUnauthorized, sendTo(h, "/webhooks/globex", acmeOldSecret, d), "nor acme's previous secret")
	assert.Equal(t, []string{"acme"}, businessesOf(t, pool, d.ID), "nothing stored for globex")

	assert.Equal(t, http.StatusOK, sendTo(h, "/webhooks/acme", acmeOldSecret, d), "mid-rotation, a copy")
	assert.Equal(t, http.StatusOK, sendTo(h, "/webhooks/globex", globexSecret, d), "the same id, for globex")
	assert.Equal(t, http.StatusOK, sendTo(h, "/webhooks/globex", globexSecret, d), "and its copy")
	store(t, pool, d) // and through the single-business Handler
	assert.Equal(t, []string{"", "acme", "globex"}, businessesOf(t, pool, d.ID), "one row per business, copies not stored")

	other := webhooktest.Deliveries(1)[0]
	assert.Equal(t, http.StatusNotFound, sendTo(h, "/webhooks/initech", acmeSecret, other), "a business the lookup does not know")
	assert.Equal(t, http.StatusNotFound, sendTo(h, "/flat", acmeSecret, other), "a URL without a business")
	assert.Equal(t, http.StatusInternalServerError, sendTo(h, "/webhooks/broken", acmeSecret, other), "a lookup that fails: the service retries")
	assert.Empty(t, businessesOf(t, pool, other.ID))

	assert.Equal(t, map[string]float64{"stored": 2, "duplicate": 2, "refused": 4, "store_failed": 1}, outcomes(t, m),
		"the metrics count BusinessHandler's answers too")
}
