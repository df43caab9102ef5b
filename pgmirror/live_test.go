package pgmirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
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

// Every documented event makes the mirror fetch the records it names: once
// the deliveries are processed, the mirror equals the service without any
// reconciliation.
func TestEveryEventFetchesItsRecords(t *testing.T) {
	t.Parallel()
	srv, clock := newFake(t)
	m, db := newMirror(t, srv)
	ep := hookUp(t, srv, clock, m)
	run(t, m)
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
	requireMirrorEqual(t, srv, m.Schema())
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM invoices WHERE id = $1 AND status = 'draft'`, accepted.InvoiceID),
		"the invoice the quote converted into")
}

// Ten events for one invoice become one request to fetch it, and one fetch.
// The Workers turn the deliveries into requests first; the fetchers run
// only afterwards, so that the test does not race the coalescing window.
func TestABurstOfEventsCausesOneFetch(t *testing.T) {
	t.Parallel()
	srv, clock := newFake(t)
	m, db := newMirror(t, srv, func(cfg *pgmirror.Config) { cfg.CoalesceWindow = time.Hour })
	require.NoError(t, m.Backfill(context.Background()))
	hookUp(t, srv, clock, m)
	inv := createInvoice(t, srv.Client(), invoicing.InvoiceStatusAwaitingPayment, 1)
	for i := range 9 {
		_, err := srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: decimal.NewFromInt(int64(i + 1))})
		require.NoError(t, err)
	}
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
	requireMirrorEqual(t, srv, m.Schema())
}

// Records fetched together are settled together, each on its own: a
// request that came in during the fetch of one of them makes that one due
// again after the coalescing window, unleased, and the others' requests
// are removed; each fetch's lag is recorded.
func TestAGroupsFetchSettlesEachRequest(t *testing.T) {
	t.Parallel()
	schema, db := migratedSchema(t)
	ctx := context.Background()
	_, err := db.Exec(ctx, `INSERT INTO mirror_pending_fetch (business, resource, id, due_at, request_seq)
		SELECT 'b1', 'invoices', id, now(), n FROM unnest(ARRAY['inv1', 'inv2', 'inv3'], ARRAY[3, 1, 2]) AS r(id, n)`) // each asked for a number of times
	require.NoError(t, err)
	ids, err := pgmirror.ClaimAndSettleForTest(ctx, db, schema, "b1", time.Hour, func([]string) {
		_, err := db.Exec(ctx, `UPDATE mirror_pending_fetch SET request_seq = request_seq + 1 WHERE id = 'inv2'`) // an event meanwhile
		require.NoError(t, err)
	})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"inv1", "inv2", "inv3"}, ids, "claimed together")
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM mirror_pending_fetch`), "one request left")
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM mirror_pending_fetch
		WHERE id = 'inv2' AND lease_until IS NULL AND attempts = 0 AND due_at > now() + interval '59 minutes'`), "due again after the window")
	assert.Equal(t, 3, count(t, db, `SELECT count(*) FROM mirror_event_lag WHERE business = 'b1'`))
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
	var logs syncBuffer
	m, db := newMirror(t, srv, func(cfg *pgmirror.Config) { cfg.Logger = logs.logger() })
	id := "0b5e55ed-0000-4000-8000-000000000404"
	_, err := db.Exec(context.Background(), `INSERT INTO mirror_pending_fetch (business, resource, id, due_at) VALUES ('default', 'invoices', $1, now())`, id)
	require.NoError(t, err)

	fetchUntilDrained(t, m, db)
	assert.Equal(t, 3, requests(srv, "GET /invoices/"+id))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices`))
	assert.Contains(t, logs.String(), `level=WARN msg="pgmirror: the service does not show a record an event named; dropping the request" business=default resource=invoices id=`+id)
}

// The inbox: the deliveries the mirror stores, refuses while it is behind,
// and lists, shows and requeues (invoicing-mirror deliveries).

// deliveriesSecret signs the deliveries of these tests.
var deliveriesSecret = strings.Repeat("3c", 32)

