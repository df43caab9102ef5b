package invoicingtest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// newControlServer starts a server with the control endpoints on a fake
// clock, and a receiver (NewReceiver) subscribed to every event.
func newControlServer(t *testing.T, opts ...Option) (*Server, *WebhookEndpoint, *DeliveryLog) {
	t.Helper()
	srv, _ := newServer(t, append([]Option{WithControl()}, opts...)...)
	var log DeliveryLog
	return srv, srv.NewReceiver(log.Handle), &log
}

// control calls a control endpoint (path after /_mock) with the full key.
func control(t *testing.T, srv *Server, method, path string, body any) response {
	t.Helper()
	return call(t, srv, method, "/_mock"+path, srv.FullKey, body)
}

// requireEvents checks that the action's answer reports exactly the events
// types, in order, each delivered once to ep and succeeded, and that they are
// the last deliveries the receiver got, with the same delivery ids. It
// returns those deliveries.
func requireEvents(t *testing.T, answer map[string]any, ep *WebhookEndpoint, log *DeliveryLog, types ...webhooks.EventType) []*webhooks.Delivery {
	t.Helper()
	events := list(t, answer, "events")
	require.Len(t, events, len(types), "events: %v", answer["events"])
	got := log.All()
	require.GreaterOrEqual(t, len(got), len(types))
	got = got[len(got)-len(types):]
	for i, e := range events {
		assert.Equal(t, string(types[i]), e["type"])
		assert.Equal(t, types[i], got[i].Type, "delivered in the order raised")
		deliveries := list(t, e, "deliveries")
		require.Len(t, deliveries, 1)
		assert.Equal(t, map[string]any{
			"delivery_id": got[i].ID, "endpoint_id": ep.ID(), "url": ep.URL(),
			"status": DeliverySucceeded, "status_code": num("200"),
		}, deliveries[0])
	}
	return got
}

func TestControlEndpointsAreServedOnlyWithWithControl(t *testing.T) {
	srv, _ := newServer(t)
	for _, path := range []string{"", "/clock/advance", "/webhooks"} {
		r := call(t, srv, http.MethodPost, "/_mock"+path, srv.FullKey, "{}").requireStatus(t, http.StatusNotFound)
		assert.Equal(t, "Not Found", r.detail(t))
	}
	call(t, srv, http.MethodGet, "/_mock", srv.FullKey, nil).requireStatus(t, http.StatusNotFound)

	srv, _, _ = newControlServer(t)
	r := control(t, srv, http.MethodGet, "/clocks", nil).requireStatus(t, http.StatusNotFound)
	assert.Equal(t, "Not Found", r.detail(t), "an unknown control path")
	r = control(t, srv, http.MethodGet, "/clock/advance", nil).requireStatus(t, http.StatusMethodNotAllowed)
	assert.Equal(t, "POST", r.header.Get("Allow"))
	r = control(t, srv, http.MethodPut, "/webhooks/x", nil).requireStatus(t, http.StatusMethodNotAllowed)
	assert.Equal(t, "DELETE", r.header.Get("Allow"))
}

func TestControlNeedsAKeyWithEveryScope(t *testing.T) {
	srv, _, _ := newControlServer(t)
	r := call(t, srv, http.MethodGet, "/_mock", "", nil).requireStatus(t, http.StatusUnauthorized)
	assert.Equal(t, "Invalid or missing API key", r.detail(t))
	call(t, srv, http.MethodGet, "/_mock", "sk_test_unknown", nil).requireStatus(t, http.StatusUnauthorized)
	r = call(t, srv, http.MethodPost, "/_mock/clock/advance", srv.ReadOnlyKey, map[string]any{"by": "1d"}).requireStatus(t, http.StatusForbidden)
	assert.Equal(t, "API key is missing the required scope: invoices:write", r.detail(t))
	var allButBills []string
	for _, sc := range AllScopes() {
		if sc != ScopeBillsWrite {
			allButBills = append(allButBills, sc)
		}
	}
	r = call(t, srv, http.MethodGet, "/_mock", srv.NewAPIKey(allButBills...), nil).requireStatus(t, http.StatusForbidden)
	assert.Equal(t, "API key is missing the required scope: bills:write", r.detail(t))
	assert.Equal(t, testStart, srv.Now(), "nothing was advanced")
	call(t, srv, http.MethodGet, "/_mock", srv.NewAPIKey(AllScopes()...), nil).requireStatus(t, http.StatusOK)
}

func TestControlInfo(t *testing.T) {
	srv, ep, _ := newControlServer(t)
	rc := newReceiver(t)
	some := srv.AddWebhookEndpoint(rc.URL, webhooks.EventQuoteSent, webhooks.EventInvoiceCreated)
	some.Pause()

	info := control(t, srv, http.MethodGet, "", nil).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, map[string]any{
		"mock": true, "business_id": SeedBusinessID,
		"now": "2026-03-10T09:30:00Z", "today": "2026-03-10",
		"webhooks": []any{
			map[string]any{"id": ep.ID(), "url": ep.URL(), "events": nil, "paused": false},
			map[string]any{"id": some.ID(), "url": rc.URL, "events": []any{"invoice.created", "quote.sent"}, "paused": true},
		},
		"last_event_seq": num("0"),
	}, info, "secrets are never listed")
}

