package invoicingtest

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// statusOf returns the invoice's status as GET /invoices/{id} shows it.
func statusOf(t *testing.T, srv *Server, id string) string {
	t.Helper()
	return get(t, srv, "/invoices/"+id).requireStatus(t, http.StatusOK).object(t)["status"].(string)
}

// listedIDs returns the ids GET /invoices lists for the query.
func listedIDs(t *testing.T, srv *Server, query string) []string {
	t.Helper()
	var ids []string
	for _, inv := range list(t, get(t, srv, "/invoices"+query).requireStatus(t, http.StatusOK).object(t), "invoices") {
		ids = append(ids, inv["id"].(string))
	}
	return ids
}

// The clock is 2026-03-10 09:30 UTC (testStart).
func TestAnInvoiceBecomesOverdueWhenItsDueDatePassesOnTheClock(t *testing.T) {
	srv, clock := newServer(t)
	inv := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "due_date": "2026-03-12"})
	id := inv["id"].(string)
	events := len(srv.Events())

	assert.Equal(t, "awaiting_payment", statusOf(t, srv, id))
	assert.Empty(t, listedIDs(t, srv, "?status=overdue"))

	clock.Advance(2*24*time.Hour + 14*time.Hour) // 2026-03-12 23:30: the due date is today
	assert.Equal(t, "awaiting_payment", statusOf(t, srv, id), "due today is not overdue yet")

	clock.Advance(time.Hour) // 2026-03-13 00:30 UTC
	got := get(t, srv, "/invoices/"+id).object(t)
	assert.Equal(t, "overdue", got["status"])
	assert.Nil(t, got["updated_at"], "becoming overdue is not an update")
	assert.Equal(t, []string{id}, listedIDs(t, srv, "?status=overdue"))
	assert.Empty(t, listedIDs(t, srv, "?status=awaiting_payment"))
	assert.Equal(t, "overdue", list(t, get(t, srv, "/invoices").object(t), "invoices")[0]["status"])
	assert.Contains(t, string(get(t, srv, "/invoices/"+id+"/pdf").body), "Status: overdue")
	assert.Len(t, srv.Events(), events, "no event: the service documents none for becoming overdue")
}

// The first hour's scenario: an invoice created past due is listed as
// overdue at once, through the SDK.
func TestAPastDueInvoiceIsListedAsOverdue(t *testing.T) {
	srv, _ := newServer(t)
	c := srv.Client()
	res, err := c.Invoices.Create(t.Context(), &invoicing.InvoiceCreateParams{
		ClientID: SeedClientID, DefaultAccountID: SeedRevenueAccountID, DefaultTaxCodeID: SeedGSTTaxCodeID,
		Status:    invoicing.InvoiceStatusAwaitingPayment,
		IssueDate: invoicing.NewDate(2026, time.January, 5), DueDate: invoicing.NewDate(2026, time.February, 4),
		LineItems: []invoicing.LineItemParams{{Description: "Audit", UnitPrice: dec("500")}},
	})
	require.NoError(t, err)
	assert.Equal(t, invoicing.InvoiceStatusOverdue, res.Status, "the create response shows it too")

	overdue, err := invoicing.Collect(c.Invoices.List(t.Context(), &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusOverdue}), 10)
	require.NoError(t, err)
	require.Len(t, overdue, 1)
	assert.Equal(t, res.ID, overdue[0].ID)
	created := decodeObject(t, srv.Events()[0].Body)
	assert.Equal(t, "overdue", created["status"], "invoice.created carries the status the invoice shows")
}

func TestOnlyAnInvoiceAwaitingPaymentWithABalanceBecomesOverdue(t *testing.T) {
	srv, clock := newServer(t)
	past := map[string]any{"issue_date": "2026-01-05", "due_date": "2026-02-04"}
	draft := createInvoice(t, srv, past)["id"].(string)
	voided := createInvoice(t, srv, past)["id"].(string)
	require.NoError(t, srv.UpdateInvoice(voided, InvoiceUpdate{Status: invoicing.InvoiceStatusVoided}))
	zero := createInvoice(t, srv, map[string]any{
		"issue_date": "2026-01-05", "due_date": "2026-02-04", "status": "awaiting_payment",
		"line_items": []any{map[string]any{"description": "Free", "quantity": num("0"), "unit_price": num("100")}},
	})["id"].(string)
	clock.Advance(365 * 24 * time.Hour)
	assert.Equal(t, "draft", statusOf(t, srv, draft), "a draft was never sent")
	assert.Equal(t, "voided", statusOf(t, srv, voided))
	assert.Equal(t, "awaiting_payment", statusOf(t, srv, zero), "nothing is due")

	require.NoError(t, srv.SendInvoice(draft))
	assert.Equal(t, "overdue", statusOf(t, srv, draft), "sent after its due date")
}

