package invoicingtest

import (
	"encoding/hex"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

func TestWebhookDeliveryFormatAndSignature(t *testing.T) {
	srv, _ := newServer(t)
	rc := newReceiver(t)
	ep := srv.AddWebhookEndpoint(rc.URL, webhooks.EventInvoiceCreated)
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), ep.Secret())

	inv := createInvoice(t, srv, map[string]any{"reference": "PO-77"})

	got := rc.deliveries()
	require.Len(t, got, 1, "delivered before the API call returned")
	d := got[0]
	assert.Equal(t, "application/json", d.header.Get("Content-Type"))
	assert.Equal(t, "Service-Webhooks/1.0", d.header.Get("User-Agent"))
	assert.Equal(t, "invoice.created", d.header.Get("X-Service-Event"))
	assert.NotEmpty(t, d.header.Get("X-Service-Delivery"))
	assert.Equal(t, strconv.FormatInt(testStart.Unix(), 10), d.header.Get("X-Service-Timestamp"))
	assert.True(t, verify(ep.Secret(), d), "signature verifies with the secret as UTF-8 key")
	wrong := []byte(ep.Secret())
	wrong[63] ^= 1 // another hex digit
	assert.False(t, verify(string(wrong), d))
	hexKey, err := hex.DecodeString(ep.Secret())
	require.NoError(t, err)
	assert.False(t, verify(string(hexKey), d), "the secret is not hex-decoded")

	body := decodeObject(t, d.body)
	assert.Equal(t, map[string]any{
		"invoice_id":     inv["id"],
		"invoice_number": "INV-0001",
		"client_id":      SeedClientID,
		"reference":      "PO-77",
		"total":          "101.00", // monetary values are strings in webhooks
		"status":         "draft",
		"created_at":     "2026-03-10T09:30:00Z",
	}, body, "a flat body without envelope")

	deliveries := ep.Deliveries()
	require.Len(t, deliveries, 1)
	assert.Equal(t, DeliverySucceeded, deliveries[0].Status)
	assert.Equal(t, d.header.Get("X-Service-Delivery"), deliveries[0].ID)
	assert.Equal(t, []Attempt{{Number: 1, At: testStart, StatusCode: 200}}, deliveries[0].Attempts)
	assert.Equal(t, string(d.body), string(deliveries[0].Body))
}

func TestWebhookSubscriptions(t *testing.T) {
	srv, _ := newServer(t)
	quotesOnly := newReceiver(t)
	everything := newReceiver(t)
	srv.AddWebhookEndpoint(quotesOnly.URL, webhooks.EventQuoteCreated)
	srv.AddWebhookEndpoint(everything.URL)

	createInvoice(t, srv, nil)
	createQuote(t, srv, nil)

	assert.Len(t, quotesOnly.deliveries(), 1)
	assert.Len(t, quotesOnly.only(webhooks.EventQuoteCreated), 1)
	assert.Len(t, everything.deliveries(), 2)
	assert.Len(t, srv.Events(), 2, "the event log has every event")
	assert.Panics(t, func() { srv.AddWebhookEndpoint(everything.URL, "invoice.create") })
	assert.Panics(t, func() { srv.AddWebhookEndpoint(everything.URL, webhooks.EventTest) }, "test deliveries cannot be subscribed to")
}

func TestAllEventsAreTheDocumentedEventTypes(t *testing.T) {
	var names []string
	for _, e := range AllEvents() {
		names = append(names, string(e))
	}
	assert.Equal(t, []string{
		"invoice.created", "invoice.sent", "invoice.updated", "invoice.paid",
		"bill.created", "bill.approved", "contact.created", "payment.received",
		"quote.created", "quote.sent", "quote.viewed", "quote.accepted", "quote.unaccepted",
	}, names)
}

