package pginbox_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// answer sends d to h and returns the status and the Retry-After header.
func answer(t *testing.T, h http.Handler, d webhooktest.Delivery) (int, string) {
	t.Helper()
	r, err := d.Request("/webhooks")
	require.NoError(t, err)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Header().Get("Retry-After")
}

// logRecorder keeps the messages of the records logged to it.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Level.String()+" "+r.Message)
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) matching(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, m := range l.msgs {
		if strings.Contains(m, s) {
			out = append(out, m)
		}
	}
	return out
}

// With a Worker that is not running, the Handler stores MaxPending
// deliveries, then answers 503 with Retry-After; once a Worker runs and
// catches up, it stores deliveries again by itself. It logs once when it
// starts refusing and once when it accepts again, and counts the refusals.
func TestBackpressureRefusesWhileTheWorkerIsStalledAndRecovers(t *testing.T) {
	pool := newPool(t, newSchema(t), 4)
	m := pginbox.NewMetrics(pool)
	logs := &logRecorder{}
	h := pginbox.Handler(pool, webhooktest.NewVerifier(t), pginbox.WithMetrics(m), pginbox.WithLogger(slog.New(logs)),
		pginbox.WithBackpressure(pginbox.Backpressure{MaxPending: 20, CheckInterval: 10 * time.Millisecond}))

	// New deliveries, one at a time, until a check of the backlog finds
	// it full. Between checks the Handler counts what it lets through,
	// and counts twice the deliveries a check may have seen already: it
	// may refuse a little early until the next check, never let one more
	// through.
	var refused []webhooktest.Delivery
	sent := 0
	require.Eventually(t, func() bool {
		d := webhooktest.Deliveries(1)[0]
		sent++
		status, retryAfter := answer(t, h, d)
		if status != http.StatusOK {
			assert.Equal(t, http.StatusServiceUnavailable, status)
			assert.Equal(t, "60", retryAfter, "DefaultRetryAfter, in seconds")
			refused = append(refused, d)
		}
		assert.LessOrEqual(t, countRows(t, pool, pginbox.StatusPending), 20, "no more than MaxPending")
		return len(logs.matching("behind")) > 0
	}, 30*time.Second, time.Millisecond)
	assert.Equal(t, 20, countRows(t, pool, pginbox.StatusPending), "MaxPending stored")
	assert.Equal(t, sent-20, len(refused))
	assert.Equal(t, float64(len(refused)), outcomes(t, m)["throttled"])
	assert.Equal(t, []string{"WARN pginbox: the inbox is behind; answering 503 to new deliveries"}, logs.matching("behind"))
	for range 10 {
		d := webhooktest.Deliveries(1)[0]
		status, _ := answer(t, h, d)
		require.Equal(t, http.StatusServiceUnavailable, status, "while the Worker is stalled")
		refused = append(refused, d)
	}

	start(t, &pginbox.Worker{Pool: pool, Concurrency: 2, PollInterval: 10 * time.Millisecond,
		Process: func(context.Context, *webhooks.Delivery) error { return nil }})
	waitFor(t, pool, pginbox.StatusPending, 0)
	// Caught up: the service's retries are stored.
	for _, d := range refused {
		require.Eventually(t, func() bool { status, _ := answer(t, h, d); return status == http.StatusOK },
			30*time.Second, time.Millisecond, "delivery %s, after the Worker caught up", short(d.ID))
	}
	waitFor(t, pool, pginbox.StatusProcessed, 20+len(refused))
	assert.Contains(t, logs.matching("caught up"), "INFO pginbox: the inbox caught up; accepting deliveries again")
}