// contactDelivery is a signed contact.created delivery of a client.
func contactDelivery(id string) webhooks.TestDelivery {
	body := fmt.Sprintf(`{"contact_id":%q,"contact_type":"client","name":"Client","email":"c@example.com","created_at":"2026-01-02T03:04:05Z"}`, id)
	return webhooks.TestDelivery{Secret: deliveriesSecret, Type: webhooks.EventContactCreated, DeliveryID: id, Body: []byte(body)}
}

// deliver posts d to url and returns the status and Retry-After header.
func deliver(t testing.TB, url string, d webhooks.TestDelivery) (int, string) {
	t.Helper()
	req, err := d.Request(url)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// storeRow inserts a delivery's row in the inbox of db as a Worker would
// have left it; received is how long ago it was stored. Its event type is
// one the SDK does not know, which the Workers mark processed at once.
func storeRow(t testing.TB, db *pgxpool.Pool, business, id, status string, failures int, lastError string, received time.Duration) {
	t.Helper()
	_, err := db.Exec(context.Background(), `INSERT INTO invoicing_webhook_inbox
		(business, delivery_id, event_type, signed_at, body, received_at, status, attempts, failures, last_error, next_attempt_at, processed_at)
		VALUES ($1, $2, 'custom.event', now(), '{"n":1}', now() - $6 * interval '1 millisecond', $3, $4 + CASE WHEN $3 = 'processed' THEN 1 ELSE 0 END,
		        $4, nullif($5, ''), now(), CASE WHEN $3 = 'processed' THEN now() END)`,
		business, id, status, failures, lastError, received.Milliseconds())
	require.NoError(t, err)
}

// statusOf reads a delivery's status.
func statusOf(t testing.TB, db *pgxpool.Pool, business, id string) string {
	t.Helper()
	var s string
	require.NoError(t, db.QueryRow(context.Background(), `SELECT status FROM invoicing_webhook_inbox WHERE business = $1 AND delivery_id = $2`,
		business, id).Scan(&s))
	return s
}

// invoicing-mirror deliveries lists the inbox (filtered, a page at a
// time, as a table or JSON), shows a delivery whole, and requeues
// deliveries by id or every failed one, which a running replica's Workers
// then process; each mistake has its exit status.
func TestDeliveriesCommandListsShowsAndRequeues(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	m, db := newMirror(t, srv)
	schema := m.Schema()
	// Newest last.
	storeRow(t, db, "", "d-failed", "failed", 10, "fetching: boom\n\tat line 2", 3*time.Hour)
	storeRow(t, db, "", "d-ok", "processed", 0, "", 2*time.Hour)
	storeRow(t, db, "acme", "shared", "processed", 0, "", 90*time.Minute)
	storeRow(t, db, "acme", "a-failed", "failed", 10, "acme's error", 30*time.Minute)
	storeRow(t, db, "globex", "shared", "pending", 2, "once", 20*time.Minute)
	storeRow(t, db, "globex", "g-failed", "failed", 10, "globex's error", 10*time.Minute)
	env := commandEnv(srv.URL, "", "", postgresOf(schema).URL)
	deliveries := func(args ...string) (string, int) { // the command, --schema, then its flags and arguments
		return runCommand(t, env, append([]string{"deliveries", args[0], "--schema", schema}, args[1:]...)...)
	}
	idsIn := func(out string) []string {
		var ids []string
		for _, line := range strings.Split(out, "\n")[1:] {
			if f := strings.Fields(line); len(f) > 3 && !strings.HasPrefix(line, "(") {
				ids = append(ids, f[2]+"@"+f[3])
			}
		}
		return ids
	}

	out, code := deliveries("list")
	require.Equal(t, 0, code, out)
	assert.Regexp(t, `^RECEIVED\s+BUSINESS\s+ID\s+EVENT\s+STATUS\s+ATTEMPTS\s+FAILURES\s+LAST ERROR\n`, out)
	assert.Equal(t, []string{"globex@g-failed", "globex@shared", "acme@a-failed", "acme@shared", "-@d-ok", "-@d-failed"}, idsIn(out), "newest first")
	assert.Regexp(t, `-\s+d-failed\s+custom.event\s+failed\s+10\s+10\s+fetching: boom…\n`, out, "the first line of the last error")
	assert.Regexp(t, `acme\s+shared\s+custom.event\s+processed\s+1\s+0\s+-\n`, out)

	out, code = deliveries("list", "--failed", "--since", "1h")
	require.Equal(t, 0, code, out)
	assert.Equal(t, []string{"globex@g-failed", "acme@a-failed"}, idsIn(out))
	out, code = deliveries("list", "--business", "-")
	require.Equal(t, 0, code, out)
	assert.Equal(t, []string{"-@d-ok", "-@d-failed"}, idsIn(out), "the deliveries of a mirror without businesses")
	out, code = deliveries("list", "--business", "nobody")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "no deliveries")

	var page struct {
		Deliveries []map[string]any `json:"deliveries"`
		Next       string           `json:"next"`
	}
	out, code = deliveries("list", "--failed", "--json")
	require.Equal(t, 0, code, out)
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
	require.Len(t, page.Deliveries, 3)
	assert.Empty(t, page.Next)
	assert.Equal(t, "globex", page.Deliveries[0]["business"])
	assert.Equal(t, "g-failed", page.Deliveries[0]["id"])
	assert.Equal(t, "globex's error", page.Deliveries[0]["last_error"])
	assert.Equal(t, 10.0, page.Deliveries[0]["failures"])
	assert.Nil(t, page.Deliveries[0]["processed_at"])
	assert.NotContains(t, page.Deliveries[0], "body", "a listing leaves the bodies out")

	// Pages: --limit, then --after the cursor printed.
	var paged []string
	args := []string{"list", "--limit", "4"}
	for range 3 {
		out, code = deliveries(args...)
		require.Equal(t, 0, code, out)
		paged = append(paged, idsIn(out)...)
		more := regexp.MustCompile(`\(more: add --after (\S+)\)`).FindStringSubmatch(out)
		if more == nil {
			break
		}
		args = []string{"list", "--limit", "4", "--after", more[1]}
	}
	assert.Equal(t, []string{"globex@g-failed", "globex@shared", "acme@a-failed", "acme@shared", "-@d-ok", "-@d-failed"}, paged)
	out, code = deliveries("list", "--limit", "0", "--json")
	require.Equal(t, 0, code, out)
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
	assert.Len(t, page.Deliveries, 6, "--limit 0: all")

	out, code = deliveries("show", "d-failed")
	require.Equal(t, 0, code, out)
	for _, s := range []string{"delivery   d-failed\n", "business   -\n", "status     failed\n", "attempts   10, 10 failed\n",
		"last error:\n  fetching: boom\n  \tat line 2\n", "body:\n  {\"n\":1}\n"} {
		assert.Contains(t, out, s)
	}
	out, code = deliveries("show", "shared")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "business   acme\n")
	assert.Contains(t, out, "business   globex\n", "an id in two businesses: both")
	out, code = deliveries("show", "--json", "shared", "--business", "globex")
	require.Equal(t, 0, code, out)
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
	require.Len(t, page.Deliveries, 1)
	assert.Equal(t, map[string]any{"n": 1.0}, page.Deliveries[0]["body"])
	out, code = deliveries("show", "nope")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "no delivery nope in the inbox")

	// Requeue: by id, then every failed one of globex since an hour ago;
	// a replica's Workers process them.
	out, code = deliveries("requeue", "shared")
	assert.Equal(t, 2, code, out)
	assert.Contains(t, out, "shared is in businesses acme, globex: say which with --business")
	out, code = deliveries("requeue", "a-failed", "nope")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "acme a-failed: requeued")
	assert.Contains(t, out, "nope: not in the inbox")
	out, code = deliveries("requeue", "--failed", "--since", "1h", "--business", "globex")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "1 failed deliveries requeued")
	assert.Equal(t, "failed", statusOf(t, db, "", "d-failed"), "not selected")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.RunWorkers(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitUntil(t, 30*time.Second, func() (bool, string) {
		a, g := statusOf(t, db, "acme", "a-failed"), statusOf(t, db, "globex", "g-failed")
		return a == "processed" && g == "processed", "acme's " + a + ", globex's " + g
	})
	out, code = deliveries("requeue", "--failed")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "1 failed deliveries requeued")
	waitUntil(t, 30*time.Second, func() (bool, string) {
		s := statusOf(t, db, "", "d-failed")
		return s == "processed", s
	})

	// Mistakes.
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"lsit"}, 2, `unknown command "lsit" (list, show or requeue) (did you mean "list"?)`},
		{[]string{"requeue"}, 2, "requeue takes IDs, or --failed"},
		{[]string{"requeue", "x", "--failed"}, 2, "requeue takes IDs, or --failed"},
		{[]string{"requeue", "x", "--since", "1h"}, 2, "--since goes with requeue --failed"},
		{[]string{"show"}, 2, "show takes one ID"},
		{[]string{"list", "--since", "yesterday"}, 2, `invalid value "yesterday" for --since`},
		{[]string{"list", "--after", "garbage"}, 2, `invalid ListParams: After "garbage" is not a DeliveryPage.Next`},
		{[]string{"list", "--status", "done"}, 2, `invalid ListParams: Status "done" is not pending, processed or failed`},
		{[]string{"list", "--schema", "nowhere"}, 2, "schema nowhere holds no webhook inbox"},
	} {
		out, code := deliveries(c.args...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, out)
		assert.Contains(t, out, c.want, "%v", c.args)
	}
	out, code = runCommand(t, env, "deliveries", "--help")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "Exit status:")
	out, code = runCommand(t, env, "deliveries")
	assert.Equal(t, 2, code, out)
	out, code = runCommand(t, append(env, "DATABASE_URL="), "deliveries", "list")
	assert.Equal(t, 2, code, out)
	assert.Contains(t, out, "set DATABASE_URL")
}