func TestControlWebhooks(t *testing.T) {
	srv, _ := newServer(t, WithControl())
	rc := newReceiver(t)
	secret := strings.Repeat("ab01", 16)

	w := control(t, srv, http.MethodPost, "/webhooks", map[string]any{
		"url": rc.URL, "events": []string{"invoice.sent", "invoice.created"}, "secret": secret, "name": "ignored",
	}).requireStatus(t, http.StatusCreated).object(t)
	id, _ := w["id"].(string)
	assert.Equal(t, map[string]any{
		"id": id, "url": rc.URL, "events": []any{"invoice.created", "invoice.sent"}, "paused": false, "secret": secret,
	}, w)

	createInvoice(t, srv, nil)
	createQuote(t, srv, nil)
	require.Len(t, rc.deliveries(), 1, "only the events subscribed to")
	assert.True(t, verify(secret, rc.deliveries()[0]), "signed with the secret given")

	// A new secret, given or made up; the old one is invalid at once.
	newSecret := strings.Repeat("CD23", 16)
	w = control(t, srv, http.MethodPost, "/webhooks/"+id+"/secret", map[string]any{"secret": newSecret}).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, newSecret, w["secret"])
	test := control(t, srv, http.MethodPost, "/webhooks/"+id+"/test", nil).requireStatus(t, http.StatusOK).object(t)
	got := rc.deliveries()[1]
	assert.True(t, verify(newSecret, got))
	assert.False(t, verify(secret, got))
	assert.Equal(t, "test", got.header.Get("X-Service-Event"))
	assert.Equal(t, map[string]any{"events": []any{map[string]any{"type": "test", "deliveries": []any{map[string]any{
		"delivery_id": got.header.Get("X-Service-Delivery"), "endpoint_id": id, "url": rc.URL,
		"status": DeliverySucceeded, "status_code": num("200"),
	}}}}}, test)

	w = control(t, srv, http.MethodPost, "/webhooks/"+id+"/secret", "").requireStatus(t, http.StatusOK).object(t)
	made, _ := w["secret"].(string)
	assert.Regexp(t, `^[0-9a-f]{64}$`, made)
	assert.NotEqual(t, newSecret, made)

	// Every event when none is given; a made-up secret.
	w = control(t, srv, http.MethodPost, "/webhooks", map[string]any{"url": "https://example.invalid/hooks"}).requireStatus(t, http.StatusCreated).object(t)
	assert.Nil(t, w["events"])
	assert.Regexp(t, `^[0-9a-f]{64}$`, w["secret"])
	other, _ := w["id"].(string)

	// A failed test delivery is reported with its error.
	rc.setStatuses(http.StatusServiceUnavailable)
	test = control(t, srv, http.MethodPost, "/webhooks/"+id+"/test", nil).requireStatus(t, http.StatusOK).object(t)
	d := list(t, list(t, test, "events")[0], "deliveries")[0]
	assert.Equal(t, DeliveryFailed, d["status"], "test deliveries are tried once")
	assert.Equal(t, num("503"), d["status_code"])

	control(t, srv, http.MethodDelete, "/webhooks/"+id, nil).requireStatus(t, http.StatusNoContent)
	for _, r := range []response{
		control(t, srv, http.MethodDelete, "/webhooks/"+id, nil),
		control(t, srv, http.MethodPost, "/webhooks/"+id+"/test", nil),
		control(t, srv, http.MethodPost, "/webhooks/"+id+"/secret", nil),
	} {
		r.requireStatus(t, http.StatusNotFound)
		assert.Equal(t, "Webhook endpoint not found", r.detail(t))
	}
	hooks := list(t, control(t, srv, http.MethodGet, "", nil).object(t), "webhooks")
	require.Len(t, hooks, 1)
	assert.Equal(t, other, hooks[0]["id"])
}