func TestWebhookRetrySchedule(t *testing.T) {
	srv, clock := newServer(t)
	rc := newReceiver(t, 500, 500, 500, 500, 500, 500, 500)
	ep := srv.AddWebhookEndpoint(rc.URL)

	createInvoice(t, srv, nil)
	require.Len(t, rc.deliveries(), 1)
	d := ep.Deliveries()[0]
	assert.Equal(t, DeliveryPending, d.Status)
	assert.Equal(t, testStart.Add(time.Minute), d.NextRetryAt)

	clock.Advance(59 * time.Second)
	assert.Len(t, rc.deliveries(), 1, "no retry before a minute")
	clock.Advance(time.Second)
	assert.Len(t, rc.deliveries(), 2, "1st retry after 1 minute")

	waits := []time.Duration{5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 24 * time.Hour}
	for i, wait := range waits {
		clock.Advance(wait - time.Second)
		assert.Len(t, rc.deliveries(), 2+i, "retry %d not before %v", i+2, wait)
		clock.Advance(time.Second)
		assert.Len(t, rc.deliveries(), 3+i, "retry %d after %v", i+2, wait)
	}
	clock.Advance(72 * time.Hour)
	assert.Len(t, rc.deliveries(), 6, "nothing after the 5th retry")

	d = ep.Deliveries()[0]
	assert.Equal(t, DeliveryFailed, d.Status)
	assert.True(t, d.NextRetryAt.IsZero())
	require.Len(t, d.Attempts, 6)
	at := testStart
	for i, a := range d.Attempts {
		assert.Equal(t, i+1, a.Number)
		assert.Equal(t, 500, a.StatusCode)
		assert.Equal(t, at, a.At)
		if i < 5 {
			at = at.Add(RetrySchedule()[i])
			assert.Equal(t, at, a.NextRetryAt)
		} else {
			assert.True(t, a.NextRetryAt.IsZero())
		}
	}
	for i, got := range rc.deliveries() {
		assert.Equal(t, d.ID, got.header.Get("X-Service-Delivery"), "same delivery id on every attempt")
		assert.Equal(t, strconv.FormatInt(d.Attempts[i].At.Unix(), 10), got.header.Get("X-Service-Timestamp"))
		assert.True(t, verify(ep.Secret(), got))
		assert.Equal(t, string(d.Body), string(got.body), "the body is never re-serialised")
	}

	// A manual retry makes one more attempt.
	rc.setStatuses(503)
	after, err := ep.Retry(d.ID)
	require.NoError(t, err)
	assert.Equal(t, DeliveryFailed, after.Status)
	assert.Len(t, after.Attempts, 7)
	after, err = ep.Retry(d.ID)
	require.NoError(t, err)
	assert.Equal(t, DeliverySucceeded, after.Status)
	assert.Len(t, rc.deliveries(), 8)
	_, err = ep.Retry(d.ID)
	assert.Error(t, err, "only failed deliveries can be retried")
	assert.Equal(t, 0, clock.Pending())
}

func TestWebhookRetryAfterTransientFailure(t *testing.T) {
	srv, clock := newServer(t)
	rc := newReceiver(t, 502)
	ep := srv.AddWebhookEndpoint(rc.URL)
	createQuote(t, srv, nil)

	// One Advance covering several retry times runs only the retries that
	// are still needed.
	clock.Advance(3 * time.Hour)
	assert.Len(t, rc.deliveries(), 2)
	d := ep.Deliveries()[0]
	assert.Equal(t, DeliverySucceeded, d.Status)
	assert.Equal(t, []int{502, 200}, []int{d.Attempts[0].StatusCode, d.Attempts[1].StatusCode})
	assert.Equal(t, testStart.Add(time.Minute), d.Attempts[1].At)
}

func TestWebhookUnreachableAndTimeout(t *testing.T) {
	srv, clock := newServer(t, WithWebhookClient(&http.Client{Timeout: 50 * time.Millisecond}))
	block := make(chan struct{})
	slow := newReceiver(t)
	slow.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block })
	t.Cleanup(func() { close(block) })

	dead := newReceiver(t)
	dead.Close()

	slowEP := srv.AddWebhookEndpoint(slow.URL, webhooks.EventContactCreated)
	deadEP := srv.AddWebhookEndpoint(dead.URL, webhooks.EventContactCreated)
	srv.AddClient(Contact{Name: "Initech"})

	for _, ep := range []*WebhookEndpoint{slowEP, deadEP} {
		d := ep.Deliveries()[0]
		assert.Equal(t, DeliveryPending, d.Status)
		assert.Equal(t, 0, d.Attempts[0].StatusCode)
		assert.NotEmpty(t, d.Attempts[0].Error)
		assert.Equal(t, testStart.Add(time.Minute), d.NextRetryAt)
	}
	assert.Equal(t, 2, clock.Pending())
}

