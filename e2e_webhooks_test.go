package invoicing_test

// Webhooks end to end: the events API.md 6 documents for a quote accepted
// and paid in two payments, verified by webhooks.Handler, then tampering
// and a rotated secret.

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// e2eReceiver is a webhook receiver running webhooks.Handler behind a
// handler that can be swapped (to change the secret it verifies with).
type e2eReceiver struct {
	srv     *httptest.Server
	handler atomic.Pointer[http.Handler]

	mu  sync.Mutex
	got []*webhooks.Delivery
}

func e2eNewReceiver(t *testing.T) *e2eReceiver {
	r := &e2eReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		(*r.handler.Load()).ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// verifyWith makes the receiver verify deliveries with secret.
func (r *e2eReceiver) verifyWith(t *testing.T, secret string) {
	t.Helper()
	v, err := webhooks.NewVerifier(secret)
	require.NoError(t, err)
	h := webhooks.Handler(v, func(_ context.Context, d *webhooks.Delivery) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, d)
		return nil
	})
	r.handler.Store(&h)
}

func (r *e2eReceiver) deliveries() []*webhooks.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func e2eEventAs[E webhooks.Event](t *testing.T, d *webhooks.Delivery) E {
	t.Helper()
	e, ok := d.Event.(E)
	require.True(t, ok, "delivery %s is %T (%s)", d.ID, d.Event, d.Type)
	return e
}