func TestControlWebhookMistakes(t *testing.T) {
	srv, _ := newServer(t, WithControl())
	for _, tc := range []struct {
		body   any
		status int
		detail string
	}{
		{`{"url": `, http.StatusBadRequest, "Malformed JSON body"},
		{`[]`, http.StatusBadRequest, "Malformed JSON body"},
		{map[string]any{"url": 5}, http.StatusBadRequest, "url"},
		{map[string]any{"url": "http://x", "events": "invoice.paid"}, http.StatusBadRequest, "events"},
		{`{}`, http.StatusUnprocessableEntity, "url is required"},
		{map[string]any{"url": "ftp://example.com/x"}, http.StatusUnprocessableEntity, "http:// or https://"},
		{map[string]any{"url": "/hooks"}, http.StatusUnprocessableEntity, "http:// or https://"},
		{map[string]any{"url": "http://x", "events": []string{"invoice.payed"}}, http.StatusUnprocessableEntity, `unknown event "invoice.payed" (did you mean "invoice.paid"?); endpoints subscribe to invoice.created,`},
		{map[string]any{"url": "http://x", "events": []string{"test"}}, http.StatusUnprocessableEntity, `unknown event "test"; endpoints`},
		{map[string]any{"url": "http://x", "events": []string{}}, http.StatusUnprocessableEntity, "at least one event"},
		{map[string]any{"url": "http://x", "secret": "abc"}, http.StatusUnprocessableEntity, "secret must be 64 hexadecimal characters, got 3"},
		{map[string]any{"url": "http://x", "secret": strings.Repeat("x", 64)}, http.StatusUnprocessableEntity, "secret must be 64 hexadecimal characters"},
	} {
		r := control(t, srv, http.MethodPost, "/webhooks", tc.body).requireStatus(t, tc.status)
		assert.Contains(t, r.detail(t), tc.detail, "%v", tc.body)
	}
	assert.Empty(t, list(t, control(t, srv, http.MethodGet, "", nil).object(t), "webhooks"), "nothing was added")

	ep := srv.AddWebhookEndpoint("http://127.0.0.1:1/")
	before := ep.Secret()
	r := control(t, srv, http.MethodPost, "/webhooks/"+ep.ID()+"/secret", map[string]any{"secret": "0"}).requireStatus(t, http.StatusUnprocessableEntity)
	assert.Contains(t, r.detail(t), "64 hexadecimal characters")
	assert.Equal(t, before, ep.Secret())
	ep.Pause()
	r = control(t, srv, http.MethodPost, "/webhooks/"+ep.ID()+"/test", nil).requireStatus(t, http.StatusConflict)
	assert.Equal(t, "webhook endpoint is paused", r.detail(t))
}

func TestControlInvoiceActions(t *testing.T) {
	srv, ep, log := newControlServer(t)
	inv := createInvoice(t, srv, nil) // draft, total 101.00
	id, _ := inv["id"].(string)
	number, _ := inv["invoice_number"].(string)

	a := control(t, srv, http.MethodPost, "/invoices/"+id+"/send", nil).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, id, a["invoice_id"])
	sent := requireEvents(t, a, ep, log, webhooks.EventInvoiceSent)[0].Event.(*webhooks.InvoiceSent)
	assert.Equal(t, id, sent.InvoiceID)
	assert.Equal(t, number, sent.InvoiceNumber)
	assert.Equal(t, testStart, sent.SentAt)

	a = control(t, srv, http.MethodPatch, "/invoices/"+id, map[string]any{"notes": "Thanks!", "due_date": "2026-04-30"}).requireStatus(t, http.StatusOK).object(t)
	updated := requireEvents(t, a, ep, log, webhooks.EventInvoiceUpdated)[0].Event.(*webhooks.InvoiceUpdated)
	assert.Equal(t, id, updated.InvoiceID)
	got := get(t, srv, "/invoices/"+id).object(t)
	assert.Equal(t, "Thanks!", got["notes"])
	assert.Equal(t, "2026-04-30", got["due_date"])
	assert.Equal(t, "awaiting_payment", got["status"])

	a = control(t, srv, http.MethodPost, "/invoices/"+id+"/payments", map[string]any{
		"amount": "12.50", "payment_method": "cash", "received_at": "2026-03-09T08:00:00+02:00",
	}).requireStatus(t, http.StatusCreated).object(t)
	paymentID, _ := a["payment_id"].(string)
	assert.Equal(t, id, a["invoice_id"])
	received := requireEvents(t, a, ep, log, webhooks.EventPaymentReceived)[0].Event.(*webhooks.PaymentReceived)
	assert.Equal(t, paymentID, received.PaymentID)
	assert.Equal(t, "12.50", received.Amount.StringFixed(2))
	assert.Equal(t, "cash", string(received.PaymentMethod))
	assert.Equal(t, time.Date(2026, time.March, 9, 6, 0, 0, 0, time.UTC), received.ReceivedAt.UTC())

	// The rest, by default: the whole amount due, by bank transfer, now.
	a = control(t, srv, http.MethodPost, "/invoices/"+id+"/payments", nil).requireStatus(t, http.StatusCreated).object(t)
	deliveries := requireEvents(t, a, ep, log, webhooks.EventPaymentReceived, webhooks.EventInvoicePaid)
	rest := deliveries[0].Event.(*webhooks.PaymentReceived)
	assert.Equal(t, "88.50", rest.Amount.StringFixed(2))
	assert.Equal(t, PaymentBankTransfer, string(rest.PaymentMethod))
	assert.Equal(t, testStart, rest.ReceivedAt)
	assert.Equal(t, "101.00", deliveries[1].Event.(*webhooks.InvoicePaid).AmountPaid.StringFixed(2))
	assert.Equal(t, "paid", get(t, srv, "/invoices/"+id).object(t)["status"])

	r := control(t, srv, http.MethodPost, "/invoices/"+id+"/payments", map[string]any{"amount": 1}).requireStatus(t, http.StatusConflict)
	assert.Equal(t, "action not allowed in this status: invoice "+number+" is paid; payments go to awaiting_payment or overdue invoices", r.detail(t))
	control(t, srv, http.MethodPost, "/invoices/"+id+"/void", nil).requireStatus(t, http.StatusConflict)

	// Void, then sending is refused.
	other, _ := createInvoice(t, srv, nil)["id"].(string)
	a = control(t, srv, http.MethodPost, "/invoices/"+other+"/void", "{}").requireStatus(t, http.StatusOK).object(t)
	voided := requireEvents(t, a, ep, log, webhooks.EventInvoiceUpdated)[0].Event.(*webhooks.InvoiceUpdated)
	assert.Equal(t, "voided", string(voided.Status))
	r = control(t, srv, http.MethodPost, "/invoices/"+other+"/send", nil).requireStatus(t, http.StatusConflict)
	assert.Contains(t, r.detail(t), "is voided")
	assert.Len(t, log.All(), 8, "refused actions deliver nothing")
}

