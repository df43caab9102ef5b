package pginbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// inboxFixture is an inbox holding deliveries of Handler ("") and of two
// businesses, some processed and some parked as failed by a Worker, and
// the callback's verdicts, which a test changes to mend a failure.
type inboxFixture struct {
	pool  *pgxpool.Pool
	inbox *pginbox.Inbox
	// sent are the deliveries in the order they were stored, with their
	// business.
	sent []sentDelivery

	mu      sync.Mutex
	failing map[string]bool // ids whose callback fails
}

type sentDelivery struct {
	business string
	webhooktest.Delivery
}

// newInboxFixture stores 3 deliveries through Handler, 3 for acme and 2
// for globex through BusinessHandler (the last globex one with the id of
// acme's first), and has a Worker process them: the callback fails, for
// good (MaxAttempts 2), for acme's second and third and for Handler's
// first.
func newInboxFixture(t *testing.T) *inboxFixture {
	f := &inboxFixture{pool: newPool(t, newSchema(t), 4), failing: map[string]bool{}}
	f.inbox = pginbox.NewInbox(f.pool)
	mux := businessMux(pginbox.BusinessHandler(f.pool, twoBusinesses(t)))
	plain := pginbox.Handler(f.pool, webhooktest.NewVerifier(t))
	ds := webhooktest.Deliveries(7)
	for i, d := range ds[:3] {
		require.Equal(t, http.StatusOK, d.Send(plain))
		f.sent = append(f.sent, sentDelivery{"", d})
		if i == 0 {
			f.failing[d.ID] = true
		}
	}
	for i, d := range ds[3:6] {
		require.Equal(t, http.StatusOK, sendTo(mux, "/webhooks/acme", acmeSecret, d))
		f.sent = append(f.sent, sentDelivery{"acme", d})
		if i > 0 {
			f.failing["acme/"+d.ID] = true
		}
	}
	for _, d := range []webhooktest.Delivery{ds[6], ds[3]} {
		require.Equal(t, http.StatusOK, sendTo(mux, "/webhooks/globex", globexSecret, d))
		f.sent = append(f.sent, sentDelivery{"globex", d})
	}
	start(t, &pginbox.Worker{Pool: f.pool, PollInterval: 5 * time.Millisecond, MaxAttempts: 2,
		Backoff: func(int) time.Duration { return time.Millisecond },
		Process: func(_ context.Context, d *webhooks.Delivery) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.failing[d.ID] && d.Business == "" || f.failing[d.Business+"/"+d.ID] {
				return errors.New("boom: " + d.Business + "/" + d.ID + "\nsecond line")
			}
			return nil
		}})
	waitFor(t, f.pool, pginbox.StatusFailed, 3)
	waitFor(t, f.pool, pginbox.StatusProcessed, 5)
	return f
}

// mend makes the callback succeed for every delivery.
func (f *inboxFixture) mend() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.failing)
}

// keys returns "business/id" of each delivery.
func keys(list []pginbox.StoredDelivery) []string {
	var out []string
	for _, d := range list {
		out = append(out, d.Business+"/"+d.ID)
	}
	return out
}

// newest returns "business/id" of the sent deliveries that keep says to,
// newest first.
func (f *inboxFixture) newest(keep func(sentDelivery) bool) []string {
	var out []string
	for _, d := range slices.Backward(f.sent) {
		if keep(d) {
			out = append(out, d.business+"/"+d.ID)
		}
	}
	return out
}