// A mirror whose Workers do not run answers its webhook endpoint 503 with
// Retry-After once Config.InboxMaxPending deliveries are due, and stores
// deliveries again by itself once Workers run and catch up.
func TestTheMirrorAnswers503WhileItsInboxIsBehind(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	m, db := newMirror(t, srv, func(cfg *pgmirror.Config) { cfg.InboxMaxPending = 5 })
	v, err := webhooks.NewVerifier(deliveriesSecret)
	require.NoError(t, err)
	endpoint := httptest.NewServer(m.Handler(v))
	t.Cleanup(endpoint.Close)

	var refused []webhooks.TestDelivery
	for i := range 8 {
		d := contactDelivery(fmt.Sprintf("flood-%d", i))
		status, retryAfter := deliver(t, endpoint.URL, d)
		if i < 5 {
			require.Equal(t, http.StatusOK, status, "delivery %d", i)
			continue
		}
		require.Equal(t, http.StatusServiceUnavailable, status, "delivery %d", i)
		assert.Equal(t, "60", retryAfter)
		refused = append(refused, d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.RunWorkers(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for _, d := range refused { // the service's retries
		waitUntil(t, 30*time.Second, func() (bool, string) {
			status, _ := deliver(t, endpoint.URL, d)
			return status == http.StatusOK, fmt.Sprintf("delivery %s answered %d", d.DeliveryID, status)
		})
	}
	waitUntil(t, 30*time.Second, func() (bool, string) {
		n := count(t, db, `SELECT count(*) FROM invoicing_webhook_inbox WHERE status = 'processed'`)
		return n == 8, fmt.Sprintf("%d of 8 processed", n)
	})
}

// The command's --inbox-max-lag: while a Worker is held on a delivery due
// for ten minutes (here a lock of the test's that makes every Worker skip
// it), a replica answers 503 with Retry-After; once it is released, the
// replica's Workers process it and the replica stores deliveries again.
func TestTheCommandAnswers503WhileADeliveryWaitsTooLong(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	schema := newSchemaName()
	env := commandEnv(srv.URL, srv.FullKey, deliveriesSecret, postgresOf(schema).URL)
	p := startServing(t, env, "--listen", "127.0.0.1:0", "--schema", schema, "--inbox-max-lag", "1m")
	waitUntil(t, 30*time.Second, func() (bool, string) { // migrated: deliveries are stored
		status, _ := deliver(t, p.base+"/webhooks", contactDelivery("first"))
		return status == http.StatusOK, fmt.Sprintf("answered %d", status)
	})

	db := adminPool(t, schema)
	ctx := context.Background()
	_, err := db.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body, next_attempt_at)
		VALUES ('held', 'custom.event', now(), '{}', now() + interval '1 hour')`) // not due: no Worker takes it
	require.NoError(t, err)
	hold, err := db.Begin(ctx) // a key-share lock: the Workers' FOR UPDATE SKIP LOCKED skip the row, an UPDATE does not wait
	require.NoError(t, err)
	defer hold.Rollback(ctx)
	_, err = hold.Exec(ctx, `SELECT 1 FROM invoicing_webhook_inbox WHERE delivery_id = 'held' FOR KEY SHARE`)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `UPDATE invoicing_webhook_inbox SET next_attempt_at = now() - interval '10 minutes' WHERE delivery_id = 'held'`)
	require.NoError(t, err)

	d := contactDelivery("while-held")
	waitUntil(t, 30*time.Second, func() (bool, string) {
		status, retryAfter := deliver(t, p.base+"/webhooks", d)
		return status == http.StatusServiceUnavailable && retryAfter == "60", fmt.Sprintf("answered %d, Retry-After %q", status, retryAfter)
	})
	assert.Equal(t, "pending", statusOf(t, db, "", "held"))
	require.NoError(t, hold.Commit(ctx))
	waitUntil(t, 30*time.Second, func() (bool, string) {
		status, _ := deliver(t, p.base+"/webhooks", d)
		return status == http.StatusOK, fmt.Sprintf("answered %d", status)
	})
	assert.Equal(t, "processed", statusOf(t, db, "", "held"))
	for _, msg := range []string{"pginbox: the inbox is behind", "pginbox: the inbox caught up"} {
		waitUntil(t, 10*time.Second, func() (bool, string) { // logged once each
			return strings.Count(strings.Join(p.since(time.Time{}), "\n"), msg) == 1, "the log line " + msg
		})
	}
}

// The version rule, write by write: a fetch is applied only when its
// (updated_at, fetch order) is not older than the row's.

// newRuleMirror returns a migrated mirror with nothing in it, and a pool on
// its schema.
func newRuleMirror(t *testing.T) (*pgmirror.Mirror, func(sql string, args ...any) int) {
	srv, _ := newFake(t)
	m, db := newMirror(t, srv)
	return m, func(sql string, args ...any) int { return count(t, db, sql, args...) }
}

// invoice is an invoice record as a fetch returns it: notes mark which
// state of the record it is, lines its number of lines.
func invoice(updated *time.Time, notes string, lines int) *invoicing.Invoice {
	inv := &invoicing.Invoice{
		ID: "7d0e4bb4-0000-4000-8000-000000000001", InvoiceNumber: "INV-1", ClientID: invoicingtest.SeedClientID,
		Status: invoicing.InvoiceStatusDraft, IssueDate: invoicing.NewDate(2026, 3, 2), DueDate: invoicing.NewDate(2026, 4, 1),
		Total: decimal.RequireFromString("110.00"), Currency: "AUD", Notes: notes, CreatedAt: t0, UpdatedAt: updated,
	}
	for i := range lines {
		inv.LineItems = append(inv.LineItems, invoicing.InvoiceLineItem{ID: string(rune('a' + i)), Quantity: decimal.NewFromInt(1)})
	}
	return inv
}

func at(d time.Duration) *time.Time {
	t := t0.Add(d)
	return &t
}

func TestNewerUpdatedAtWinsWhateverTheFetchOrder(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	ctx := context.Background()
	written, err := m.ApplyForTest(ctx, 2, invoice(at(time.Minute), "newer", 3))
	require.NoError(t, err)
	assert.Len(t, written, 1)

	written, err = m.ApplyForTest(ctx, 5, invoice(at(time.Second), "older, fetched later", 1))
	require.NoError(t, err)
	assert.Empty(t, written, "an older version is not applied, even from a later fetch")
	assert.Equal(t, 1, count(`SELECT count(*) FROM invoices WHERE notes = 'newer'`))
	assert.Equal(t, 3, count(`SELECT count(*) FROM invoice_lines`), "its lines are not touched either")
}

func TestEqualUpdatedAtIsDecidedByFetchOrder(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	ctx := context.Background()
	same := at(time.Second) // two changes in the same second: the trap of whole-second timestamps
	_, err := m.ApplyForTest(ctx, 10, invoice(same, "first change", 1))
	require.NoError(t, err)
	written, err := m.ApplyForTest(ctx, 11, invoice(same, "second change", 2))
	require.NoError(t, err)
	assert.Len(t, written, 1, "a later fetch with an equal updated_at wins")
	assert.Equal(t, 1, count(`SELECT count(*) FROM invoices WHERE notes = 'second change'`))
	assert.Equal(t, 2, count(`SELECT count(*) FROM invoice_lines`))

	written, err = m.ApplyForTest(ctx, 10, invoice(same, "first change", 1))
	require.NoError(t, err)
	assert.Empty(t, written, "a late copy of the earlier fetch does not roll the row back")
	assert.Equal(t, 1, count(`SELECT count(*) FROM invoices WHERE notes = 'second change'`))
}

func TestARecordWithoutTimestampsIsDecidedByFetchOrder(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	ctx := context.Background()
	tc := func(name string) *invoicing.TaxCode {
		return &invoicing.TaxCode{ID: invoicingtest.SeedGSTTaxCodeID, Code: "GST", Name: name, Rate: decimal.NewFromInt(10)}
	}
	_, err := m.ApplyForTest(ctx, 7, tc("later"))
	require.NoError(t, err)
	written, err := m.ApplyForTest(ctx, 6, tc("earlier"))
	require.NoError(t, err)
	assert.Empty(t, written)
	assert.Equal(t, 1, count(`SELECT count(*) FROM tax_codes WHERE raw->>'name' = 'later' AND mirror_version = '-infinity'`))
}

// A fetch that finds the record unchanged writes nothing to its row (its
// fetch number and times stay those of the fetch that wrote the content)
// nor to its lines; it is recorded apart (mirror_confirmed), so an older
// fetch still in flight with other content cannot win: neither one older
// than the write, nor one between the write and the confirmation.
func TestAnUnchangedRecordIsNotWrittenYetCounts(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	ctx := context.Background()
	v := at(time.Second)
	_, err := m.ApplyForTest(ctx, 20, invoice(v, "current", 2))
	require.NoError(t, err)
	before := count(`SELECT (xmin::text)::int FROM invoices`)

	written, err := m.ApplyForTest(ctx, 30, invoice(v, "current", 2))
	require.NoError(t, err)
	assert.Empty(t, written, "nothing to correct")
	assert.Equal(t, 20, count(`SELECT mirror_fetch_seq FROM invoices`))
	assert.Equal(t, before, count(`SELECT (xmin::text)::int FROM invoices`), "the row is the same tuple")
	assert.Equal(t, 1, count(`SELECT count(DISTINCT xmin::text) FROM invoice_lines`), "the lines too")
	assert.Equal(t, before, count(`SELECT (min(xmin::text))::int FROM invoice_lines`))
	assert.Equal(t, 30, count(`SELECT seq FROM mirror_confirmed`))

	for _, seq := range []int64{15, 25} {
		written, err = m.ApplyForTest(ctx, seq, invoice(v, "stale", 1))
		require.NoError(t, err)
		assert.Empty(t, written, "fetch %d is older than fetch 30, which saw the current content", seq)
	}
	assert.Equal(t, 1, count(`SELECT count(*) FROM invoices WHERE notes = 'current'`))
	assert.Equal(t, 2, count(`SELECT count(*) FROM invoice_lines`))

	written, err = m.ApplyForTest(ctx, 31, invoice(v, "newer, same second", 1))
	require.NoError(t, err)
	assert.Len(t, written, 1, "a later fetch still wins")
}

// A page drift can list a record twice in one batch: the later copy wins
// and the batch does not fail.
func TestARecordTwiceInABatchIsWrittenOnce(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	written, err := m.ApplyForTest(context.Background(), 1, invoice(nil, "first copy", 1), invoice(nil, "second copy", 4))
	require.NoError(t, err)
	assert.Len(t, written, 1)
	assert.Equal(t, 1, count(`SELECT count(*) FROM invoices WHERE notes = 'second copy'`))
	assert.Equal(t, 4, count(`SELECT count(*) FROM invoice_lines`))
}