func TestWebhookPauseAndResume(t *testing.T) {
	srv, clock := newServer(t)
	rc := newReceiver(t, 500)
	ep := srv.AddWebhookEndpoint(rc.URL, webhooks.EventInvoiceCreated)

	createInvoice(t, srv, nil) // fails, retry due in 1 minute
	ep.Pause()
	createInvoice(t, srv, nil) // raised while paused: never delivered
	clock.Advance(10 * time.Minute)
	assert.Len(t, rc.deliveries(), 1, "a paused endpoint receives nothing")
	assert.Len(t, ep.Deliveries(), 1)
	_, err := ep.Test()
	assert.ErrorIs(t, err, ErrPaused)

	ep.Resume()
	assert.Len(t, rc.deliveries(), 2, "the held retry is attempted on resume")
	assert.Equal(t, DeliverySucceeded, ep.Deliveries()[0].Status)

	createInvoice(t, srv, nil)
	assert.Len(t, rc.deliveries(), 3)
}

func TestWebhookRotateSecret(t *testing.T) {
	srv, clock := newServer(t)
	rc := newReceiver(t, 500)
	ep := srv.AddWebhookEndpoint(rc.URL)
	old := ep.Secret()

	createInvoice(t, srv, nil)
	newSecret := ep.RotateSecret()
	assert.NotEqual(t, old, newSecret)
	assert.Equal(t, newSecret, ep.Secret())
	assert.Regexp(t, `^[0-9a-f]{64}$`, newSecret)

	clock.Advance(time.Minute) // the retry after rotation
	createInvoice(t, srv, nil)
	got := rc.deliveries()
	require.Len(t, got, 3)
	assert.True(t, verify(old, got[0]))
	for _, d := range got[1:] {
		assert.True(t, verify(newSecret, d))
		assert.False(t, verify(old, d), "the old secret is invalid immediately")
	}
}

func TestWebhookDelete(t *testing.T) {
	srv, clock := newServer(t)
	rc := newReceiver(t, 500)
	ep := srv.AddWebhookEndpoint(rc.URL)
	createInvoice(t, srv, nil)
	ep.Delete()
	clock.Advance(48 * time.Hour)
	createInvoice(t, srv, nil)
	assert.Len(t, rc.deliveries(), 1, "no retries and no new deliveries after delete")
	assert.Equal(t, 0, clock.Pending())
	_, err := ep.Test()
	assert.ErrorIs(t, err, ErrDeleted)
	assert.Len(t, ep.Deliveries(), 1, "the log stays readable")
}

func TestWebhookTestDelivery(t *testing.T) {
	srv, clock := newServer(t)
	rc := newReceiver(t)
	ep := srv.AddWebhookEndpoint(rc.URL, webhooks.EventQuoteAccepted)
	d, err := ep.Test()
	require.NoError(t, err)
	assert.Equal(t, DeliverySucceeded, d.Status)
	got := rc.deliveries()
	require.Len(t, got, 1)
	assert.Equal(t, "test", got[0].header.Get("X-Service-Event"))
	assert.True(t, verify(ep.Secret(), got[0]))
	body := decodeObject(t, got[0].body)
	assert.Equal(t, "test", body["event"])
	assert.Equal(t, "2026-03-10T09:30:00Z", body["timestamp"])
	assert.NotEmpty(t, body["message"])
	assert.Equal(t, SeedBusinessID, body["business_id"])
	assert.Len(t, body, 4)

	rc.setStatuses(500)
	d, err = ep.Test()
	require.NoError(t, err)
	assert.Equal(t, DeliveryFailed, d.Status, "test deliveries are not retried")
	clock.Advance(time.Hour)
	assert.Len(t, rc.deliveries(), 2)
}

