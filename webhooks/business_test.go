package webhooks_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

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

func newVerifierFor(t *testing.T, secret string, opts ...webhooks.Option) *webhooks.Verifier {
	t.Helper()
	v, err := webhooks.NewVerifier(secret, append([]webhooks.Option{webhooks.WithClock(func() time.Time { return testNow })}, opts...)...)
	require.NoError(t, err)
	return v
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

func ExampleBusinessHandler() {
	// Each business's webhook endpoint in the service points at
	// https://example.com/webhooks/<business>; its Verifier is built once
	// from the secrets the business gave (two while a secret rotates).
	verifiers := map[string]*webhooks.Verifier{}
	for business, secret := range map[string]string{"acme": acmeSecret, "globex": globexSecret} {
		v, err := webhooks.NewVerifier(secret)
		if err != nil {
			panic(err)
		}
		verifiers[business] = v
	}
	lookup := func(ctx context.Context, business string) (*webhooks.Verifier, error) {
		if v, ok := verifiers[business]; ok {
			return v, nil
		}
		return nil, webhooks.ErrUnknownBusiness
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", webhooks.BusinessHandler(lookup, func(ctx context.Context, d *webhooks.Delivery) error {
		fmt.Println(d.Business, d.Type)
		return nil
	}))

	td := webhooks.TestDelivery{Secret: globexSecret, Type: webhooks.EventInvoicePaid, Body: []byte(`{"invoice_id":"6f1c","invoice_number":"INV-0001","client_id":"c1","reference":"","amount_paid":"10.00","paid_at":"2026-03-05T09:14:21Z"}`)}
	r, _ := td.Request("/webhooks/globex")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	fmt.Println(w.Code)
	// Output:
	// globex invoice.paid
	// 200
}
