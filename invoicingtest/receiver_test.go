package invoicingtest_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// received collects the deliveries a receiver's function was given.
type received struct {
	mu         sync.Mutex
	deliveries []*webhooks.Delivery
	fail       error // returned by the function while set
}

func (r *received) handle(_ context.Context, d *webhooks.Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deliveries = append(r.deliveries, d)
	return r.fail
}

func (r *received) all() []*webhooks.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*webhooks.Delivery(nil), r.deliveries...)
}

func (r *received) setFail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = err
}

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
	var got received
	ep := srv.NewReceiver(got.handle)

	res := createInvoice(t, srv.Client())

	deliveries := got.all()
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
	var got received
	srv.NewReceiver(got.handle, invoicingtest.Subscribe(webhooks.EventPaymentReceived, webhooks.EventInvoicePaid))

	res := createInvoice(t, srv.Client())
	require.NoError(t, srv.SendInvoice(res.ID))
	_, err := srv.RecordPayment(res.ID, invoicingtest.Payment{Amount: res.Total})
	require.NoError(t, err)

	var types []webhooks.EventType
	for _, d := range got.all() {
		types = append(types, d.Type)
	}
	assert.Equal(t, []webhooks.EventType{webhooks.EventPaymentReceived, webhooks.EventInvoicePaid}, types)
	assert.Panics(t, func() { srv.NewReceiver(got.handle, invoicingtest.Subscribe("invoice.deleted")) })
	assert.Panics(t, func() { srv.NewReceiver(nil) })
}

func TestNewReceiverFailuresAreRetriedOnTheClock(t *testing.T) {
	clock := invoicingtest.NewFakeClock(receiverStart)
	srv := invoicingtest.NewTestServer(t, invoicingtest.WithClock(clock))
	var got received
	got.setFail(errors.New("database down"))
	ep := srv.NewReceiver(got.handle)

	createInvoice(t, srv.Client())
	d := ep.Deliveries()[0]
	assert.Equal(t, http.StatusInternalServerError, d.Attempts[0].StatusCode, "an error from the function answers 500")
	assert.Equal(t, invoicingtest.DeliveryPending, d.Status)

	got.setFail(nil)
	clock.Advance(time.Minute)
	d = ep.Deliveries()[0]
	assert.Equal(t, invoicingtest.DeliverySucceeded, d.Status, "the retry a minute later is verified on the fake clock")
	assert.Len(t, got.all(), 2)
}

func TestNewReceiverKeepsItsSecretAfterARotation(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	var got received
	ep := srv.NewReceiver(got.handle)
	ep.RotateSecret()

	d, err := ep.Test()
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, d.Attempts[0].StatusCode, "as a receiver not given the new secret")
	assert.Empty(t, got.all())
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
	var got received
	ep := srv.NewReceiver(got.handle, invoicingtest.WithHandlerOptions(webhooks.WithLogger(logger)))

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