func TestContactBillAndInvoiceEvents(t *testing.T) {
	srv, _ := newServer(t)
	rc := newReceiver(t)
	ep := srv.AddWebhookEndpoint(rc.URL)

	customer := post(t, srv, "/clients", map[string]any{"name": "Initech", "email": "ap@initech.example"}).requireStatus(t, http.StatusCreated).object(t)
	supplier := post(t, srv, "/suppliers", map[string]any{"name": "Paper Co"}).requireStatus(t, http.StatusCreated).object(t)
	contacts := rc.only(webhooks.EventContactCreated)
	require.Len(t, contacts, 2)
	assert.Equal(t, map[string]any{
		"contact_id": customer["id"], "contact_type": "client", "name": "Initech",
		"email": "ap@initech.example", "created_at": "2026-03-10T09:30:00Z",
	}, decodeObject(t, contacts[0].body))
	assert.Equal(t, "supplier", decodeObject(t, contacts[1].body)["contact_type"])
	assert.Equal(t, supplier["id"], decodeObject(t, contacts[1].body)["contact_id"])

	bill := post(t, srv, "/bills", billBody(nil)).requireStatus(t, http.StatusCreated).object(t)
	created := rc.only(webhooks.EventBillCreated)
	require.Len(t, created, 1)
	assert.Equal(t, map[string]any{
		"bill_id": bill["id"], "bill_number": "BILL-0001", "supplier_id": SeedSupplierID,
		"total": "220.00", "status": "draft", "created_at": "2026-03-10T09:30:00Z",
	}, decodeObject(t, created[0].body))
	require.NoError(t, srv.ApproveBill(bill["id"].(string)))
	approved := rc.only(webhooks.EventBillApproved)
	require.Len(t, approved, 1)
	assert.Equal(t, map[string]any{
		"bill_id": bill["id"], "bill_number": "BILL-0001", "supplier_id": SeedSupplierID,
		"approved_at": "2026-03-10T09:30:00Z",
	}, decodeObject(t, approved[0].body))

	inv := createInvoice(t, srv, nil)
	id := inv["id"].(string)
	require.NoError(t, srv.SendInvoice(id))
	sent := rc.only(webhooks.EventInvoiceSent)
	require.Len(t, sent, 1)
	assert.Equal(t, map[string]any{
		"invoice_id": id, "invoice_number": "INV-0001", "client_id": SeedClientID, "sent_at": "2026-03-10T09:30:00Z",
	}, decodeObject(t, sent[0].body))
	assert.Equal(t, "awaiting_payment", get(t, srv, "/invoices/"+id).object(t)["status"])

	notes := "Please pay by EFT"
	require.NoError(t, srv.UpdateInvoice(id, InvoiceUpdate{Notes: &notes}))
	updated := rc.only(webhooks.EventInvoiceUpdated)
	require.Len(t, updated, 1)
	assert.Equal(t, map[string]any{
		"invoice_id": id, "invoice_number": "INV-0001", "client_id": SeedClientID, "reference": nil,
		"total": "101.00", "status": "awaiting_payment", "updated_at": "2026-03-10T09:30:00Z",
	}, decodeObject(t, updated[0].body))
	assert.Equal(t, notes, get(t, srv, "/invoices/"+id).object(t)["notes"])

	for _, d := range rc.deliveries() {
		assert.True(t, verify(ep.Secret(), d))
	}
}

