package webhooks_test

import (
	"context"
	"errors"
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

// fetchedRecords notes, per event type, the ids of the records the Router's
// functions fetched.
type fetchedRecords struct {
	mu  sync.Mutex
	ids map[webhooks.EventType][]string
}

// route registers, for E, a function that fetches the records e names and
// notes their ids.
func route[E webhooks.TypedEvent](r *webhooks.Router, seen *fetchedRecords, fetch func(ctx context.Context, e E) ([]string, error)) {
	webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e E) error {
		ids, err := fetch(ctx, e)
		if err != nil {
			return err
		}
		seen.mu.Lock()
		defer seen.mu.Unlock()
		seen.ids[d.Type] = append(seen.ids[d.Type], ids...)
		return nil
	})
}

// routeFetch registers, for E, a function that fetches the record fetch
// (a Fetch method of E) names and notes its id.
func routeFetch[E webhooks.TypedEvent, R any](r *webhooks.Router, seen *fetchedRecords, c *invoicing.Client,
	fetch func(E, context.Context, *invoicing.Client, ...invoicing.RequestOption) (*R, error), id func(*R) string) {
	route(r, seen, func(ctx context.Context, e E) ([]string, error) {
		rec, err := fetch(e, ctx, c)
		if err != nil {
			return nil, err
		}
		return []string{id(rec)}, nil
	})
}

// TestRouterRoutesEveryEventOfTheFake drives invoicingtest through the 13
// documented events, delivered signed to a Router with a function for each
// type, and checks that each function got its typed event and fetched
// the record the event names.
func TestRouterRoutesEveryEventOfTheFake(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	c := srv.Client()
	seen := &fetchedRecords{ids: map[webhooks.EventType][]string{}}
	var unhandled []webhooks.EventType
	r := webhooks.NewRouter(func(ctx context.Context, d *webhooks.Delivery) error {
		unhandled = append(unhandled, d.Type) // deliveries are synchronous: no race
		return nil
	})
	invoiceID := func(inv *invoicing.Invoice) string { return inv.ID }
	billID := func(b *invoicing.Bill) string { return b.ID }
	quoteID := func(q *invoicing.Quote) string { return q.ID }
	routeFetch(r, seen, c, (*webhooks.InvoiceCreated).FetchInvoice, invoiceID)
	routeFetch(r, seen, c, (*webhooks.InvoiceSent).FetchInvoice, invoiceID)
	routeFetch(r, seen, c, (*webhooks.InvoiceUpdated).FetchInvoice, invoiceID)
	routeFetch(r, seen, c, (*webhooks.InvoicePaid).FetchInvoice, invoiceID)
	routeFetch(r, seen, c, (*webhooks.PaymentReceived).FetchInvoice, invoiceID)
	routeFetch(r, seen, c, (*webhooks.BillCreated).FetchBill, billID)
	routeFetch(r, seen, c, (*webhooks.BillApproved).FetchBill, billID)
	route(r, seen, func(ctx context.Context, e *webhooks.ContactCreated) ([]string, error) {
		ct, err := e.FetchContact(ctx, c)
		if err != nil {
			return nil, err
		}
		return []string{string(e.ContactType) + " " + ct.ID}, nil
	})
	routeFetch(r, seen, c, (*webhooks.QuoteCreated).FetchQuote, quoteID)
	routeFetch(r, seen, c, (*webhooks.QuoteSent).FetchQuote, quoteID)
	routeFetch(r, seen, c, (*webhooks.QuoteViewed).FetchQuote, quoteID)
	route(r, seen, func(ctx context.Context, e *webhooks.QuoteAccepted) ([]string, error) {
		q, qErr := e.FetchQuote(ctx, c)
		inv, invErr := e.FetchInvoice(ctx, c)
		if err := errors.Join(qErr, invErr); err != nil {
			return nil, err
		}
		return []string{q.ID, inv.ID}, nil
	})
	routeFetch(r, seen, c, (*webhooks.QuoteUnaccepted).FetchQuote, quoteID)
	ep := srv.NewReceiver(r.Handle)

	ctx := t.Context()
	inv, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{Description: "Design", UnitPrice: decimal.NewFromInt(200)}},
	})
	require.NoError(t, err)
	require.NoError(t, srv.SendInvoice(inv.ID))
	notes := "Thanks!"
	require.NoError(t, srv.UpdateInvoice(inv.ID, invoicingtest.InvoiceUpdate{Notes: &notes}))
	_, err = srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: decimal.NewFromInt(20)})
	require.NoError(t, err)
	_, err = srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: inv.Total.Sub(decimal.NewFromInt(20))})
	require.NoError(t, err)

	bill, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: invoicingtest.SeedSupplierID, Status: invoicing.BillStatusAwaitingApproval,
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{Description: "Paper", UnitPrice: decimal.NewFromInt(30)}},
	})
	require.NoError(t, err)
	require.NoError(t, srv.ApproveBill(bill.ID))
	client, err := c.Clients.Create(ctx, &invoicing.ContactCreateParams{Name: "Initech"})
	require.NoError(t, err)
	supplier, err := c.Suppliers.Create(ctx, &invoicing.ContactCreateParams{Name: "Paper Co"})
	require.NoError(t, err)

	q, err := c.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
		ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{Description: "Website", UnitPrice: decimal.NewFromInt(900)}},
	})
	require.NoError(t, err)
	require.NoError(t, srv.SendQuote(q.ID))
	require.NoError(t, srv.ViewQuote(q.ID, nil))
	accepted, err := srv.AcceptQuote(q.ID, invoicingtest.AcceptOptions{})
	require.NoError(t, err)
	require.NoError(t, srv.UnacceptQuote(q.ID))
	_, err = ep.Test()
	require.NoError(t, err)

	assert.Equal(t, map[webhooks.EventType][]string{
		webhooks.EventInvoiceCreated:  {inv.ID, accepted.InvoiceID},
		webhooks.EventInvoiceSent:     {inv.ID},
		webhooks.EventInvoiceUpdated:  {inv.ID},
		webhooks.EventPaymentReceived: {inv.ID, inv.ID},
		webhooks.EventInvoicePaid:     {inv.ID},
		webhooks.EventBillCreated:     {bill.ID},
		webhooks.EventBillApproved:    {bill.ID},
		webhooks.EventContactCreated:  {"client " + client.ID, "supplier " + supplier.ID},
		webhooks.EventQuoteCreated:    {q.ID},
		webhooks.EventQuoteSent:       {q.ID},
		webhooks.EventQuoteViewed:     {q.ID},
		webhooks.EventQuoteAccepted:   {q.ID, accepted.InvoiceID},
		webhooks.EventQuoteUnaccepted: {q.ID},
	}, seen.ids)
	assert.Len(t, seen.ids, len(invoicingtest.AllEvents()), "every event type the service documents")
	assert.Equal(t, []webhooks.EventType{webhooks.EventTest}, unhandled, "the test delivery has no function: the fallback gets it")
	for _, d := range ep.Deliveries() {
		assert.Equal(t, invoicingtest.DeliverySucceeded, d.Status, "%s was answered 2xx", d.Event)
	}
}