func TestControlInvoiceMistakes(t *testing.T) {
	srv, _, log := newControlServer(t)
	draft, _ := createInvoice(t, srv, nil)["id"].(string)
	open, _ := createInvoice(t, srv, map[string]any{"status": "awaiting_payment"})["id"].(string)
	seen := len(log.All())

	r := control(t, srv, http.MethodPost, "/invoices/"+draft+"/payments", nil).requireStatus(t, http.StatusConflict)
	assert.Contains(t, r.detail(t), "is draft", "a draft takes no payments")

	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		detail       string
	}{
		{http.MethodPost, "/invoices/" + open + "/payments", map[string]any{"amount": "abc"}, 422, `amount must be a decimal number such as 12.50, got "abc"`},
		{http.MethodPost, "/invoices/" + open + "/payments", map[string]any{"amount": num("0")}, 422, "payment amount 0.00 must be greater than 0 and at most the amount due 101.00"},
		{http.MethodPost, "/invoices/" + open + "/payments", map[string]any{"amount": "101.01"}, 422, "at most the amount due 101.00"},
		{http.MethodPost, "/invoices/" + open + "/payments", map[string]any{"amount": num("1.005")}, 422, "at most 2 decimal places"},
		{http.MethodPost, "/invoices/" + open + "/payments", map[string]any{"amount": num("1e13")}, 422, "less than"},
		{http.MethodPost, "/invoices/" + open + "/payments", map[string]any{"received_at": "yesterday"}, 422, "received_at must be an RFC 3339 datetime"},
		{http.MethodPost, "/invoices/" + open + "/payments", map[string]any{"amount": true}, 400, "amount"},
		{http.MethodPost, "/invoices/" + open + "/payments", `{"amount": 5`, 400, "Malformed JSON body"},
		{http.MethodPatch, "/invoices/" + open, `{}`, 422, "give notes, due_date or both"},
		{http.MethodPatch, "/invoices/" + open, nil, 422, "give notes, due_date or both"},
		{http.MethodPatch, "/invoices/" + open, map[string]any{"due_date": "2026-02-30"}, 422, "due_date must be a date"},
		{http.MethodPatch, "/invoices/" + open, map[string]any{"due_date": "2026-03-01"}, 422, "is before the issue date"},
		{http.MethodPatch, "/invoices/" + open, map[string]any{"notes": 3}, 400, "notes"},
		{http.MethodPost, "/invoices/" + open + "/send", `nope`, 400, "Malformed JSON body"},
		{http.MethodPost, "/invoices/00000000-0000-4000-8000-000000000000/send", nil, 404, "Invoice not found"},
		{http.MethodPost, "/invoices/nope/void", nil, 404, "Invoice not found"},
		{http.MethodPatch, "/invoices/nope", map[string]any{"notes": "x"}, 404, "Invoice not found"},
		{http.MethodPost, "/invoices/nope/payments", nil, 404, "Invoice not found"},
	} {
		r := control(t, srv, tc.method, tc.path, tc.body).requireStatus(t, tc.status)
		assert.Contains(t, r.detail(t), tc.detail, "%s %s %v", tc.method, tc.path, tc.body)
	}
	assert.Len(t, log.All(), seen, "nothing was delivered")
	assert.Equal(t, num("0.00"), get(t, srv, "/invoices/"+open).object(t)["amount_paid"])
}

