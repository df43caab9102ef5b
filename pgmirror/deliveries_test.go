package pgmirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

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
	schema := newSchemaName()
	m := openMirror(t, testConfig(sdkClient(srv), schema))
	db := adminPool(t, schema)
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
	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv), schema)
	cfg.InboxMaxPending = 5
	m := openMirror(t, cfg)
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
	db := adminPool(t, schema)
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