func TestPaymentsOnAnOverdueInvoice(t *testing.T) {
	srv, clock := newServer(t)
	id := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "due_date": "2026-03-12"})["id"].(string) // total 101.00
	clock.Advance(7 * 24 * time.Hour)
	require.Equal(t, "overdue", statusOf(t, srv, id))

	_, err := srv.RecordPayment(id, Payment{Amount: dec("40.00")})
	require.NoError(t, err)
	assert.Equal(t, "overdue", statusOf(t, srv, id), "a partial payment leaves it overdue")

	_, err = srv.RecordPayment(id, Payment{Amount: dec("61.00")})
	require.NoError(t, err)
	got := get(t, srv, "/invoices/"+id).object(t)
	assert.Equal(t, "paid", got["status"], "paying the balance makes it paid")
	assert.Equal(t, num("0.00"), got["amount_due"])
	events := srv.Events()
	assert.Equal(t, webhooks.EventInvoicePaid, events[len(events)-1].Name)
}

func TestUpdateInvoiceAndOverdue(t *testing.T) {
	srv, clock := newServer(t)
	id := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "due_date": "2026-03-12"})["id"].(string)
	clock.Advance(7 * 24 * time.Hour) // 2026-03-17

	require.NoError(t, srv.UpdateInvoice(id, InvoiceUpdate{Status: invoicing.InvoiceStatusAwaitingPayment}))
	assert.Equal(t, "overdue", statusOf(t, srv, id), "still past due with a balance")
	events := srv.Events()
	updated := decodeObject(t, events[len(events)-1].Body)
	assert.Equal(t, "overdue", updated["status"], "invoice.updated carries the status the invoice shows")

	require.NoError(t, srv.UpdateInvoice(id, InvoiceUpdate{DueDate: time.Date(2026, time.April, 1, 0, 0, 0, 0, time.UTC)}))
	assert.Equal(t, "awaiting_payment", statusOf(t, srv, id), "a later due date: no longer overdue")

	require.NoError(t, srv.UpdateInvoice(id, InvoiceUpdate{Status: invoicing.InvoiceStatusOverdue}))
	assert.Equal(t, "overdue", statusOf(t, srv, id), "staff may mark it overdue before its due date")
	require.NoError(t, srv.UpdateInvoice(id, InvoiceUpdate{Status: invoicing.InvoiceStatusAwaitingPayment}))
	assert.Equal(t, "awaiting_payment", statusOf(t, srv, id), "and take it back")
}

// SaveState records the status the invoice was given; whether it is overdue
// is worked out again from the clock of the server that loads it.
func TestOverdueAfterLoadStateFollowsTheLoadingServersClock(t *testing.T) {
	srv, clock := newServer(t)
	id := createInvoice(t, srv, map[string]any{"status": "awaiting_payment", "due_date": "2026-03-12"})["id"].(string)
	clock.Advance(7 * 24 * time.Hour)
	require.Equal(t, "overdue", statusOf(t, srv, id))
	saved := saveState(t, srv)
	assert.True(t, bytes.Contains(saved, []byte(`"status": "awaiting_payment"`)), "saved as awaiting_payment")
	assert.False(t, bytes.Contains(saved, []byte(`"overdue"`)), "not as overdue")

	earlier, _ := newServer(t) // the clock of testStart, before the due date
	require.NoError(t, earlier.LoadState(bytes.NewReader(saved)))
	assert.Equal(t, "awaiting_payment", statusOf(t, earlier, id))

	later := NewTestServer(t, WithClock(NewFakeClock(testStart.AddDate(0, 1, 0))))
	require.NoError(t, later.LoadState(bytes.NewReader(saved)))
	assert.Equal(t, "overdue", statusOf(t, later, id))
}