func TestE2EWebhooks(t *testing.T) {
	ctx := t.Context()
	clock := invoicingtest.NewFakeClock(time.Now())
	srv, c := e2eServer(t, invoicingtest.WithClock(clock), invoicingtest.WithQuoteConversion(invoicingtest.ConvertToAwaitingPaymentInvoice))
	rcv := e2eNewReceiver(t)
	ep := srv.AddWebhookEndpoint(rcv.srv.URL + "/hooks")
	rcv.verifyWith(t, ep.Secret())

	q, err := c.Quotes.Create(ctx, e2eQuote(invoicingtest.SeedClientID, e2eLine("Kitchen fit-out", "1", "4200"), e2eLine("Site visits", "3", "180")))
	require.NoError(t, err)
	accepted, err := srv.AcceptQuote(q.ID, invoicingtest.AcceptOptions{ByStaff: true, OrderNumber: "PO-778"})
	require.NoError(t, err)
	inv, err := c.Invoices.Get(ctx, accepted.InvoiceID)
	require.NoError(t, err)
	require.Equal(t, invoicing.InvoiceStatusAwaitingPayment, inv.Status)

	partial := inv.Total.Div(decimal.NewFromInt(3)).Round(2)
	rest := inv.Total.Sub(partial)
	_, err = srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: partial})
	require.NoError(t, err)
	mid, err := c.Invoices.Get(ctx, inv.ID)
	require.NoError(t, err)
	e2eDecEqual(t, partial, mid.AmountPaid)
	e2eDecEqual(t, rest, mid.AmountDue)
	assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, mid.Status, "a partial payment leaves a balance")
	_, err = srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: rest, Method: invoicingtest.PaymentCard})
	require.NoError(t, err)

	paid, err := c.Invoices.Get(ctx, inv.ID)
	require.NoError(t, err)
	assert.Equal(t, invoicing.InvoiceStatusPaid, paid.Status)
	e2eDecEqual(t, inv.Total, paid.AmountPaid)
	assert.True(t, paid.AmountDue.IsZero())

	// Deliveries are synchronous: every event has arrived, in order (API.md
	// 6.1: a partial payment fires payment.received only, the final one
	// invoice.paid too).
	got := rcv.deliveries()
	var types []webhooks.EventType
	for _, d := range got {
		types = append(types, d.Type)
	}
	require.Equal(t, []webhooks.EventType{
		webhooks.EventQuoteCreated, webhooks.EventQuoteAccepted, webhooks.EventInvoiceCreated,
		webhooks.EventPaymentReceived, webhooks.EventPaymentReceived, webhooks.EventInvoicePaid,
	}, types)

	qc := e2eEventAs[*webhooks.QuoteCreated](t, got[0])
	assert.Equal(t, q.ID, qc.QuoteID)
	assert.Equal(t, q.QuoteNumber, qc.QuoteNumber)
	assert.Equal(t, invoicing.QuoteStatusDraft, qc.Status)
	assert.Equal(t, q.ClientName, qc.ClientName)
	assert.Equal(t, q.IssueDate, qc.IssueDate)
	assert.Equal(t, q.ValidUntil, qc.ValidUntil)
	e2eDecEqual(t, q.Subtotal, qc.Subtotal)
	e2eDecEqual(t, q.TaxTotal, qc.TaxAmount)
	e2eDecEqual(t, q.Total, qc.Total)
	require.Len(t, qc.LineItems, len(q.LineItems))
	for i, l := range q.LineItems {
		assert.Equal(t, l.ID, qc.LineItems[i].ID)
		e2eDecEqual(t, l.Amount, qc.LineItems[i].Total)
		e2eDecEqual(t, l.TaxAmount, qc.LineItems[i].TaxAmount)
	}
	assert.Nil(t, qc.QuotePublicURL, "never sent: no share link yet")

	qa := e2eEventAs[*webhooks.QuoteAccepted](t, got[1])
	assert.Equal(t, q.ID, qa.QuoteID)
	assert.Equal(t, invoicing.QuoteStatusAccepted, qa.Status)
	assert.Nil(t, qa.AcceptingContact, "accepted by staff")
	assert.Equal(t, "PO-778", qa.AcceptanceOrderNumber)
	require.NotNil(t, qa.InvoiceID)
	require.NotNil(t, qa.InvoiceNumber)
	require.NotNil(t, qa.InvoiceStatus)
	assert.Equal(t, inv.ID, *qa.InvoiceID)
	assert.Equal(t, inv.InvoiceNumber, *qa.InvoiceNumber)
	assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, *qa.InvoiceStatus)
	assert.NotNil(t, qa.InvoiceShareURL, "an awaiting_payment conversion has a payment link")
	e2eDecEqual(t, inv.Total, qa.Total)

	ic := e2eEventAs[*webhooks.InvoiceCreated](t, got[2])
	assert.Equal(t, inv.ID, ic.InvoiceID)
	assert.Equal(t, inv.InvoiceNumber, ic.InvoiceNumber)
	assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, ic.Status)
	e2eDecEqual(t, inv.Total, ic.Total)

	for i, want := range []struct {
		amount decimal.Decimal
		method webhooks.PaymentMethod
	}{{partial, webhooks.PaymentMethodBankTransfer}, {rest, invoicingtest.PaymentCard}} {
		pr := e2eEventAs[*webhooks.PaymentReceived](t, got[3+i])
		assert.Equal(t, inv.ID, pr.InvoiceID)
		e2eDecEqual(t, want.amount, pr.Amount)
		assert.Equal(t, want.method, pr.PaymentMethod)
		require.NotNil(t, pr.InvoiceNumber)
		assert.Equal(t, inv.InvoiceNumber, *pr.InvoiceNumber)
	}
	ip := e2eEventAs[*webhooks.InvoicePaid](t, got[5])
	assert.Equal(t, inv.ID, ip.InvoiceID)
	e2eDecEqual(t, inv.Total, ip.AmountPaid)

	sent := ep.Deliveries()
	require.Len(t, sent, len(got))
	for i, d := range sent {
		assert.Equal(t, d.ID, got[i].ID, "the delivery id reaches the handler")
		assert.Equal(t, invoicingtest.DeliverySucceeded, d.Status)
		require.Len(t, d.Attempts, 1)
		assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
	}

	t.Run("tampered body is rejected", func(t *testing.T) {
		body := got[2].Body
		tampered := bytes.Replace(body, []byte(`"total":"`), []byte(`"total":"1`), 1)
		require.NotEqual(t, body, tampered)
		post := func(b []byte) int {
			ts, sig := webhooks.Sign(ep.Secret(), time.Now(), body) // signed over the original body
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, rcv.srv.URL+"/hooks", bytes.NewReader(b))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(webhooks.HeaderEvent, string(webhooks.EventInvoiceCreated))
			req.Header.Set(webhooks.HeaderDelivery, uuid.NewString())
			req.Header.Set(webhooks.HeaderTimestamp, ts)
			req.Header.Set(webhooks.HeaderSignature, sig)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		n := len(rcv.deliveries())
		assert.Equal(t, http.StatusUnauthorized, post(tampered))
		assert.Len(t, rcv.deliveries(), n, "the handler function never saw it")
		assert.Equal(t, http.StatusOK, post(body), "the untouched body with the same headers passes")
	})

	t.Run("rotated secret: old secret answers 401, the retry succeeds with the new one", func(t *testing.T) {
		oldSecret := ep.Secret()
		newSecret := ep.RotateSecret()
		require.NotEqual(t, oldSecret, newSecret)
		n := len(rcv.deliveries())

		created, err := c.Clients.Create(ctx, &invoicing.ContactCreateParams{Name: "Rotation Test Ltd", Email: "ap@rotation.example"})
		require.NoError(t, err)
		last := ep.Deliveries()[len(ep.Deliveries())-1]
		assert.Equal(t, webhooks.EventContactCreated, last.Event)
		assert.Equal(t, invoicingtest.DeliveryPending, last.Status)
		require.Len(t, last.Attempts, 1)
		assert.Equal(t, http.StatusUnauthorized, last.Attempts[0].StatusCode, "the receiver still on the old secret refuses it")
		assert.Equal(t, last.Attempts[0].At.Add(invoicingtest.RetrySchedule()[0]), last.NextRetryAt, "a retry is scheduled after 1 minute")
		assert.Len(t, rcv.deliveries(), n)

		rcv.verifyWith(t, newSecret)
		clock.Advance(time.Minute)
		retried := ep.Deliveries()[len(ep.Deliveries())-1]
		assert.Equal(t, last.ID, retried.ID)
		assert.Equal(t, invoicingtest.DeliverySucceeded, retried.Status)
		require.Len(t, retried.Attempts, 2)
		assert.Equal(t, http.StatusOK, retried.Attempts[1].StatusCode)

		now := rcv.deliveries()
		require.Len(t, now, n+1)
		assert.Equal(t, last.ID, now[n].ID, "same delivery id on the retry")
		cc := e2eEventAs[*webhooks.ContactCreated](t, now[n])
		assert.Equal(t, created.ID, cc.ContactID)
		assert.Equal(t, webhooks.ContactTypeClient, cc.ContactType)
		assert.Equal(t, "Rotation Test Ltd", cc.Name)
	})
}
