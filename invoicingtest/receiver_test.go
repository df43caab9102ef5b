package invoicingtest_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// createInvoice creates an invoice through the SDK.
func createInvoice(t *testing.T, c *invoicing.Client) *invoicing.InvoiceCreateResult {
	t.Helper()
	res, err := c.Invoices.Create(t.Context(), &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{Description: "Design", UnitPrice: decimal.RequireFromString("250")}},
	})
	require.NoError(t, err)
	return res
}

// The clock is months away from the wall clock: the receiver measures the
// timestamps' tolerance on the server's clock.
var receiverStart = time.Date(2026, time.March, 10, 9, 30, 0, 0, time.UTC)

func TestNewReceiverHandsTheFunctionTypedEvents(t *testing.T) {
	srv := invoicingtest.NewTestServer(t, invoicingtest.WithClock(invoicingtest.NewFakeClock(receiverStart)))
	var got invoicingtest.DeliveryLog
	ep := srv.NewReceiver(got.Handle)

	res := createInvoice(t, srv.Client())

	deliveries := got.All()
	require.Len(t, deliveries, 1, "delivered before Create returned")
	created, ok := deliveries[0].Event.(*webhooks.InvoiceCreated)
	require.True(t, ok, "%T", deliveries[0].Event)
	assert.Equal(t, res.ID, created.InvoiceID)
	assert.Equal(t, res.InvoiceNumber, created.InvoiceNumber)
	assert.Equal(t, "275.00", created.Total.StringFixed(2))
	assert.Equal(t, receiverStart, deliveries[0].Timestamp.UTC())

	d := ep.Deliveries()
	require.Len(t, d, 1)
	assert.Equal(t, invoicingtest.DeliverySucceeded, d[0].Status)
	assert.Equal(t, http.StatusOK, d[0].Attempts[0].StatusCode)
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/webhooks$`, ep.URL())
}

func TestNewReceiverSubscribesToTheEventsGiven(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	var got invoicingtest.DeliveryLog
	srv.NewReceiver(got.Handle, invoicingtest.Subscribe(webhooks.EventPaymentReceived, webhooks.EventInvoicePaid))

	res := createInvoice(t, srv.Client())
	require.NoError(t, srv.SendInvoice(res.ID))
	_, err := srv.RecordPayment(res.ID, invoicingtest.Payment{Amount: res.Total})
	require.NoError(t, err)

	var types []webhooks.EventType
	for _, d := range got.All() {
		types = append(types, d.Type)
	}
	assert.Equal(t, []webhooks.EventType{webhooks.EventPaymentReceived, webhooks.EventInvoicePaid}, types)
	assert.Panics(t, func() { srv.NewReceiver(got.Handle, invoicingtest.Subscribe("invoice.deleted")) })
	assert.Panics(t, func() { srv.NewReceiver(nil) })
}

func TestNewReceiverFailuresAreRetriedOnTheClock(t *testing.T) {
	clock := invoicingtest.NewFakeClock(receiverStart)
	srv := invoicingtest.NewTestServer(t, invoicingtest.WithClock(clock))
	var got invoicingtest.DeliveryLog
	got.SetFail(errors.New("database down"))
	ep := srv.NewReceiver(got.Handle)

	createInvoice(t, srv.Client())
	d := ep.Deliveries()[0]
	assert.Equal(t, http.StatusInternalServerError, d.Attempts[0].StatusCode, "an error from the function answers 500")
	assert.Equal(t, invoicingtest.DeliveryPending, d.Status)

	got.SetFail(nil)
	clock.Advance(time.Minute)
	d = ep.Deliveries()[0]
	assert.Equal(t, invoicingtest.DeliverySucceeded, d.Status, "the retry a minute later is verified on the fake clock")
	assert.Len(t, got.All(), 2)
}

func TestNewReceiverKeepsItsSecretAfterARotation(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	var got invoicingtest.DeliveryLog
	ep := srv.NewReceiver(got.Handle)
	ep.RotateSecret()

	d, err := ep.Test()
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, d.Attempts[0].StatusCode, "as a receiver not given the new secret")
	assert.Empty(t, got.All())
}

func TestNewReceiverTakesHandlerOptions(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	var mu sync.Mutex
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	var got invoicingtest.DeliveryLog
	ep := srv.NewReceiver(got.Handle, invoicingtest.WithHandlerOptions(webhooks.WithLogger(logger)))

	d, err := ep.Test()
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, logs.String(), "delivery_id="+d.ID)
}

func TestNewReceiverClosesWithTheServer(t *testing.T) {
	srv := invoicingtest.NewServer()
	ep := srv.NewReceiver(func(context.Context, *webhooks.Delivery) error { return nil })
	srv.Close()
	resp, err := http.Post(ep.URL(), "application/json", nil)
	if err == nil {
		resp.Body.Close()
	}
	assert.Error(t, err, "nothing listens any more")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// userSecret is the signing secret "the user's application" is configured
// with.
const userSecret = "6f1d0c2b9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817060504"

// paidHandler is "a user's handler": it verifies deliveries with its own
// secret and clock, and records the numbers of the invoices paid.
type paidHandler struct {
	mu   sync.Mutex
	paid []string
}

func (p *paidHandler) handler(t *testing.T, opts ...webhooks.Option) http.Handler {
	t.Helper()
	v, err := webhooks.NewVerifier(userSecret, opts...)
	require.NoError(t, err)
	return webhooks.Handler(v, func(_ context.Context, d *webhooks.Delivery) error {
		if e, ok := d.Event.(*webhooks.InvoicePaid); ok {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.paid = append(p.paid, e.InvoiceNumber)
		}
		return nil
	})
}

func (p *paidHandler) numbers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.paid...)
}

// payInFull sends and pays a new invoice, and returns its number.
func payInFull(t *testing.T, srv *invoicingtest.Server) string {
	t.Helper()
	res := createInvoice(t, srv.Client())
	require.NoError(t, srv.SendInvoice(res.ID))
	_, err := srv.RecordPayment(res.ID, invoicingtest.Payment{Amount: res.Total})
	require.NoError(t, err)
	return res.InvoiceNumber
}

func TestNewHandlerReceiverServesTheUsersHandler(t *testing.T) {
	srv := invoicingtest.NewTestServer(t) // the wall clock: the handler's verifier reads time.Now
	var app paidHandler
	ep := srv.NewHandlerReceiver(app.handler(t), invoicingtest.WithSecret(userSecret),
		invoicingtest.Subscribe(webhooks.EventInvoicePaid, webhooks.EventPaymentReceived))

	number := payInFull(t, srv)

	assert.Equal(t, []string{number}, app.numbers(), "delivered before RecordPayment returned")
	assert.Equal(t, userSecret, ep.Secret())
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/webhooks$`, ep.URL())
	var types []webhooks.EventType
	for _, d := range ep.Deliveries() {
		types = append(types, d.Event)
		assert.Equal(t, invoicingtest.DeliverySucceeded, d.Status)
		assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
	}
	assert.Equal(t, []webhooks.EventType{webhooks.EventPaymentReceived, webhooks.EventInvoicePaid}, types, "only the events subscribed to")
}