// The age limit: a delivery due for longer than MaxPendingAge (here one
// that has waited ten minutes for a Worker) closes the inbox until it is
// processed; one waiting out its backoff after a failure, however old,
// does not.
func TestBackpressureOnTheOldestDueDelivery(t *testing.T) {
	pool := newPool(t, newSchema(t), 4)
	ctx := context.Background()
	h := pginbox.Handler(pool, webhooktest.NewVerifier(t), pginbox.WithBackpressure(pginbox.Backpressure{
		MaxPending: -1, MaxPendingAge: time.Minute, RetryAfter: 1500 * time.Millisecond, CheckInterval: 10 * time.Millisecond}))
	insert := func(id string, received, due time.Duration) {
		_, err := pool.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body, received_at, next_attempt_at, failures)
			VALUES ($1, 'contact.created', now(), '{"contact_id":"x"}', now() - $2 * interval '1 millisecond', now() + $3 * interval '1 millisecond', 1)`,
			id, received.Milliseconds(), due.Milliseconds())
		require.NoError(t, err)
	}
	insert("backing-off", 2*time.Hour, time.Hour)
	deliveries := webhooktest.Deliveries(3)
	status, _ := answer(t, h, deliveries[0])
	require.Equal(t, http.StatusOK, status, "a delivery received two hours ago and due in an hour does not count")

	insert("late", 11*time.Minute, -10*time.Minute)
	require.Eventually(t, func() bool { status, _ := answer(t, h, deliveries[1]); return status == http.StatusServiceUnavailable },
		30*time.Second, time.Millisecond, "a delivery due ten minutes ago")
	_, retryAfter := answer(t, h, deliveries[1])
	assert.Equal(t, "2", retryAfter, "whole seconds, rounded up")

	start(t, &pginbox.Worker{Pool: pool, PollInterval: 10 * time.Millisecond, Process: func(context.Context, *webhooks.Delivery) error { return nil }})
	require.Eventually(t, func() bool { status, _ := answer(t, h, deliveries[1]); return status == http.StatusOK },
		30*time.Second, time.Millisecond, "once it is processed")
	assert.Equal(t, pginbox.StatusPending, readRow(t, pool, "backing-off").Status, "still waiting out its backoff")
}

// Checking the backlog costs a request no query: the Handler reads it
// once per CheckInterval, whatever the number of deliveries.
func TestBackpressureReadsTheBacklogOncePerInterval(t *testing.T) {
	schema := newSchema(t)
	checks := &backlogQueries{}
	pool := newTracedPool(t, schema, schema, 4, checks)
	h := pginbox.Handler(pool, webhooktest.NewVerifier(t), pginbox.WithBackpressure(pginbox.Backpressure{CheckInterval: time.Hour}))
	statuses := sendAll(t, h, webhooktest.Deliveries(200))
	for _, s := range statuses {
		require.Equal(t, http.StatusOK, s)
	}
	assert.Equal(t, int64(1), checks.n.Load(), "one check, before the first delivery")
}

// backlogQueries counts the Handler's queries of the backlog.
type backlogQueries struct{ n atomic.Int64 }

func (c *backlogQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.Contains(data.SQL, "count(*)") && strings.Contains(data.SQL, "status = 'pending'") {
		c.n.Add(1)
	}
	return ctx
}

func (c *backlogQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func TestBackpressureOptions(t *testing.T) {
	pool := newPool(t, newSchema(t), 2)
	v := webhooktest.NewVerifier(t)
	assert.Panics(t, func() {
		pginbox.Handler(pool, v, pginbox.WithBackpressure(pginbox.Backpressure{RetryAfter: -time.Second}))
	})
	assert.Panics(t, func() {
		pginbox.Handler(pool, v, pginbox.WithBackpressure(pginbox.Backpressure{CheckInterval: -time.Second}))
	})

	// Both limits off: no limit, whatever the backlog.
	off := pginbox.Handler(pool, v, pginbox.WithBackpressure(pginbox.Backpressure{MaxPending: -1, MaxPendingAge: -1}))
	limited := pginbox.BusinessHandler(pool, oneBusiness(t, "acme"), pginbox.WithBackpressure(pginbox.Backpressure{MaxPending: 3}))
	for _, d := range webhooktest.Deliveries(5) {
		require.Equal(t, http.StatusOK, d.Send(off))
	}
	mux := businessMux(limited)
	assert.Equal(t, http.StatusServiceUnavailable, sendTo(mux, "/webhooks/acme", acmeSecret, webhooktest.Deliveries(1)[0]),
		"BusinessHandler too: 5 due, at most 3")
}

// The flood: floodSize deliveries, floodSenders at a time over loopback
// HTTP, to a Handler limited to floodMaxPending due deliveries whose Worker
// is blocked in its callback. Then the Worker is released, and the sender
// retries each delivery answered 503, as a sender honouring Retry-After
// does: a round of retries for each Retry-After, the minute passing
// meanwhile standing for what the Worker gets done in it (the test waits
// until it has processed every delivery stored). The Handler checks the
// backlog every 10 ms, so that its figures are as fresh when the retries
// come as the default second's are against the default Retry-After of a
// minute. Nothing is lost: every delivery is stored exactly once and
// processed, and while the Worker was blocked the backlog never went over
// the limit.
const (
	floodSize       = 2000
	floodSenders    = 32
	floodMaxPending = 400
)

func TestBackpressureFloodLosesNothing(t *testing.T) {
	schema := newSchema(t)
	pool := newPool(t, schema, 8)
	m := pginbox.NewMetrics(pool)
	srv := httptest.NewServer(pginbox.Handler(pool, webhooktest.NewVerifier(t), pginbox.WithMetrics(m),
		pginbox.WithBackpressure(pginbox.Backpressure{MaxPending: floodMaxPending, CheckInterval: 10 * time.Millisecond})))
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: floodSenders}, Timeout: 30 * time.Second}
	t.Cleanup(client.CloseIdleConnections)

	blocked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	start(t, &pginbox.Worker{Pool: newPool(t, schema, 4), Concurrency: 4, PollInterval: 10 * time.Millisecond,
		Process: func(ctx context.Context, d *webhooks.Delivery) error {
			once.Do(func() { close(blocked) })
			<-release
			return nil
		}})
	var released sync.Once
	t.Cleanup(func() { released.Do(func() { close(release) }) })

	deliveries := webhooktest.Deliveries(floodSize)
	refused, err := flood(client, srv.URL, deliveries)
	require.NoError(t, err)
	<-blocked
	accepted := floodSize - len(refused)
	stored := countRows(t, pool, "")
	assert.Equal(t, accepted, stored, "every delivery answered 200 is stored")
	assert.LessOrEqual(t, stored, floodMaxPending, "never more than MaxPending due while the Worker is blocked")
	assert.GreaterOrEqual(t, stored, floodMaxPending-floodSenders, "and close to it")

	released.Do(func() { close(release) })
	rounds, refusals := 0, len(refused)
	for len(refused) > 0 {
		rounds++
		require.LessOrEqual(t, rounds, 20, "%d deliveries still refused", len(refused))
		waitFor(t, pool, pginbox.StatusPending, 0) // a Retry-After passes: the Worker works through the backlog
		refused, err = flood(client, srv.URL, refused)
		require.NoError(t, err)
		refusals += len(refused)
	}
	waitFor(t, pool, pginbox.StatusProcessed, floodSize)
	assert.Equal(t, floodSize, countRows(t, pool, ""), "every delivery stored once: none lost")
	assert.Equal(t, float64(refusals), outcomes(t, m)["throttled"])
	t.Logf("flood of %d deliveries, %d senders, MaxPending %d, the Worker blocked: %d accepted, %d refused (503); "+
		"then %d rounds of retries (one per Retry-After: the last deliveries stored at their retry %d) with %d more refusals; "+
		"%d stored once and processed, 0 lost",
		floodSize, floodSenders, floodMaxPending, accepted, floodSize-accepted, rounds, rounds, refusals-(floodSize-accepted), floodSize)
}

// flood sends deliveries to url, floodSenders at a time, and returns those
// answered 503 with a Retry-After header; any other answer but 200 is an
// error.
func flood(client *http.Client, url string, deliveries []webhooktest.Delivery) ([]webhooktest.Delivery, error) {
	var mu sync.Mutex
	var refused []webhooktest.Delivery
	var firstErr error
	next := make(chan webhooktest.Delivery)
	var wg sync.WaitGroup
	for range floodSenders {
		wg.Go(func() {
			for d := range next {
				status, retryAfter, err := post(client, url, d)
				if err == nil && status != http.StatusOK && (status != http.StatusServiceUnavailable || retryAfter == "") {
					err = fmt.Errorf("delivery %s answered %d", d.ID, status)
				}
				mu.Lock()
				switch {
				case err != nil && firstErr == nil:
					firstErr = err
				case status == http.StatusServiceUnavailable:
					refused = append(refused, d)
				}
				mu.Unlock()
			}
		})
	}
	for _, d := range deliveries {
		next <- d
	}
	close(next)
	wg.Wait()
	return refused, firstErr
}

// post sends d to url as the service does and returns the answer's
// status and Retry-After header.
func post(client *http.Client, url string, d webhooktest.Delivery) (int, string, error) {
	req, err := d.Request(url)
	if err != nil {
		return 0, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}
