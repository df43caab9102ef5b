package invoicingtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// eventTypes lists the types of the events a control action reports.
func eventTypes(r *ControlResult) []webhooks.EventType {
	var types []webhooks.EventType
	for _, e := range r.Events {
		types = append(types, e.Type)
	}
	return types
}

func TestControlClientMakesEveryChange(t *testing.T) {
	srv, ep, log := newControlServer(t)
	ctl := NewControlClient(srv.URL+"/", srv.FullKey, nil)
	ctx := t.Context()

	info, err := ctl.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, &ControlInfo{
		Mock: true, BusinessID: SeedBusinessID, Now: testStart, Today: invoicing.NewDate(2026, time.March, 10),
		Webhooks: []ControlWebhook{{ID: ep.ID(), URL: ep.URL()}},
	}, info)
	assert.True(t, info.Webhooks[0].Subscribed(webhooks.EventBillApproved), "every event")

	// Invoices.
	id, _ := createInvoice(t, srv, nil)["id"].(string) // 101.00
	r, err := ctl.SendInvoice(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, id, r.InvoiceID)
	require.Equal(t, []webhooks.EventType{webhooks.EventInvoiceSent}, eventTypes(r))
	assert.Equal(t, []ControlDelivery{{
		DeliveryID: log.All()[1].ID, EndpointID: ep.ID(), URL: ep.URL(), Status: DeliverySucceeded, StatusCode: http.StatusOK,
	}}, r.Events[0].Deliveries)
	notes := "Thanks!"
	r, err = ctl.UpdateInvoice(ctx, id, InvoiceUpdate{Notes: &notes, DueDate: time.Date(2026, time.April, 30, 15, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	assert.Equal(t, []webhooks.EventType{webhooks.EventInvoiceUpdated}, eventTypes(r))
	assert.Equal(t, "2026-04-30", get(t, srv, "/invoices/"+id).object(t)["due_date"])
	r, err = ctl.RecordPayment(ctx, id, Payment{Amount: dec("12.5"), Method: PaymentCash, ReceivedAt: time.Date(2026, time.March, 9, 8, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	assert.NotEmpty(t, r.PaymentID)
	assert.Equal(t, []webhooks.EventType{webhooks.EventPaymentReceived}, eventTypes(r))
	received := log.All()[3].Event.(*webhooks.PaymentReceived)
	assert.Equal(t, "12.50", received.Amount.StringFixed(2))
	assert.Equal(t, webhooks.PaymentMethod(PaymentCash), received.PaymentMethod)
	assert.Equal(t, time.Date(2026, time.March, 9, 8, 0, 0, 0, time.UTC), received.ReceivedAt)
	r, err = ctl.RecordPayment(ctx, id, Payment{})
	require.NoError(t, err)
	assert.Equal(t, []webhooks.EventType{webhooks.EventPaymentReceived, webhooks.EventInvoicePaid}, eventTypes(r), "the whole amount due")
	other, _ := createInvoice(t, srv, nil)["id"].(string)
	r, err = ctl.VoidInvoice(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, []webhooks.EventType{webhooks.EventInvoiceUpdated}, eventTypes(r))

	// Quotes and bills.
	q, _ := createQuote(t, srv, nil)["id"].(string)
	for _, step := range []struct {
		act  func() (*ControlResult, error)
		want []webhooks.EventType
	}{
		{func() (*ControlResult, error) { return ctl.SendQuote(ctx, q) }, []webhooks.EventType{webhooks.EventQuoteSent}},
		{func() (*ControlResult, error) { return ctl.ViewQuote(ctx, q) }, []webhooks.EventType{webhooks.EventQuoteViewed}},
		{func() (*ControlResult, error) { return ctl.AcceptQuote(ctx, q, "Jo Citizen") }, []webhooks.EventType{webhooks.EventQuoteAccepted, webhooks.EventInvoiceCreated}},
		{func() (*ControlResult, error) { return ctl.UnacceptQuote(ctx, q) }, []webhooks.EventType{webhooks.EventQuoteUnaccepted}},
		{func() (*ControlResult, error) { return ctl.DeclineQuote(ctx, q) }, nil},
	} {
		r, err := step.act()
		require.NoError(t, err)
		assert.Equal(t, q, r.QuoteID)
		assert.Equal(t, step.want, eventTypes(r))
	}
	accepted := log.All()[len(log.All())-3].Event.(*webhooks.QuoteAccepted)
	assert.Equal(t, "Jo Citizen", accepted.AcceptedBy)
	bill, _ := post(t, srv, "/bills", billBody(nil)).requireStatus(t, http.StatusCreated).object(t)["id"].(string)
	r, err = ctl.ApproveBill(ctx, bill)
	require.NoError(t, err)
	assert.Equal(t, bill, r.BillID)
	assert.Equal(t, []webhooks.EventType{webhooks.EventBillApproved}, eventTypes(r))

	// The event feed.
	feed, err := ctl.Events(ctx, info.LastEventSeq)
	require.NoError(t, err)
	require.Len(t, feed.Events, len(log.All()))
	assert.Equal(t, feed.LastEventSeq, feed.Events[len(feed.Events)-1].Seq)
	assert.Equal(t, webhooks.EventInvoiceCreated, feed.Events[0].Type)
	assert.Equal(t, testStart, feed.Events[0].At)
	assert.Equal(t, string(log.All()[0].Body), string(feed.Events[0].Body))

	// The clock.
	adv, err := ctl.AdvanceClock(ctx, "1d")
	require.NoError(t, err)
	assert.Equal(t, &ControlAdvance{
		Now: testStart.Add(24 * time.Hour), Today: invoicing.NewDate(2026, time.March, 11),
		OverdueInvoices: []string{}, ExpiredQuotes: []string{},
	}, adv)
}

func TestControlClientManagesWebhooks(t *testing.T) {
	srv, _ := newServer(t, WithControl())
	ctl := NewControlClient(srv.URL, srv.FullKey, nil)
	ctx := t.Context()
	rc := newReceiver(t)
	secret := strings.Repeat("ab01", 16)

	w, err := ctl.AddWebhook(ctx, ControlWebhookRequest{URL: rc.URL, Events: []webhooks.EventType{webhooks.EventInvoiceSent, webhooks.EventInvoiceCreated}, Secret: secret})
	require.NoError(t, err)
	assert.Equal(t, &ControlWebhook{ID: w.ID, URL: rc.URL, Events: []webhooks.EventType{webhooks.EventInvoiceCreated, webhooks.EventInvoiceSent}, Secret: secret}, w)
	assert.False(t, w.Subscribed(webhooks.EventQuoteSent))

	w, err = ctl.SetWebhookSecret(ctx, w.ID, "")
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}$`, w.Secret)
	assert.Equal(t, secret, w.PreviousSecret, "the answer names the secret replaced, to put it back")
	r, err := ctl.TestWebhook(ctx, w.ID)
	require.NoError(t, err)
	require.Equal(t, []webhooks.EventType{webhooks.EventTest}, eventTypes(r))
	assert.True(t, verify(w.Secret, rc.deliveries()[0]), "signed with the new secret")

	require.NoError(t, ctl.DeleteWebhook(ctx, w.ID))
	info, err := ctl.Info(ctx)
	require.NoError(t, err)
	assert.Empty(t, info.Webhooks)
	var ce *ControlError
	require.ErrorAs(t, ctl.DeleteWebhook(ctx, w.ID), &ce)
	assert.Equal(t, &ControlError{StatusCode: http.StatusNotFound, Detail: "Webhook endpoint not found"}, ce)
}

func TestControlClientErrors(t *testing.T) {
	srv, _, _ := newControlServer(t)
	ctx := t.Context()
	ctl := NewControlClient(srv.URL, srv.FullKey, nil)

	id, _ := createInvoice(t, srv, nil)["id"].(string)
	_, err := ctl.RecordPayment(ctx, id, Payment{Amount: dec("1")})
	var ce *ControlError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, http.StatusConflict, ce.StatusCode)
	assert.EqualError(t, err, "the mock answered 409 Conflict: action not allowed in this status: invoice INV-0001 is draft; payments go to awaiting_payment or overdue invoices")
	_, err = ctl.AdvanceClock(ctx, "soon")
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, http.StatusUnprocessableEntity, ce.StatusCode)
	_, err = ctl.UpdateInvoice(ctx, id, InvoiceUpdate{Status: invoicing.InvoiceStatusVoided})
	assert.EqualError(t, err, "invoicingtest: ControlClient.UpdateInvoice sets no status (voided); VoidInvoice voids")

	_, err = NewControlClient(srv.URL, srv.ReadOnlyKey, nil).Info(ctx)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, http.StatusForbidden, ce.StatusCode)

	plain, _ := newServer(t) // without WithControl, as the service
	_, err = NewControlClient(plain.URL, plain.FullKey, nil).Info(ctx)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, &ControlError{StatusCode: http.StatusNotFound, Detail: "Not Found"}, ce)

	for _, body := range []string{`<html>hello</html>`, `{"mock": false}`} {
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) }))
		t.Cleanup(other.Close)
		_, err = NewControlClient(other.URL, "k", nil).Info(ctx)
		assert.ErrorIs(t, err, ErrNoControl, body)
	}
}