func TestNewHandlerReceiverOnAFakeClock(t *testing.T) {
	srv := invoicingtest.NewTestServer(t, invoicingtest.WithClock(invoicingtest.NewFakeClock(receiverStart)))
	var wallClock, serverClock paidHandler
	wall := srv.NewHandlerReceiver(wallClock.handler(t), invoicingtest.WithSecret(userSecret))
	srv.NewHandlerReceiver(serverClock.handler(t, webhooks.WithClock(srv.Now)), invoicingtest.WithSecret(userSecret))

	number := payInFull(t, srv)

	assert.Empty(t, wallClock.numbers(), "deliveries are signed at the fake time, months from the wall clock")
	assert.Equal(t, http.StatusUnauthorized, wall.Deliveries()[0].Attempts[0].StatusCode)
	assert.Equal(t, []string{number}, serverClock.numbers())
}

func TestNewHandlerReceiverWithoutWithSecretSignsWithANewSecret(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	var app paidHandler
	ep := srv.NewHandlerReceiver(app.handler(t))
	assert.Regexp(t, `^[0-9a-f]{64}$`, ep.Secret())
	assert.NotEqual(t, userSecret, ep.Secret())

	payInFull(t, srv)
	assert.Empty(t, app.numbers(), "the handler does not know that secret")
	assert.Equal(t, http.StatusUnauthorized, ep.Deliveries()[0].Attempts[0].StatusCode)
}

