package pgmirror_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// hookUp serves m's Handler and registers it as a webhook endpoint of srv
// for every event; the Handler verifies deliveries against the fake clock.
func hookUp(t testing.TB, srv *invoicingtest.Server, clock *invoicingtest.FakeClock, m *pgmirror.Mirror) *invoicingtest.WebhookEndpoint {
	t.Helper()
	var mu sync.Mutex
	var h http.Handler = http.NotFoundHandler()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		handler := h
		mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	ep := srv.AddWebhookEndpoint(s.URL + "/webhooks")
	mu.Lock()
	h = m.Handler(verifierFor(t, ep, clock))
	mu.Unlock()
	return ep
}

// createInvoice creates an invoice through the API (invoice.created).
func createInvoice(t testing.TB, c *invoicing.Client, status invoicing.InvoiceStatus, lines int) *invoicing.Invoice {
	t.Helper()
	p := &invoicing.InvoiceCreateParams{ClientID: invoicingtest.SeedClientID, Status: status, Notes: "created",
		DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID}
	for i := range lines {
		p.LineItems = append(p.LineItems, invoicing.LineItemParams{Description: "Work", UnitPrice: decimal.NewFromInt(int64(100 + i))})
	}
	res, err := c.Invoices.Create(context.Background(), p)
	require.NoError(t, err)
	return res.Invoice
}

// createQuote creates a quote through the API (quote.created).
func createQuote(t testing.TB, c *invoicing.Client, lines int) *invoicing.Quote {
	t.Helper()
	p := &invoicing.QuoteCreateParams{ClientID: invoicingtest.SeedOtherClientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID}
	for i := range lines {
		l := invoicing.LineItemParams{Description: "Option", UnitPrice: decimal.RequireFromString("49.95")}
		if i == 0 {
			l.ItemID = invoicingtest.SeedItemID
		}
		p.LineItems = append(p.LineItems, l)
	}
	q, err := c.Quotes.Create(context.Background(), p)
	require.NoError(t, err)
	return q
}

// createBill creates a bill through the API (bill.created).
func createBill(t testing.TB, c *invoicing.Client) *invoicing.Bill {
	t.Helper()
	b, err := c.Bills.Create(context.Background(), &invoicing.BillCreateParams{SupplierID: invoicingtest.SeedSupplierID,
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{Description: "Paper", UnitPrice: decimal.RequireFromString("12.34")}}})
	require.NoError(t, err)
	return b
}

