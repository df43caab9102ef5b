package pginbox_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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
			cfg, err := pgxpool.ParseConfig(server.URL)
			require.NoError(t, err)
			cfg.ConnConfig.RuntimeParams["search_path"] = schema
			cfg.ConnConfig.Tracer = &tracer
			pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
			require.NoError(t, err)
			t.Cleanup(pool.Close)

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