func TestNewHandlerReceiverPanicsOnMistakes(t *testing.T) {
	srv := invoicingtest.NewTestServer(t, invoicingtest.WithControl())
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	assert.PanicsWithValue(t, "invoicingtest: NewHandlerReceiver needs a handler", func() { srv.NewHandlerReceiver(nil) })
	assert.Panics(t, func() { srv.NewHandlerReceiver(h, invoicingtest.WithHandlerOptions(webhooks.WithLogger(nil))) })
	assert.Panics(t, func() { srv.NewHandlerReceiver(h, invoicingtest.WithSecret("0123")) })
	assert.Panics(t, func() { srv.NewHandlerReceiver(h, invoicingtest.WithSecret(strings.Repeat("g", 64))) })
	assert.Panics(t, func() { srv.NewHandlerReceiver(h, invoicingtest.Subscribe("invoice.deleted")) })
	assert.Panics(t, func() {
		srv.NewReceiver(func(context.Context, *webhooks.Delivery) error { return nil }, invoicingtest.WithSecret("0123"))
	})

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/_mock", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.FullKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var info struct {
		Webhooks []any `json:"webhooks"`
	}
	require.NoError(t, json.UnmarshalRead(resp.Body, &info))
	assert.Empty(t, info.Webhooks, "the calls that panicked registered no endpoint")
}

func TestNewHandlerReceiverClosesWithTheServer(t *testing.T) {
	srv := invoicingtest.NewServer()
	ep := srv.NewHandlerReceiver(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Close()
	resp, err := http.Post(ep.URL(), "application/json", nil)
	if err == nil {
		resp.Body.Close()
	}
	assert.Error(t, err, "nothing listens any more")
}

func TestNewReceiverWithSecret(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	var got invoicingtest.DeliveryLog
	ep := srv.NewReceiver(got.Handle, invoicingtest.WithSecret(userSecret))
	assert.Equal(t, userSecret, ep.Secret())
	createInvoice(t, srv.Client())
	require.Len(t, got.All(), 1, "verified with the secret given")
}

func TestAddWebhookEndpointWithSecret(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	var app paidHandler
	ts := httptest.NewServer(app.handler(t))
	defer ts.Close()
	ep := srv.AddWebhookEndpointWithSecret(ts.URL, userSecret, webhooks.EventInvoicePaid)
	assert.Equal(t, userSecret, ep.Secret())

	number := payInFull(t, srv)
	assert.Equal(t, []string{number}, app.numbers())

	upper := strings.ToUpper(userSecret)
	assert.Equal(t, upper, srv.AddWebhookEndpointWithSecret(ts.URL, upper).Secret(), "hexadecimal in either case, used as given")
	for _, bad := range []string{"", userSecret[:63], userSecret + "0", "z" + userSecret[1:]} {
		assert.Panics(t, func() { srv.AddWebhookEndpointWithSecret(ts.URL, bad) }, "%q", bad)
	}
	assert.Panics(t, func() { srv.AddWebhookEndpointWithSecret(ts.URL, userSecret, "invoice.deleted") })
}