// Every documented event makes the mirror fetch the records it names: once
// the deliveries are processed, the mirror equals the service without any
// reconciliation.
func TestEveryEventFetchesItsRecords(t *testing.T) {
	t.Parallel()
	srv, clock := newFake(t)
	schema := newSchemaName()
	m := openMirror(t, testConfig(sdkClient(srv), schema))
	ep := hookUp(t, srv, clock, m)
	run(t, m)
	db := adminPool(t, schema)
	waitBackfilled(t, db, 30*time.Second)
	c := srv.Client()

	inv := createInvoice(t, c, invoicing.InvoiceStatusDraft, 2)
	require.NoError(t, srv.SendInvoice(inv.ID))
	notes := "updated"
	require.NoError(t, srv.UpdateInvoice(inv.ID, invoicingtest.InvoiceUpdate{Notes: &notes}))
	_, err := srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: decimal.NewFromInt(50)})
	require.NoError(t, err)
	got, err := c.Invoices.Get(context.Background(), inv.ID)
	require.NoError(t, err)
	_, err = srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: got.AmountDue}) // invoice.paid too
	require.NoError(t, err)

	q := createQuote(t, c, 3)
	require.NoError(t, srv.SendQuote(q.ID))
	require.NoError(t, srv.ViewQuote(q.ID, nil))
	accepted, err := srv.AcceptQuote(q.ID, invoicingtest.AcceptOptions{})
	require.NoError(t, err)
	require.NoError(t, srv.UnacceptQuote(q.ID))

	b := createBill(t, c)
	require.NoError(t, srv.ApproveBill(b.ID))
	srv.AddClient(invoicingtest.Contact{Name: "New client", Email: "new@client.example"})
	srv.AddSupplier(invoicingtest.Contact{Name: "New supplier"})
	_, err = ep.Test()
	require.NoError(t, err)

	seen := map[webhooks.EventType]bool{}
	for _, d := range ep.Deliveries() {
		seen[d.Event] = true
		require.Equal(t, invoicingtest.DeliverySucceeded, d.Status, "delivery %s of %s", d.ID, d.Event)
	}
	for _, e := range invoicingtest.AllEvents() {
		assert.True(t, seen[e], "no %s delivered", e)
	}
	waitDrained(t, db, 30*time.Second)
	requireMirrorEqual(t, srv, schema)
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM invoices WHERE id = $1 AND status = 'draft'`, accepted.InvoiceID),
		"the invoice the quote converted into")
}

// Ten events for one invoice become one request to fetch it, and one fetch.
// The Workers turn the deliveries into requests first; the fetchers run
// only afterwards, so that the test does not race the coalescing window.
func TestABurstOfEventsCausesOneFetch(t *testing.T) {
	t.Parallel()
	srv, clock := newFake(t)
	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv), schema)
	cfg.CoalesceWindow = time.Hour
	m := openMirror(t, cfg)
	require.NoError(t, m.Backfill(context.Background()))
	hookUp(t, srv, clock, m)
	inv := createInvoice(t, srv.Client(), invoicing.InvoiceStatusAwaitingPayment, 1)
	for i := range 9 {
		_, err := srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: decimal.NewFromInt(int64(i + 1))})
		require.NoError(t, err)
	}
	db := adminPool(t, schema)
	require.Equal(t, 10, count(t, db, `SELECT count(*) FROM invoicing_webhook_inbox`))

	workers, stopWorkers := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.RunWorkers(workers); close(done) }()
	waitUntil(t, 10*time.Second, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM invoicing_webhook_inbox WHERE status = 'processed'`) == 10, "deliveries processed"
	})
	stopWorkers()
	<-done

	var asked int
	var wait time.Duration
	require.NoError(t, db.QueryRow(context.Background(), `SELECT request_seq, due_at - requested_at FROM mirror_pending_fetch
		WHERE resource = 'invoices' AND id = $1`, inv.ID).Scan(&asked, &wait))
	assert.Equal(t, 10, asked, "ten requests, one row")
	assert.Equal(t, time.Hour, wait, "due a window after the first request, not moved by the later ones")
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM mirror_pending_fetch`))
	var requestedAt, firstReceived time.Time
	require.NoError(t, db.QueryRow(context.Background(), `SELECT requested_at FROM mirror_pending_fetch`).Scan(&requestedAt))
	require.NoError(t, db.QueryRow(context.Background(), `SELECT min(received_at) FROM invoicing_webhook_inbox`).Scan(&firstReceived))
	assert.True(t, requestedAt.Equal(firstReceived), "dated when the first delivery was received (the lag's start): %v, not %v", firstReceived, requestedAt)

	_, err := db.Exec(context.Background(), `UPDATE mirror_pending_fetch SET due_at = now()`) // the window has passed
	require.NoError(t, err)
	before := requests(srv, "GET /invoices/")
	fetchUntilDrained(t, m, db)
	assert.Equal(t, 1, requests(srv, "GET /invoices/")-before, "fetches of the invoice")
	requireMirrorEqual(t, srv, schema)
}

// fetchUntilDrained runs m's fetchers until no request is left.
func fetchUntilDrained(t testing.TB, m *pgmirror.Mirror, db *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.RunFetchers(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitUntil(t, 30*time.Second, func() (bool, string) {
		n := count(t, db, `SELECT count(*) FROM mirror_pending_fetch`)
		return n == 0, fmt.Sprintf("%d fetches pending", n)
	})
}

// getHook is SDK middleware that calls fn after the service answered a
// GET of one record (/{collection}/{id}), before the mirror sees the answer.
func getHook(collection string, fn func(id string)) invoicing.Middleware {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		rest, ok := strings.CutPrefix(req.URL.Path, invoicingtest.BasePath+"/"+collection+"/")
		if ok && req.Method == http.MethodGet && err == nil && !strings.Contains(rest, "/") {
			fn(rest)
		}
		return resp, err
	}
}

// An event that comes in while its record is being fetched makes the
// record be fetched again: the fetch in flight may have read the record
// before the change.
func TestAnEventDuringAFetchFetchesAgain(t *testing.T) {
	t.Parallel()
	srv, clock := newFake(t)
	schema := newSchemaName()
	db := adminPool(t, schema)
	var once sync.Once
	var bumped bool
	hook := getHook("invoices", func(id string) {
		once.Do(func() { // the first fetch has its answer: now the invoice changes and its event comes in
			notes := "changed during the fetch"
			if srv.UpdateInvoice(id, invoicingtest.InvoiceUpdate{Notes: &notes}) == nil {
				bumped, _ = poll(10*time.Second, func() (bool, string) {
					var n int
					err := db.QueryRow(context.Background(), `SELECT request_seq FROM mirror_pending_fetch WHERE id = $1`, id).Scan(&n)
					return err == nil && n == 2, "the second request"
				})
			}
		})
	})
	m := openMirror(t, testConfig(sdkClient(srv, invoicing.WithMiddleware(hook)), schema))
	hookUp(t, srv, clock, m)
	run(t, m)
	waitBackfilled(t, db, 30*time.Second)

	before := requests(srv, "GET /invoices/")
	inv := createInvoice(t, srv.Client(), invoicing.InvoiceStatusDraft, 1)
	waitDrained(t, db, 30*time.Second)
	require.True(t, bumped, "the second event arrived while the first fetch was in flight")
	assert.Equal(t, 2, requests(srv, "GET /invoices/")-before, "fetches of the invoice")
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM invoices WHERE id = $1 AND notes = 'changed during the fetch'`, inv.ID))
	requireMirrorEqual(t, srv, schema)
}