func TestControlQuoteActions(t *testing.T) {
	srv, ep, log := newControlServer(t)
	q := createQuote(t, srv, nil)
	id, _ := q["id"].(string)

	a := control(t, srv, http.MethodPost, "/quotes/"+id+"/send", nil).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, id, a["quote_id"])
	sent := requireEvents(t, a, ep, log, webhooks.EventQuoteSent)[0].Event.(*webhooks.QuoteSent)
	assert.Equal(t, id, sent.QuoteID)
	assert.Equal(t, "sent", string(sent.Status))

	a = control(t, srv, http.MethodPost, "/quotes/"+id+"/view", nil).requireStatus(t, http.StatusOK).object(t)
	viewed := requireEvents(t, a, ep, log, webhooks.EventQuoteViewed)[0].Event.(*webhooks.QuoteViewed)
	assert.Equal(t, 1, viewed.ViewCount)

	a = control(t, srv, http.MethodPost, "/quotes/"+id+"/accept", map[string]any{"accepted_by": "Jo Citizen"}).requireStatus(t, http.StatusOK).object(t)
	deliveries := requireEvents(t, a, ep, log, webhooks.EventQuoteAccepted, webhooks.EventInvoiceCreated)
	accepted := deliveries[0].Event.(*webhooks.QuoteAccepted)
	created := deliveries[1].Event.(*webhooks.InvoiceCreated)
	assert.Equal(t, "Jo Citizen", accepted.AcceptedBy)
	assert.NotNil(t, accepted.AcceptingContact, "a sent quote is accepted by its recipient")
	assert.Equal(t, created.InvoiceID, a["invoice_id"])
	assert.Equal(t, created.InvoiceNumber, a["invoice_number"])
	assert.Equal(t, "draft", a["invoice_status"])
	assert.Equal(t, created.InvoiceID, *accepted.InvoiceID)

	r := control(t, srv, http.MethodPost, "/quotes/"+id+"/accept", nil).requireStatus(t, http.StatusConflict)
	assert.Contains(t, r.detail(t), "action not allowed in this status: quote QU-0001 is accepted")

	a = control(t, srv, http.MethodPost, "/quotes/"+id+"/unaccept", nil).requireStatus(t, http.StatusOK).object(t)
	unaccepted := requireEvents(t, a, ep, log, webhooks.EventQuoteUnaccepted)[0].Event.(*webhooks.QuoteUnaccepted)
	assert.Equal(t, "accepted", string(unaccepted.PreviousStatus))
	assert.Equal(t, "sent", get(t, srv, "/quotes/"+id).object(t)["status"])

	seen := len(log.All())
	a = control(t, srv, http.MethodPost, "/quotes/"+id+"/decline", nil).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, map[string]any{"quote_id": id, "events": []any{}}, a)
	assert.Len(t, log.All(), seen, "no event is documented for declining")
	got := get(t, srv, "/quotes/"+id).object(t)
	assert.Equal(t, "declined", got["status"])
	assert.Equal(t, "2026-03-10T09:30:00Z", got["updated_at"])
	control(t, srv, http.MethodPost, "/quotes/"+id+"/decline", nil).requireStatus(t, http.StatusConflict)
	control(t, srv, http.MethodPost, "/quotes/"+id+"/unaccept", nil).requireStatus(t, http.StatusConflict)

	// A draft is accepted by staff; without conversion no invoice is named.
	srv.SetQuoteConversion(ConversionFails)
	draft, _ := createQuote(t, srv, nil)["id"].(string)
	a = control(t, srv, http.MethodPost, "/quotes/"+draft+"/accept", "").requireStatus(t, http.StatusOK).object(t)
	accepted = requireEvents(t, a, ep, log, webhooks.EventQuoteAccepted)[0].Event.(*webhooks.QuoteAccepted)
	assert.Nil(t, accepted.AcceptingContact, "accepted by staff on the client's behalf")
	assert.Equal(t, "Staff", accepted.AcceptedBy)
	assert.NotContains(t, a, "invoice_id")
	assert.NotContains(t, a, "invoice_number")
	assert.NotContains(t, a, "invoice_status")

	other, _ := createQuote(t, srv, nil)["id"].(string)
	r = control(t, srv, http.MethodPost, "/quotes/"+other+"/view", nil).requireStatus(t, http.StatusConflict)
	assert.Contains(t, r.detail(t), "send it first")
	for _, action := range []string{"send", "view", "accept", "decline", "unaccept"} {
		r = control(t, srv, http.MethodPost, "/quotes/nope/"+action, nil).requireStatus(t, http.StatusNotFound)
		assert.Equal(t, "Quote not found", r.detail(t))
	}
	control(t, srv, http.MethodPost, "/quotes/"+other+"/accept", map[string]any{"accepted_by": 1}).requireStatus(t, http.StatusBadRequest)
}

func TestControlConvertingToAnAwaitingPaymentInvoice(t *testing.T) {
	srv, ep, log := newControlServer(t, WithQuoteConversion(ConvertToAwaitingPaymentInvoice))
	id, _ := createQuote(t, srv, nil)["id"].(string)
	a := control(t, srv, http.MethodPost, "/quotes/"+id+"/accept", nil).requireStatus(t, http.StatusOK).object(t)
	requireEvents(t, a, ep, log, webhooks.EventQuoteAccepted, webhooks.EventInvoiceCreated)
	assert.Equal(t, "awaiting_payment", a["invoice_status"])
}