// answer sends h the delivery of eventType whose body is the fixture named
// and returns the status h answers.
func answer(t *testing.T, h http.Handler, eventType webhooks.EventType, fixtureName string) int {
	t.Helper()
	return serve(h, signedRequest(testSecret, testTimestamp, eventType, fixture(t, fixtureName))).Code
}

func TestRouterFallbackGetsWhatNoFunctionHandles(t *testing.T) {
	var got []webhooks.Event
	r := webhooks.NewRouter(func(ctx context.Context, d *webhooks.Delivery) error {
		got = append(got, d.Event)
		return errors.New("not handled") // the service retries these
	})
	webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e *webhooks.InvoicePaid) error { return nil })
	h := webhooks.Handler(newVerifier(t), r.Handle)

	assert.Equal(t, http.StatusOK, answer(t, h, webhooks.EventInvoicePaid, "invoice.paid.json"))
	assert.Equal(t, http.StatusInternalServerError, answer(t, h, webhooks.EventBillApproved, "bill.approved.json"))
	assert.Equal(t, http.StatusInternalServerError, answer(t, h, "credit_note.created", "test.json"))
	require.Len(t, got, 2)
	assert.IsType(t, &webhooks.BillApproved{}, got[0], "a known type without a function")
	assert.Equal(t, &webhooks.RawEvent{Type: "credit_note.created", Body: fixture(t, "test.json")}, got[1], "an unknown type")

	// Without a fallback, they are acknowledged and nothing else happens.
	h = webhooks.Handler(newVerifier(t), webhooks.NewRouter(nil).Handle)
	assert.Equal(t, http.StatusOK, answer(t, h, "credit_note.created", "test.json"))
	assert.Equal(t, http.StatusOK, answer(t, h, webhooks.EventTest, "test.json"))
	assert.NoError(t, webhooks.NewRouter(nil).Handle(t.Context(), &webhooks.Delivery{}), "a delivery without an event")
}