func TestPaymentEvents(t *testing.T) {
	srv, clock := newServer(t)
	rc := newReceiver(t)
	srv.AddWebhookEndpoint(rc.URL, webhooks.EventPaymentReceived, webhooks.EventInvoicePaid, webhooks.EventInvoiceUpdated)
	inv := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "reference": "ORDER-9"})
	id := inv["id"].(string)

	_, err := srv.RecordPayment(id, Payment{Amount: dec("101.01")})
	assert.Error(t, err, "more than the amount due")
	_, err = srv.RecordPayment(id, Payment{Amount: dec("0")})
	assert.Error(t, err)

	clock.Advance(time.Hour)
	payID, err := srv.RecordPayment(id, Payment{Amount: dec("40.50")})
	require.NoError(t, err)
	assert.Len(t, rc.deliveries(), 1, "a partial payment fires payment.received only")
	assert.Equal(t, map[string]any{
		"payment_id": payID, "invoice_id": id, "amount": "40.50", "payment_method": "bank_transfer",
		"received_at": "2026-03-10T10:30:00Z", "invoice_number": "INV-0001", "reference": "ORDER-9",
	}, decodeObject(t, rc.deliveries()[0].body))
	partial := get(t, srv, "/invoices/"+id).object(t)
	assert.Equal(t, "awaiting_payment", partial["status"])
	assert.Equal(t, num("40.50"), partial["amount_paid"])
	assert.Equal(t, num("60.50"), partial["amount_due"])
	assert.Equal(t, "2026-03-10T10:30:00Z", partial["updated_at"])

	_, err = srv.RecordPayment(id, Payment{Amount: dec("60.50"), Method: PaymentCard})
	require.NoError(t, err)
	got := rc.deliveries()
	require.Len(t, got, 3, "the final payment fires payment.received and invoice.paid")
	assert.Equal(t, "payment.received", got[1].header.Get("X-Service-Event"))
	assert.Equal(t, "stripe", decodeObject(t, got[1].body)["payment_method"])
	assert.Equal(t, "invoice.paid", got[2].header.Get("X-Service-Event"))
	assert.Equal(t, map[string]any{
		"invoice_id": id, "invoice_number": "INV-0001", "client_id": SeedClientID, "reference": "ORDER-9",
		"amount_paid": "101.00", "paid_at": "2026-03-10T10:30:00Z",
	}, decodeObject(t, got[2].body))
	assert.Empty(t, rc.only(webhooks.EventInvoiceUpdated), "payments never fire invoice.updated")

	paid := get(t, srv, "/invoices/"+id).object(t)
	assert.Equal(t, "paid", paid["status"])
	assert.Equal(t, num("0.00"), paid["amount_due"])
	_, err = srv.RecordPayment(id, Payment{Amount: dec("1")})
	assert.ErrorIs(t, err, ErrInvalidState)

	// A single payment in full fires both events too.
	other := createInvoice(t, srv, map[string]any{"status": "awaiting_payment"})
	_, err = srv.RecordPayment(other["id"].(string), Payment{Amount: dec("101")})
	require.NoError(t, err)
	assert.Len(t, rc.only(webhooks.EventInvoicePaid), 2)
	assert.NotContains(t, decodeObject(t, rc.only(webhooks.EventPaymentReceived)[2].body), "reference", "reference omitted when the invoice has none")

	draft := createInvoice(t, srv, nil)
	_, err = srv.RecordPayment(draft["id"].(string), Payment{Amount: dec("1")})
	assert.ErrorIs(t, err, ErrInvalidState, "drafts take no payments")
}