func TestControlApproveBill(t *testing.T) {
	srv, ep, log := newControlServer(t)
	id, _ := post(t, srv, "/bills", billBody(nil)).requireStatus(t, http.StatusCreated).object(t)["id"].(string)

	a := control(t, srv, http.MethodPost, "/bills/"+id+"/approve", nil).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, id, a["bill_id"])
	approved := requireEvents(t, a, ep, log, webhooks.EventBillApproved)[0].Event.(*webhooks.BillApproved)
	assert.Equal(t, id, approved.BillID)
	assert.Equal(t, testStart, approved.ApprovedAt)
	assert.Equal(t, "approved", get(t, srv, "/bills/"+id).object(t)["status"])

	r := control(t, srv, http.MethodPost, "/bills/"+id+"/approve", nil).requireStatus(t, http.StatusConflict)
	assert.Contains(t, r.detail(t), "is approved")
	r = control(t, srv, http.MethodPost, "/bills/nope/approve", nil).requireStatus(t, http.StatusNotFound)
	assert.Equal(t, "Bill not found", r.detail(t))
}

func TestControlReportsEveryDeliveryOfAnEvent(t *testing.T) {
	srv, ep, log := newControlServer(t)
	failing := newReceiver(t)
	second := srv.AddWebhookEndpoint(failing.URL)
	srv.AddWebhookEndpoint(failing.URL, webhooks.EventQuoteSent) // not subscribed
	paused := srv.AddWebhookEndpoint(failing.URL)
	paused.Pause()
	id, _ := createInvoice(t, srv, nil)["id"].(string)

	failing.setStatuses(http.StatusInternalServerError)
	a := control(t, srv, http.MethodPost, "/invoices/"+id+"/send", nil).requireStatus(t, http.StatusOK).object(t)
	events := list(t, a, "events")
	require.Len(t, events, 1)
	deliveries := list(t, events[0], "deliveries")
	require.Len(t, deliveries, 2, "one per subscribed, active endpoint")
	assert.Equal(t, log.All()[1].ID, deliveries[0]["delivery_id"])
	assert.Equal(t, ep.ID(), deliveries[0]["endpoint_id"])
	d := second.Deliveries()[1]
	assert.Equal(t, map[string]any{
		"delivery_id": d.ID, "endpoint_id": second.ID(), "url": failing.URL,
		"status": DeliveryPending, "status_code": num("500"),
	}, deliveries[1], "a retry is scheduled")

	second.Delete()
	ep.Delete()
	a = control(t, srv, http.MethodPatch, "/invoices/"+id, map[string]any{"notes": "x"}).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, []any{map[string]any{"type": "invoice.updated", "deliveries": []any{}}}, a["events"], "no endpoint receives it")
}

func TestControlEventFeed(t *testing.T) {
	srv, ep, log := newControlServer(t)
	createInvoice(t, srv, nil)
	info := control(t, srv, http.MethodGet, "", nil).object(t)
	assert.Equal(t, num("1"), info["last_event_seq"])

	q := createQuote(t, srv, nil)
	feed := control(t, srv, http.MethodGet, "/events?after=1", nil).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, num("2"), feed["last_event_seq"])
	events := list(t, feed, "events")
	require.Len(t, events, 1)
	e := events[0]
	assert.Equal(t, num("2"), e["seq"])
	assert.Equal(t, "quote.created", e["type"])
	assert.Equal(t, "2026-03-10T09:30:00Z", e["at"])
	assert.Equal(t, q["id"], e["body"].(map[string]any)["quote_id"])
	assert.Equal(t, []any{map[string]any{
		"delivery_id": log.All()[1].ID, "endpoint_id": ep.ID(), "url": ep.URL(),
		"status": DeliverySucceeded, "status_code": num("200"),
	}}, e["deliveries"])

	assert.Len(t, list(t, control(t, srv, http.MethodGet, "/events", nil).object(t), "events"), 2)
	assert.Empty(t, list(t, control(t, srv, http.MethodGet, "/events?after=9", nil).object(t), "events"))
	control(t, srv, http.MethodGet, "/events?after=-1", nil).requireStatus(t, http.StatusBadRequest)
}