func TestRouterFunctionErrorsAndPanicsFailTheDelivery(t *testing.T) {
	r := webhooks.NewRouter(nil)
	failed := errors.New("database down")
	webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e *webhooks.InvoicePaid) error { return failed })
	webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e *webhooks.Test) error { panic("bug") })
	h := webhooks.Handler(newVerifier(t), r.Handle)

	assert.Equal(t, http.StatusInternalServerError, answer(t, h, webhooks.EventInvoicePaid, "invoice.paid.json"))
	assert.Equal(t, http.StatusInternalServerError, answer(t, h, webhooks.EventTest, "test.json"))
	err := r.Handle(t.Context(), &webhooks.Delivery{Type: webhooks.EventInvoicePaid, Event: &webhooks.InvoicePaid{}})
	assert.ErrorIs(t, err, failed, "Handle returns the function's error as it is")
}

func TestRouterServesManyBusinesses(t *testing.T) {
	r := webhooks.NewRouter(nil)
	var paid []string
	webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e *webhooks.InvoicePaid) error {
		paid = append(paid, d.Business+" "+e.InvoiceNumber)
		return nil
	})
	v := newVerifier(t)
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", webhooks.BusinessHandler(func(ctx context.Context, business string) (*webhooks.Verifier, error) {
		return v, nil
	}, r.Handle))
	req := signedRequest(testSecret, testTimestamp, webhooks.EventInvoicePaid, fixture(t, "invoice.paid.json"))
	req.URL.Path = "/webhooks/acme"
	assert.Equal(t, http.StatusOK, serve(mux, req).Code)
	assert.Equal(t, []string{"acme INV-0412"}, paid)
}

func TestOnRefusesMistakes(t *testing.T) {
	r := webhooks.NewRouter(nil)
	paid := func(ctx context.Context, d *webhooks.Delivery, e *webhooks.InvoicePaid) error { return nil }
	webhooks.On(r, paid)
	assert.PanicsWithValue(t, "webhooks: On[*webhooks.InvoicePaid]: invoice.paid already has a function", func() { webhooks.On(r, paid) })
	assert.PanicsWithValue(t, "webhooks: On[*webhooks.InvoiceSent] needs a Router and a function", func() {
		webhooks.On[*webhooks.InvoiceSent](r, nil)
	})
	assert.PanicsWithValue(t, "webhooks: On[*webhooks.InvoicePaid] needs a Router and a function", func() { webhooks.On(nil, paid) })
	assert.PanicsWithValue(t, "webhooks: On needs an event type, such as *webhooks.InvoicePaid, not an interface", func() {
		webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e webhooks.TypedEvent) error { return nil })
	})
}

func TestRouterRegistersWhileItServes(t *testing.T) {
	r := webhooks.NewRouter(nil)
	d := &webhooks.Delivery{Type: webhooks.EventInvoiceSent, Event: &webhooks.InvoiceSent{InvoiceID: "i-1"}}
	var wg sync.WaitGroup
	wg.Go(func() {
		webhooks.On(r, func(ctx context.Context, d *webhooks.Delivery, e *webhooks.InvoiceSent) error { return nil })
	})
	for range 4 {
		wg.Go(func() { assert.NoError(t, r.Handle(t.Context(), d)) })
	}
	wg.Wait()
}

func TestFetchWithoutARecordMakesNoRequest(t *testing.T) {
	var noClient *invoicing.Client // any request would panic
	_, err := (&webhooks.QuoteAccepted{Quote: webhooks.Quote{QuoteNumber: "QU-0001"}}).FetchInvoice(t.Context(), noClient)
	assert.ErrorIs(t, err, webhooks.ErrNotConverted)
	assert.EqualError(t, err, "webhooks: the accepted quote was not converted into an invoice: quote QU-0001")

	_, err = (&webhooks.ContactCreated{ContactID: "c-1", ContactType: "partner"}).FetchContact(t.Context(), noClient)
	assert.EqualError(t, err, `webhooks: contact c-1 has contact_type "partner", neither client nor supplier`)
}

func TestFetchReturnsTheClientsErrors(t *testing.T) {
	srv := invoicingtest.NewTestServer(t)
	e := &webhooks.InvoicePaid{InvoiceID: "9b1f0c55-54cf-4a52-8fb1-3cb3a3ab3f3e", PaidAt: time.Now()}
	_, err := e.FetchInvoice(t.Context(), srv.Client())
	assert.ErrorIs(t, err, invoicing.ErrNotFound, "an invoice the service does not hold")
}