func TestInboxListsDeliveriesWithTheirAttemptsNewestFirst(t *testing.T) {
	f := newInboxFixture(t)
	ctx := context.Background()
	all := func(sentDelivery) bool { return true }

	page, err := f.inbox.ListPage(ctx, pginbox.ListParams{})
	require.NoError(t, err)
	assert.Equal(t, f.newest(all), keys(page.Deliveries))
	assert.Empty(t, page.Next, "one page holds them all")
	for i, d := range page.Deliveries {
		assert.Nil(t, d.Body, "a listing leaves the bodies out")
		assert.Equal(t, webhooks.EventContactCreated, d.EventType)
		assert.Equal(t, time.UTC, d.ReceivedAt.Location())
		if i > 0 {
			assert.False(t, d.ReceivedAt.After(page.Deliveries[i-1].ReceivedAt), "newest first")
		}
		switch d.Status {
		case pginbox.StatusFailed:
			assert.Equal(t, 2, d.Attempts)
			assert.Equal(t, 2, d.Failures)
			assert.Equal(t, "boom: "+d.Business+"/"+d.ID+"\nsecond line", d.LastError)
			assert.Nil(t, d.ProcessedAt)
			assert.False(t, d.NextAttemptAt.Before(d.ReceivedAt), "when it was parked")
		case pginbox.StatusProcessed:
			assert.Equal(t, 1, d.Attempts)
			assert.Zero(t, d.Failures)
			assert.Empty(t, d.LastError)
			require.NotNil(t, d.ProcessedAt)
			assert.False(t, d.ProcessedAt.Before(d.ReceivedAt))
		default:
			t.Errorf("delivery %s/%s: status %s", d.Business, d.ID, d.Status)
		}
	}

	failed, err := f.inbox.ListPage(ctx, pginbox.ListParams{Status: pginbox.StatusFailed})
	require.NoError(t, err)
	assert.Equal(t, f.newest(func(d sentDelivery) bool {
		return f.failing[d.ID] && d.business == "" || f.failing[d.business+"/"+d.ID]
	}), keys(failed.Deliveries))

	acme := "acme"
	ofAcme, err := f.inbox.ListPage(ctx, pginbox.ListParams{Filter: pginbox.Filter{Business: &acme}})
	require.NoError(t, err)
	assert.Equal(t, f.newest(func(d sentDelivery) bool { return d.business == "acme" }), keys(ofAcme.Deliveries))
	ofHandler, err := f.inbox.ListPage(ctx, pginbox.ListParams{Filter: pginbox.Filter{Business: new("")}, Status: pginbox.StatusFailed})
	require.NoError(t, err)
	assert.Equal(t, []string{"/" + f.sent[0].ID}, keys(ofHandler.Deliveries), "a pointer to \"\": Handler's deliveries")

	since := page.Deliveries[3].ReceivedAt // the fourth newest, and those after it
	recent, err := f.inbox.ListPage(ctx, pginbox.ListParams{Filter: pginbox.Filter{Since: since}})
	require.NoError(t, err)
	assert.Equal(t, f.newest(all)[:4], keys(recent.Deliveries))
	none, err := f.inbox.ListPage(ctx, pginbox.ListParams{Filter: pginbox.Filter{Since: time.Now().Add(time.Hour)}})
	require.NoError(t, err)
	assert.Empty(t, none.Deliveries)
	assert.NotNil(t, none.Deliveries, "an empty page is a list, [] in JSON")
}

// Pages of Limit deliveries, each starting after the last of the page
// before, make the whole list, whatever the filter; List reads them a page
// at a time and stops when the loop does.
func TestInboxPagesThroughTheList(t *testing.T) {
	f := newInboxFixture(t)
	ctx := context.Background()
	acme := "acme"
	for name, p := range map[string]pginbox.ListParams{
		"all":          {},
		"acme":         {Filter: pginbox.Filter{Business: &acme}},
		"failed":       {Status: pginbox.StatusFailed},
		"acme, failed": {Filter: pginbox.Filter{Business: &acme}, Status: pginbox.StatusFailed},
	} {
		t.Run(name, func(t *testing.T) {
			whole, err := f.inbox.ListPage(ctx, p)
			require.NoError(t, err)
			require.NotEmpty(t, whole.Deliveries)
			for _, limit := range []int{1, 2, 3} {
				p := p
				p.Limit = limit
				var got []string
				pages := 0
				for {
					page, err := f.inbox.ListPage(ctx, p)
					require.NoError(t, err)
					assert.LessOrEqual(t, len(page.Deliveries), limit)
					got = append(got, keys(page.Deliveries)...)
					if pages++; page.Next == "" {
						break
					}
					p.After = page.Next
				}
				assert.Equal(t, keys(whole.Deliveries), got, "pages of %d", limit)
				assert.Equal(t, (len(whole.Deliveries)+limit-1)/limit, pages, "pages of %d", limit)

				p.After = ""
				var listed []string
				for d, err := range f.inbox.List(ctx, p) {
					require.NoError(t, err)
					listed = append(listed, d.Business+"/"+d.ID)
				}
				assert.Equal(t, got, listed, "List, pages of %d", limit)
			}
		})
	}

	n := 0
	for _, err := range f.inbox.List(ctx, pginbox.ListParams{Limit: 1}) {
		require.NoError(t, err)
		if n++; n == 2 {
			break
		}
	}
	assert.Equal(t, 2, n, "List stops when the loop does")
}