func TestControlClockAdvance(t *testing.T) {
	clock := NewOffsetClock()
	srv := NewTestServer(t, WithControl(), WithClock(clock))
	var log DeliveryLog
	srv.NewReceiver(log.Handle)

	due, _ := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "payment_terms_days": 0})["id"].(string)
	later, _ := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "payment_terms_days": 5})["id"].(string)
	set, _ := createInvoice(t, srv, nil)["id"].(string)
	require.NoError(t, srv.UpdateInvoice(set, InvoiceUpdate{Status: "overdue"}))
	soon, _ := createQuote(t, srv, map[string]any{"valid_days": 0})["id"].(string)
	sent, _ := createQuote(t, srv, map[string]any{"valid_days": 1})["id"].(string)
	require.NoError(t, srv.SendQuote(sent))
	createQuote(t, srv, map[string]any{"valid_days": 30})
	seen := len(log.All())

	// To the middle of tomorrow (UTC), whatever the time of day now: one
	// date boundary crossed, so that what is due today falls due and what
	// is due tomorrow does not.
	start := time.Now()
	by := dateOf(start).AddDate(0, 0, 1).Add(12 * time.Hour).Sub(start).Truncate(time.Minute)
	a := control(t, srv, http.MethodPost, "/clock/advance", map[string]any{"by": fmt.Sprintf("%dm", int(by.Minutes()))}).
		requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, []any{due}, a["overdue_invoices"], "only the one that was not overdue before")
	assert.Equal(t, []any{soon}, a["expired_quotes"])
	now, err := time.Parse(time.RFC3339, a["now"].(string))
	require.NoError(t, err)
	assert.True(t, within(start.Add(by), now, 2*time.Second), "%v", now)
	assert.Equal(t, now.UTC().Format(time.DateOnly), a["today"])
	assert.Equal(t, by, clock.Offset())
	assert.Equal(t, "overdue", get(t, srv, "/invoices/"+due).object(t)["status"])
	assert.Equal(t, "awaiting_payment", get(t, srv, "/invoices/"+later).object(t)["status"])
	assert.Equal(t, "expired", get(t, srv, "/quotes/"+soon).object(t)["status"])
	assert.Equal(t, "sent", get(t, srv, "/quotes/"+sent).object(t)["status"])
	assert.Len(t, log.All(), seen, "becoming overdue or expired fires no event")

	a = control(t, srv, http.MethodPost, "/clock/advance", map[string]any{"by": "5d"}).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, []any{later}, a["overdue_invoices"])
	assert.Equal(t, []any{sent}, a["expired_quotes"])
	a = control(t, srv, http.MethodPost, "/clock/advance", map[string]any{"by": "90m"}).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, []any{}, a["overdue_invoices"])
	assert.Equal(t, []any{}, a["expired_quotes"])
	assert.Equal(t, by+5*24*time.Hour+90*time.Minute, clock.Offset())
}

func TestControlClockAdvanceRunsTheRetriesDue(t *testing.T) {
	clock := NewOffsetClock()
	srv := NewTestServer(t, WithControl(), WithClock(clock))
	var log DeliveryLog
	log.SetFail(errors.New("database down"))
	ep := srv.NewReceiver(log.Handle)
	id, _ := createInvoice(t, srv, nil)["id"].(string)

	a := control(t, srv, http.MethodPost, "/invoices/"+id+"/send", nil).requireStatus(t, http.StatusOK).object(t)
	d := list(t, list(t, a, "events")[0], "deliveries")[0]
	assert.Equal(t, DeliveryPending, d["status"])
	assert.Equal(t, num("500"), d["status_code"])

	log.SetFail(nil)
	control(t, srv, http.MethodPost, "/clock/advance", map[string]any{"by": "2m"}).requireStatus(t, http.StatusOK)
	deliveries := ep.Deliveries()
	require.Len(t, deliveries, 2)
	sent := deliveries[1]
	assert.Equal(t, DeliverySucceeded, sent.Status, "the 1-minute retry ran inside the advance")
	require.Len(t, sent.Attempts, 2)
	assert.Equal(t, http.StatusOK, sent.Attempts[1].StatusCode)
	assert.Equal(t, sent.Attempts[0].NextRetryAt, sent.Attempts[1].At, "made at its due time on the clock")
	assert.Equal(t, 0, clock.Pending())

	feed := control(t, srv, http.MethodGet, "/events?after=1", nil).object(t)
	d = list(t, list(t, feed, "events")[0], "deliveries")[0]
	assert.Equal(t, DeliverySucceeded, d["status"], "the feed shows the delivery as it stands")
}

func TestControlDeliveriesAfterAnAdvanceVerifyOnTheWallClock(t *testing.T) {
	srv := NewTestServer(t, WithControl(), WithClock(NewOffsetClock()))
	secret := strings.Repeat("5e", 32)
	v, err := webhooks.NewVerifier(secret) // the wall clock, as a real receiver
	require.NoError(t, err)
	var log DeliveryLog
	ep := srv.NewHandlerReceiver(webhooks.Handler(v, log.Handle), WithSecret(secret))

	control(t, srv, http.MethodPost, "/clock/advance", map[string]any{"by": "30d"}).requireStatus(t, http.StatusOK)
	inv := createInvoice(t, srv, nil)

	got := log.All()
	require.Len(t, got, 1, "accepted: %+v", ep.Deliveries())
	assert.True(t, within(time.Now(), got[0].Timestamp, 5*time.Second), "signed with the wall time")
	created := got[0].Event.(*webhooks.InvoiceCreated)
	assert.True(t, within(time.Now().Add(30*24*time.Hour), created.CreatedAt, 5*time.Second), "payload times are the server's")
	assert.Equal(t, inv["created_at"], created.CreatedAt.UTC().Format(time.RFC3339))
	at := ep.Deliveries()[0].Attempts[0].At
	assert.True(t, within(created.CreatedAt, at, 5*time.Second), "Attempt.At is on the server's clock")

	// NewReceiver measures the tolerance on the signing clock too.
	var fromFn DeliveryLog
	srv.NewReceiver(fromFn.Handle)
	createInvoice(t, srv, nil)
	assert.Len(t, fromFn.All(), 1)
}