func TestQuoteLifecycleEvents(t *testing.T) {
	srv, clock := newServer(t)
	rc := newReceiver(t)
	ep := srv.AddWebhookEndpoint(rc.URL)
	q := createQuote(t, srv, map[string]any{"title": "Website"})
	id := q["id"].(string)
	lines := list(t, q, "line_items")
	design, support := lines[0]["id"].(string), lines[1]["id"].(string)

	created := decodeObject(t, rc.only(webhooks.EventQuoteCreated)[0].body)
	assert.Equal(t, id, created["quote_id"])
	assert.Equal(t, "QU-0001", created["quote_number"])
	assert.Equal(t, "Website", created["title"])
	assert.Equal(t, "Acme Pty Ltd", created["client_name"])
	assert.Equal(t, "accounts@acme.example", created["client_email"])
	assert.Equal(t, map[string]any{
		"address_line1": "1 Example Street", "address_line2": "Level 2", "city": "Sydney",
		"state": "NSW", "postcode": "2000", "country": "AU",
	}, created["client_address"])
	assert.NotContains(t, created, "quote_public_url", "omitted while there is no share token")
	assert.Regexp(t, `/app/quotes/`+id+`$`, created["quote_admin_url"])
	assert.Equal(t, "draft", created["status"])
	assert.Equal(t, "2026-03-10", created["issue_date"])
	assert.Equal(t, "2026-04-09", created["valid_until"])
	assert.Equal(t, "AUD", created["currency"])
	assert.Equal(t, "250.00", created["subtotal"])
	assert.Equal(t, "25.00", created["tax_amount"])
	assert.Equal(t, "275.00", created["total"])
	assert.Equal(t, "2026-03-10T09:30:00Z", created["created_at"])
	assert.Equal(t, []any{
		map[string]any{"id": design, "item_code": nil, "title": "Design work", "description": "Design work",
			"quantity": "2", "unit_price": "100.00", "subtotal": "200.00", "tax_rate": "10",
			"tax_amount": "20.00", "total": "220.00", "optional": false},
		map[string]any{"id": support, "item_code": nil, "title": "Extended support", "description": "Extended support",
			"quantity": "1", "unit_price": "50.00", "subtotal": "50.00", "tax_rate": "10",
			"tax_amount": "5.00", "total": "55.00", "optional": false},
	}, created["line_items"])

	require.NoError(t, srv.SetQuoteLineOptions(id, support, QuoteLineOptions{Optional: true}))
	require.NoError(t, srv.SetQuoteLineOptions(id, design, QuoteLineOptions{QuantityEditable: true}))
	clock.Advance(time.Minute)
	require.NoError(t, srv.SendQuote(id, Recipient{ContactID: SeedClientID, Name: "Wile E", Email: "wile@acme.example"},
		Recipient{Name: "Road Runner", Email: "rr@acme.example", Type: "cc"}))
	sent := decodeObject(t, rc.only(webhooks.EventQuoteSent)[0].body)
	assert.Equal(t, "sent", sent["status"])
	assert.Equal(t, "2026-03-10T09:31:00Z", sent["sent_at"])
	assert.Regexp(t, `/share/quotes/[0-9a-f]+$`, sent["quote_public_url"])
	assert.Equal(t, true, list(t, sent, "line_items")[1]["optional"], "quote.sent carries every option")

	clock.Advance(time.Minute)
	require.NoError(t, srv.ViewQuote(id, nil))
	require.NoError(t, srv.ViewQuote(id, &Recipient{Name: "Forwarded", Email: "someone@else.example"}))
	views := rc.only(webhooks.EventQuoteViewed)
	require.Len(t, views, 2)
	first, second := decodeObject(t, views[0].body), decodeObject(t, views[1].body)
	assert.Equal(t, num("1"), first["view_count"])
	assert.Equal(t, num("2"), second["view_count"])
	assert.Equal(t, "2026-03-10T09:32:00Z", first["viewed_at"])
	assert.Equal(t, "2026-03-10T09:32:00Z", first["last_viewed_at"])
	assert.Equal(t, map[string]any{"contact_id": SeedClientID, "contact_name": "Wile E", "contact_email": "wile@acme.example", "contact_type": "to"}, first["viewer"])
	assert.Equal(t, map[string]any{"contact_id": nil, "contact_name": "Forwarded", "contact_email": "someone@else.example", "contact_type": "to"}, second["viewer"])
	assert.Len(t, list(t, first, "line_items"), 2, "quote.viewed carries every option")

	res, err := srv.AcceptQuote(id, AcceptOptions{
		AcceptedBy: "W. E. Coyote", Comments: "Go ahead", OrderNumber: "PO-1",
		Exclude: []string{support}, Quantities: map[string]decimal.Decimal{design: dec("1.5")},
	})
	require.NoError(t, err)
	accepted := decodeObject(t, rc.only(webhooks.EventQuoteAccepted)[0].body)
	assert.Equal(t, "accepted", accepted["status"])
	acceptedLines := list(t, accepted, "line_items")
	require.Len(t, acceptedLines, 1, "excluded optional lines are omitted")
	assert.Equal(t, "1.5", acceptedLines[0]["quantity"])
	assert.Equal(t, "165.00", acceptedLines[0]["total"])
	assert.Equal(t, "150.00", accepted["subtotal"])
	assert.Equal(t, "15.00", accepted["tax_amount"])
	assert.Equal(t, "165.00", accepted["total"])
	recipients := list(t, accepted, "recipients")
	require.Len(t, recipients, 2)
	assert.NotEmpty(t, recipients[0]["quote_contact_id"])
	assert.Equal(t, SeedClientID, recipients[0]["contact_id"])
	assert.Equal(t, "cc", recipients[1]["contact_type"])
	assert.Equal(t, map[string]any{"contact_id": SeedClientID, "contact_name": "Wile E", "contact_email": "wile@acme.example", "contact_type": "to"}, accepted["accepting_contact"])
	assert.Equal(t, "W. E. Coyote", accepted["accepted_by"])
	assert.Equal(t, "2026-03-10T09:32:00Z", accepted["accepted_at"])
	assert.Equal(t, "Go ahead", accepted["acceptance_comments"])
	assert.Equal(t, "PO-1", accepted["acceptance_order_number"])
	assert.Equal(t, map[string]any{"section-0": map[string]any{
		design:  map[string]any{"included": true, "quantity": "1.5"},
		support: map[string]any{"included": false, "quantity": "1"},
	}}, accepted["interactive_selections"])
	assert.Equal(t, res.InvoiceID, accepted["invoice_id"])
	assert.Equal(t, res.InvoiceNumber, accepted["invoice_number"])
	assert.Equal(t, "draft", accepted["invoice_status"])
	assert.Regexp(t, `/app/invoices/`+res.InvoiceID+`$`, accepted["invoice_admin_url"])
	assert.NotContains(t, accepted, "invoice_share_url", "a draft invoice has no payment link")

	invCreated := rc.only(webhooks.EventInvoiceCreated)
	require.Len(t, invCreated, 1, "the converted invoice fires invoice.created")
	assert.Equal(t, res.InvoiceID, decodeObject(t, invCreated[0].body)["invoice_id"])
	assert.Equal(t, "165.00", decodeObject(t, invCreated[0].body)["total"])

	require.NoError(t, srv.UnacceptQuote(id))
	un := decodeObject(t, rc.only(webhooks.EventQuoteUnaccepted)[0].body)
	assert.Equal(t, "accepted", un["previous_status"])
	assert.Equal(t, "sent", un["status"])
	assert.Equal(t, "2026-03-10T09:32:00Z", un["unaccepted_at"])
	assert.Len(t, list(t, un, "line_items"), 2)
	prev := un["previous_acceptance"].(map[string]any)
	assert.Equal(t, "W. E. Coyote", prev["accepted_by"])
	assert.Equal(t, res.InvoiceID, prev["invoice_id"])

	for _, d := range rc.deliveries() {
		assert.True(t, verify(ep.Secret(), d))
	}
}