func TestInboxRefusesBadListParams(t *testing.T) {
	inbox := pginbox.NewInbox(newPool(t, newSchema(t), 1))
	ctx := context.Background()
	for name, p := range map[string]pginbox.ListParams{
		"a limit over the maximum": {Limit: pginbox.MaxListLimit + 1},
		"a negative limit":         {Limit: -1},
		"an unknown status":        {Status: "done'; DROP TABLE x; --"},
		"a cursor of nothing":      {After: "not a cursor"},
		"a cursor of another kind": {After: "WyJhIl0"}, // ["a"]
	} {
		_, err := inbox.ListPage(ctx, p)
		assert.ErrorIs(t, err, pginbox.ErrInvalidParams, name)
		for _, err := range inbox.List(ctx, p) {
			assert.ErrorIs(t, err, pginbox.ErrInvalidParams, name)
		}
	}
	assert.Panics(t, func() { pginbox.NewInbox(nil) })

	_, err := pginbox.NewInbox(newPool(t, emptySchema(t), 1)).ListPage(ctx, pginbox.ListParams{})
	assert.ErrorContains(t, err, "pginbox: reading deliveries:", "no inbox table")
}

func TestInboxShowsADeliveryWithItsBody(t *testing.T) {
	f := newInboxFixture(t)
	ctx := context.Background()
	shared := f.sent[3] // acme's first, whose id globex has too

	d, err := f.inbox.Get(ctx, "acme", shared.ID)
	require.NoError(t, err)
	assert.Equal(t, "acme", d.Business)
	assert.Equal(t, shared.ID, d.ID)
	assert.JSONEq(t, string(shared.Body), string(d.Body))
	assert.Equal(t, pginbox.StatusProcessed, d.Status)

	d, err = f.inbox.Get(ctx, "", f.sent[0].ID)
	require.NoError(t, err)
	assert.Equal(t, pginbox.StatusFailed, d.Status)
	assert.Contains(t, d.LastError, "boom")

	_, err = f.inbox.Get(ctx, "globex", f.sent[0].ID)
	assert.ErrorIs(t, err, pginbox.ErrNotFound, "Handler's delivery is not globex's")

	found, err := f.inbox.Find(ctx, shared.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"acme/" + shared.ID, "globex/" + shared.ID}, keys(found), "in every business, by business")
	for _, d := range found {
		assert.JSONEq(t, string(shared.Body), string(d.Body))
	}
	found, err = f.inbox.Find(ctx, f.sent[0].ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"/" + f.sent[0].ID}, keys(found), "Handler's business too")
	found, err = f.inbox.Find(ctx, "no such id")
	require.NoError(t, err)
	assert.Empty(t, found)

	out, err := json.Marshal(d)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"body":{"contact_id":`, "the body is JSON in JSON")
	assert.Contains(t, string(out), `"processed_at":null`)
}

// A requeued delivery is processed again by the running Workers; it keeps
// its history. A delivery being processed is left alone, an unknown one
// reported.
func TestInboxRequeuesDeliveries(t *testing.T) {
	f := newInboxFixture(t)
	ctx := context.Background()
	handlers, acmes := f.sent[0], f.sent[4] // failed, both
	processed := f.sent[5+1]                // globex's first

	res, err := f.inbox.Requeue(ctx, "acme", acmes.ID, "no such id", acmes.ID)
	require.NoError(t, err)
	assert.Equal(t, &pginbox.Requeued{Requeued: []string{acmes.ID}, NotFound: []string{"no such id"}}, res, "each id once")
	require.Eventually(t, func() bool {
		d, err := f.inbox.Get(ctx, "acme", acmes.ID)
		return err == nil && d.Status == pginbox.StatusFailed && d.Attempts == 3
	}, 30*time.Second, 5*time.Millisecond, "a cause not mended: one run, parked again")

	f.mend()
	res, err = f.inbox.Requeue(ctx, "", handlers.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{handlers.ID}, res.Requeued)
	before, err := f.inbox.Get(ctx, "globex", processed.ID)
	require.NoError(t, err)
	res, err = f.inbox.Requeue(ctx, "globex", processed.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{processed.ID}, res.Requeued, "a processed delivery too")
	require.Eventually(t, func() bool {
		a, errA := f.inbox.Get(ctx, "", handlers.ID)
		b, errB := f.inbox.Get(ctx, "globex", processed.ID)
		return errA == nil && errB == nil && a.Status == pginbox.StatusProcessed && b.Status == pginbox.StatusProcessed && b.Attempts == 2
	}, 30*time.Second, 5*time.Millisecond)
	again, err := f.inbox.Get(ctx, "globex", processed.ID)
	require.NoError(t, err)
	require.NotNil(t, again.ProcessedAt)
	assert.True(t, again.ProcessedAt.After(*before.ProcessedAt), "processed again")
	d, err := f.inbox.Get(ctx, "", handlers.ID)
	require.NoError(t, err)
	assert.Equal(t, 3, d.Attempts)
	assert.Equal(t, 2, d.Failures)
	assert.Contains(t, d.LastError, "boom", "the last failure is kept")

	// A delivery a Worker holds (here, a transaction of the test's).
	tx, err := f.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, `SELECT 1 FROM invoicing_webhook_inbox WHERE business = 'acme' AND delivery_id = $1 FOR UPDATE`, acmes.ID)
	require.NoError(t, err)
	res, err = f.inbox.Requeue(ctx, "acme", acmes.ID)
	require.NoError(t, err)
	assert.Equal(t, &pginbox.Requeued{InProgress: []string{acmes.ID}}, res)

	res, err = f.inbox.Requeue(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, &pginbox.Requeued{}, res, "no id, nothing to do")
}

// RequeueFailed requeues the failed deliveries a filter selects, in
// batches, each once.
func TestInboxRequeuesTheFailedDeliveries(t *testing.T) {
	f := newInboxFixture(t)
	ctx := context.Background()
	acme := "acme"

	n, err := f.inbox.RequeueFailed(ctx, pginbox.Filter{Business: &acme, Since: f.receivedAt(t, f.sent[5])})
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "acme's third only: its second was received before")
	waitFor(t, f.pool, pginbox.StatusFailed, 3) // run again, failed again

	f.mend()
	n, err = f.inbox.RequeueFailed(ctx, pginbox.Filter{Business: &acme})
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	waitFor(t, f.pool, pginbox.StatusFailed, 1) // Handler's is left
	n, err = f.inbox.RequeueFailed(ctx, pginbox.Filter{})
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	waitFor(t, f.pool, pginbox.StatusProcessed, len(f.sent))
	n, err = f.inbox.RequeueFailed(ctx, pginbox.Filter{})
	require.NoError(t, err)
	assert.Zero(t, n, "none left")
}

// More failed deliveries than one statement requeues: each is requeued
// once, and the count is right.
func TestInboxRequeuesFailedDeliveriesInBatches(t *testing.T) {
	pool := newPool(t, newSchema(t), 2)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (business, delivery_id, event_type, signed_at, body, status, attempts, failures, last_error, received_at)
		SELECT 'b' || (i % 3), 'd' || i, 'contact.created', now(), '{}', CASE WHEN i % 10 = 0 THEN 'processed' ELSE 'failed' END, 10, 10, 'no',
		       now() - (i % 7) * interval '1 second'
		FROM generate_series(1, 2600) AS i`)
	require.NoError(t, err)
	n, err := pginbox.NewInbox(pool).RequeueFailed(ctx, pginbox.Filter{})
	require.NoError(t, err)
	assert.Equal(t, int64(2340), n)
	assert.Equal(t, 2340, countRows(t, pool, pginbox.StatusPending))
	assert.Zero(t, countRows(t, pool, pginbox.StatusFailed))
}