func TestControlClockAdvanceMistakes(t *testing.T) {
	srv, _, _ := newControlServer(t)
	for _, by := range []string{"0s", "-1h", "-1d", "1.5d", "d", "1d-2h", "1d+2h", "abc", "3651d", "3650d1s", "87601h", "99999999999d", "1dd"} {
		r := control(t, srv, http.MethodPost, "/clock/advance", map[string]any{"by": by}).requireStatus(t, http.StatusUnprocessableEntity)
		assert.Contains(t, r.detail(t), "by must be", by)
	}
	r := control(t, srv, http.MethodPost, "/clock/advance", nil).requireStatus(t, http.StatusUnprocessableEntity)
	assert.Equal(t, "by is required: a duration such as 36h, 15d or 1d12h", r.detail(t))
	control(t, srv, http.MethodPost, "/clock/advance", map[string]any{"by": 36}).requireStatus(t, http.StatusBadRequest)
	assert.Equal(t, testStart, srv.Now(), "nothing was advanced")

	a := control(t, srv, http.MethodPost, "/clock/advance", map[string]any{"by": "3650d"}).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, testStart.AddDate(0, 0, 3650).Format(time.RFC3339), a["now"], "a FakeClock advances too")

	system := NewTestServer(t, WithControl())
	r = control(t, system, http.MethodPost, "/clock/advance", map[string]any{"by": "1d"}).requireStatus(t, http.StatusConflict)
	assert.Equal(t, "the server's clock cannot be advanced", r.detail(t))
}

func TestParseAdvance(t *testing.T) {
	for by, want := range map[string]time.Duration{
		"36h": 36 * time.Hour, "15d": 15 * 24 * time.Hour, "1d12h": 36 * time.Hour,
		"2m": 2 * time.Minute, "0d1s": time.Second, "3650d": 3650 * 24 * time.Hour,
	} {
		got, err := parseAdvance(by)
		if assert.Nil(t, err, by) {
			assert.Equal(t, want, got, by)
		}
	}
}

func TestExpireQuotes(t *testing.T) {
	srv, clock := newServer(t)
	draft, _ := createQuote(t, srv, map[string]any{"valid_days": 1})["id"].(string)
	sent, _ := createQuote(t, srv, map[string]any{"valid_until": "2026-03-10"})["id"].(string)
	require.NoError(t, srv.SendQuote(sent))
	accepted, _ := createQuote(t, srv, map[string]any{"valid_days": 1})["id"].(string)
	_, err := srv.AcceptQuote(accepted, AcceptOptions{ByStaff: true})
	require.NoError(t, err)
	declined, _ := createQuote(t, srv, map[string]any{"valid_days": 1})["id"].(string)
	require.NoError(t, srv.DeclineQuote(declined))
	valid, _ := createQuote(t, srv, map[string]any{"valid_days": 2})["id"].(string)
	events := len(srv.Events())

	assert.Nil(t, srv.ExpireQuotes(), "valid_until is not before today yet")
	clock.Advance(47 * time.Hour) // 2026-03-12 08:30
	assert.Equal(t, []string{draft, sent}, srv.ExpireQuotes(), "in order of quote number")
	assert.Nil(t, srv.ExpireQuotes(), "once")
	for id, status := range map[string]string{draft: "expired", sent: "expired", accepted: "accepted", declined: "declined", valid: "draft"} {
		assert.Equal(t, status, get(t, srv, "/quotes/"+id).object(t)["status"], id)
	}
	assert.Equal(t, "2026-03-12T08:30:00Z", get(t, srv, "/quotes/"+draft).object(t)["updated_at"])
	assert.Len(t, srv.Events(), events, "no event fires")
	assert.ErrorIs(t, srv.SendQuote(draft), ErrInvalidState, "an expired quote cannot be sent")
}

func TestQuoteNumbersSortAsNumbers(t *testing.T) {
	srv, clock := newServer(t)
	srv.mu.Lock()
	srv.data.quoteSeq = 9998
	srv.mu.Unlock()
	var ids []string
	for range 3 { // QU-9999, QU-10000, QU-10001
		id, _ := createQuote(t, srv, map[string]any{"valid_days": 0})["id"].(string)
		ids = append(ids, id)
	}
	clock.Advance(24 * time.Hour)
	assert.Equal(t, ids, srv.ExpireQuotes())
}