func TestQuoteAcceptedByStaffAndConversionRules(t *testing.T) {
	srv, _ := newServer(t, WithQuoteConversion(ConvertToAwaitingPaymentInvoice))
	rc := newReceiver(t)
	srv.AddWebhookEndpoint(rc.URL, webhooks.EventQuoteAccepted)

	q := createQuote(t, srv, nil)
	res, err := srv.AcceptQuote(q["id"].(string), AcceptOptions{ByStaff: true})
	require.NoError(t, err)
	body := decodeObject(t, rc.only(webhooks.EventQuoteAccepted)[0].body)
	assert.NotContains(t, body, "accepting_contact", "omitted when staff accepted")
	assert.Equal(t, "Staff", body["accepted_by"])
	assert.Equal(t, []any{}, body["recipients"])
	assert.Equal(t, "awaiting_payment", body["invoice_status"])
	assert.Regexp(t, `/pay/[0-9a-f]+$`, body["invoice_share_url"])
	assert.Equal(t, "275.00", body["total"], "nothing excluded")
	assert.Equal(t, "awaiting_payment", get(t, srv, "/invoices/"+res.InvoiceID).object(t)["status"])

	srv.SetQuoteConversion(ConversionFails)
	q = createQuote(t, srv, nil)
	res, err = srv.AcceptQuote(q["id"].(string), AcceptOptions{ByStaff: true})
	require.NoError(t, err)
	assert.Empty(t, res.InvoiceID)
	body = decodeObject(t, rc.only(webhooks.EventQuoteAccepted)[1].body)
	for _, k := range []string{"invoice_id", "invoice_number", "invoice_status", "invoice_admin_url", "invoice_share_url"} {
		assert.NotContains(t, body, k, "invoice fields are omitted when auto-conversion fails")
	}
	assert.Equal(t, num("1"), get(t, srv, "/invoices").object(t)["total"])
}

// A payload that cannot be encoded is a mistake in the fake. newEvent runs
// under s.mu, so it must not panic there (a panic holding the lock would
// hang every later request and Close); publish reports the mistake once the
// lock is free.
func TestAnEventThatCannotBeEncodedPanicsOnlyOutsideTheLock(t *testing.T) {
	srv, _ := newServer(t)
	srv.mu.Lock()
	var ev event
	assert.NotPanics(t, func() {
		ev = srv.newEvent(webhooks.EventInvoiceCreated, jsonobj.Object{{Key: "bad", Value: make(chan int)}})
	})
	srv.mu.Unlock()
	require.Error(t, ev.err)
	assert.Contains(t, ev.err.Error(), "invoicingtest: encoding the invoice.created payload")

	assert.PanicsWithError(t, ev.err.Error(), func() { srv.publish(ev) })
	assert.Empty(t, srv.Events(), "nothing was published")
	get(t, srv, "/invoices").requireStatus(t, http.StatusOK) // the lock is free
	srv.Close()                                              // and Close returns
}