// receivedAt reads when d was stored.
func (f *inboxFixture) receivedAt(t *testing.T, d sentDelivery) time.Time {
	got, err := f.inbox.Get(context.Background(), d.business, d.ID)
	require.NoError(t, err)
	return got.ReceivedAt
}

// Every statement of the Inbox reads through an index, and a listing reads
// only its page from it, never sorting the table's rows: on a table of
// 60,000 deliveries of 40 businesses, its plans hold no sequential scan
// and a listing's no sort, but that of the pending deliveries, which
// PostgreSQL may read whole through their own partial index when they are
// few (the backlog, which WithBackpressure bounds) and sort.
func TestInboxStatementsUseIndexes(t *testing.T) {
	schema := newSchema(t)
	ctx := context.Background()
	statements := &recorder{}
	pool := newTracedPool(t, schema, schema, 2, statements)
	_, err := pool.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (business, delivery_id, event_type, signed_at, body, status, received_at, next_attempt_at)
		SELECT 'b' || (i % 40), md5(i::text), 'contact.created', now(), '{}',
		       CASE WHEN i % 100 = 0 THEN 'failed' WHEN i % 100 = 1 THEN 'pending' ELSE 'processed' END,
		       now() - i * interval '1 second', now() - i * interval '1 second'
		FROM generate_series(1, 60000) AS i`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `ANALYZE invoicing_webhook_inbox`)
	require.NoError(t, err)

	inbox := pginbox.NewInbox(pool)
	b := "b20" // failed: every 200th delivery from the 100th
	since := time.Now().Add(-10 * time.Hour)
	statements.start()
	for _, p := range []pginbox.ListParams{
		{}, {Status: pginbox.StatusFailed}, {Status: pginbox.StatusPending}, {Filter: pginbox.Filter{Business: &b}},
		{Filter: pginbox.Filter{Business: &b, Since: since}, Status: pginbox.StatusFailed}, {Filter: pginbox.Filter{Since: since}},
	} {
		p.Limit = 50
		page, err := inbox.ListPage(ctx, p)
		require.NoError(t, err)
		require.NotEmpty(t, page.Next)
		p.After = page.Next
		_, err = inbox.ListPage(ctx, p)
		require.NoError(t, err)
	}
	lists := statements.len()
	_, err = inbox.Get(ctx, "b7", md5hex(t, pool, 7))
	require.NoError(t, err)
	found, err := inbox.Find(ctx, md5hex(t, pool, 7))
	require.NoError(t, err)
	require.Len(t, found, 1)
	_, err = inbox.Requeue(ctx, "b20", md5hex(t, pool, 100))
	require.NoError(t, err)
	_, err = inbox.RequeueFailed(ctx, pginbox.Filter{Business: &b, Since: since})
	require.NoError(t, err)
	_, err = inbox.RequeueFailed(ctx, pginbox.Filter{Since: time.Now().Add(-10 * time.Minute)})
	require.NoError(t, err)

	for i, s := range statements.all() {
		rows, err := pool.Query(ctx, "EXPLAIN (FORMAT JSON) "+s.sql, s.args...)
		require.NoError(t, err)
		plans, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		plan := strings.Join(plans, "")
		assert.NotContains(t, plan, `"Seq Scan"`, "%s\n%s", s.sql, plan)
		assert.Contains(t, plan, "Index", "%s\n%s", s.sql, plan)
		switch {
		case i >= lists:
		case strings.Contains(s.sql, "status = 'pending'"): // read through their own index, and sorted
			assert.Contains(t, plan, "invoicing_webhook_inbox_pending", "%s\n%s", s.sql, plan)
		default:
			assert.NotContains(t, plan, `"Sort"`, "%s\n%s", s.sql, plan)
		}
	}
}

// md5hex returns md5(i), the id TestInboxStatementsUseIndexes gives the
// delivery i.
func md5hex(t *testing.T, pool *pgxpool.Pool, i int) string {
	var s string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT md5($1::int::text)`, i).Scan(&s))
	return s
}

// recorder is a pgx.QueryTracer that records the statements run after
// start.
type recorder struct {
	mu    sync.Mutex
	on    bool
	stmts []statement
}

type statement struct {
	sql  string
	args []any
}

func (r *recorder) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = true
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.stmts)
}

func (r *recorder) all() []statement {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false // the EXPLAINs are not the Inbox's
	return slices.Clone(r.stmts)
}

func (r *recorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on && !strings.HasPrefix(data.SQL, "EXPLAIN") && !strings.Contains(data.SQL, "md5($1") {
		r.stmts = append(r.stmts, statement{data.SQL, data.Args})
	}
	return ctx
}

func (r *recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