// A fetch whose answer arrives late, after a later fetch wrote a newer
// state with the same updated_at (the fake's clock stands still, as two
// changes in one second do), does not roll the row back.
func TestALateFetchCannotRollARowBack(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	inv := createInvoice(t, srv.Client(), invoicing.InvoiceStatusDraft, 1)
	schema := newSchemaName()
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hook := getHook("invoices", func(string) {
		once.Do(func() {
			close(held)
			<-release
		})
	})
	m := openMirror(t, testConfig(sdkClient(srv, invoicing.WithMiddleware(hook)), schema))
	require.NoError(t, m.Backfill(context.Background()))
	db := adminPool(t, schema)

	// An event asks for the invoice (this test plays the Worker); the
	// fetcher's answer shows the notes "created" and is held back.
	_, err := db.Exec(context.Background(), `INSERT INTO mirror_pending_fetch (business, resource, id, due_at) VALUES ('default', 'invoices', $1, now())`, inv.ID)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.RunFetchers(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-held

	notes := "changed, seen by a later fetch" // an event-less change in the same second
	require.NoError(t, srv.UpdateInvoice(inv.ID, invoicingtest.InvoiceUpdate{Notes: &notes}))
	corrected, err := m.Reconcile(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, corrected[pgmirror.Invoices])
	close(release)

	waitUntil(t, 10*time.Second, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM mirror_pending_fetch`) == 0, "the held fetch written"
	})
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM invoices WHERE notes = $1`, notes))
	requireMirrorEqual(t, srv, schema)
}

// A record an event names but the service does not show (the API deletes
// nothing; it may not be readable yet) is tried three times, then the
// request is dropped with a warning.
func TestARecordTheServiceDoesNotShowIsDroppedWithAWarning(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv), schema)
	var logs syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	m := openMirror(t, cfg)
	db := adminPool(t, schema)
	id := "0b5e55ed-0000-4000-8000-000000000404"
	_, err := db.Exec(context.Background(), `INSERT INTO mirror_pending_fetch (business, resource, id, due_at) VALUES ('default', 'invoices', $1, now())`, id)
	require.NoError(t, err)

	fetchUntilDrained(t, m, db)
	assert.Equal(t, 3, requests(srv, "GET /invoices/"+id))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices`))
	assert.Contains(t, logs.String(), `level=WARN msg="pgmirror: the service does not show a record an event named; dropping the request" business=default resource=invoices id=`+id)
}
