package pgmirror_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testservers"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// outage and hang are how long PostgreSQL stays down, then hung, in the
// outage test: the 30 and 15 seconds, or 5 and 12 with -short (a
// hang must outlast the 10 seconds the fetchers wait for a claim).
func outage() time.Duration {
	if testing.Short() {
		return 5 * time.Second
	}
	return 30 * time.Second
}

func hang() time.Duration {
	if testing.Short() {
		return 12 * time.Second
	}
	return 15 * time.Second
}

// An idle replica (backfill complete, webhook endpoint served) whose
// PostgreSQL is killed for 30 seconds and started again, then hangs
// (SIGSTOP) for 15 seconds, logs a line when the database goes and one
// when it is back, whatever its Workers, fetchers and Handler meet
// meanwhile (the issue measured 1,254 lines over such an outage), and
// goes on: events reach the tables again. Meanwhile /healthz answers 200,
// /readyz stays 200 (the backfill stays complete) and a scrape of
// /metrics answers within its bound, saying the database is away.
//
// Two more processes, on schemas of their own, meet the same outage: one
// in the middle of its backfill (behind a slow service), one reconciling
// every second. Each logs the same two lines, and no warning or error
// until its backfill completes or its reconciliations go on.
func TestAnOutageOfPostgreSQLIsQuietAndBounded(t *testing.T) {
	t.Parallel()
	pg, err := testservers.StartPostgres()
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Close() })
	srv := invoicingtest.NewTestServer(t) // the wall clock: the process verifies deliveries with it
	secret := strings.Repeat("5e", 32)
	schema := newSchemaName()
	p := startServing(t, commandEnv(srv.URL, srv.FullKey, secret, pg.URL),
		"--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--schema", schema, "--coalesce", "20ms", "--log-level", "info")
	// A second of latency a request: the backfill (three requests a
	// resource) takes about 40 seconds, and is under way when PostgreSQL
	// is killed.
	slow := invoicingtest.NewTestServer(t, invoicingtest.WithLatency(time.Second, 0))
	backfilling := startServing(t, commandEnv(slow.URL, slow.FullKey, secret, pg.URL),
		"--listen", "127.0.0.1:0", "--schema", newSchemaName(), "--log-level", "info")
	reconciling := startServing(t, commandEnv(srv.URL, srv.FullKey, secret, pg.URL),
		"--listen", "127.0.0.1:0", "--schema", newSchemaName(), "--reconcile-interval", "1s", "--log-level", "info")
	srv.AddWebhookEndpointWithSecret(p.base+"/webhooks", secret)
	waitStatus(t, p.base+"/readyz", 200, time.Minute)
	waitUntil(t, 5*time.Second, func() (bool, string) { // /readyz may answer before the line is read
		return countContaining(p.since(time.Time{}), `msg="pgmirror: backfill complete"`) == 1, `the line "backfill complete"`
	})
	waitUntil(t, 30*time.Second, func() (bool, string) {
		return countContaining(reconciling.since(time.Time{}), `msg="pgmirror: reconciliation done"`) >= 1, "a reconciliation"
	})
	waitUntil(t, 30*time.Second, func() (bool, string) {
		return countContaining(backfilling.since(time.Time{}), `msg="pgmirror: backfilled"`) >= 1, "a resource backfilled"
	})

	cfg, err := pgxpool.ParseConfig(pg.URL)
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	db, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	c := srv.Client()
	mirrored := func(id string, timeout time.Duration) {
		t.Helper()
		waitUntil(t, timeout, func() (bool, string) {
			var n int
			err := db.QueryRow(context.Background(), `SELECT count(*) FROM invoices WHERE id = $1`, id).Scan(&n)
			return err == nil && n == 1, "invoice " + id + " in the mirror"
		})
	}
	mirrored(createInvoice(t, c, invoicing.InvoiceStatusAwaitingPayment, 1).ID, 10*time.Second)

	// Killed for 30 seconds, during which an event is refused.
	require.Zero(t, countContaining(backfilling.since(time.Time{}), `msg="pgmirror: backfill complete"`), "the backfill is under way")
	start := time.Now()
	require.NoError(t, pg.Kill())
	time.Sleep(outage() / 3)
	createInvoice(t, c, invoicing.InvoiceStatusAwaitingPayment, 1) // its delivery gets a 500; the service retries in a minute
	status, body, err := get(p.base + "/healthz")
	require.NoError(t, err)
	assert.Equal(t, 200, status, body)
	status, _, err = get(p.base + "/readyz")
	require.NoError(t, err)
	assert.Equal(t, 200, status)
	scrapeStart := time.Now()
	status, metrics, err := get(p.metrics + "/metrics")
	require.NoError(t, err)
	assert.Equal(t, 200, status)
	assert.Less(t, time.Since(scrapeStart), 5*time.Second)
	assert.Contains(t, metrics, `invoicing_mirror_dependency_up{dependency="postgresql"} 0`)
	time.Sleep(time.Until(start.Add(outage())))
	during := p.since(start)
	require.NoError(t, pg.Start())
	back := time.Now()
	mirrored(createInvoice(t, c, invoicing.InvoiceStatusAwaitingPayment, 1).ID, 45*time.Second) // at most a backoff's wait
	recovered := time.Since(back)
	outageLines := p.since(start)
	slow.SetLatency(0, 0)
	others := map[string]struct {
		p    *served
		done string // the line that says it went on
	}{
		"backfilling": {backfilling, `msg="pgmirror: backfill complete"`},
		"reconciling": {reconciling, `msg="pgmirror: reconciliation done"`},
	}
	otherLines := map[string]int{}
	for name, o := range others {
		var lines []string
		waitUntil(t, 45*time.Second, func() (bool, string) {
			lines = o.p.since(start)
			answered := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `msg="pgmirror: PostgreSQL answers again"`) })
			return answered >= 0 && countContaining(lines[answered:], o.done) > 0, "the " + name + " process going on after the outage"
		})
		answered := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `msg="pgmirror: PostgreSQL answers again"`) })
		away := lines[:answered+1] // from the kill to its line saying the database is back
		otherLines[name] = len(away)
		assert.LessOrEqual(t, len(away), 10, "%s: %s", name, strings.Join(away, "\n"))
		assert.Equal(t, 1, countContaining(away, `msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does"`), name)
		for _, l := range lines { // until it went on: only the database's own warning
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				assert.Contains(t, l, `msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does"`, name)
			}
		}
	}

	// Hung for 15 seconds (12 with -short): the fetchers give up waiting
	// after 10.
	start = time.Now()
	require.NoError(t, pg.Pause())
	scrapeStart = time.Now()
	status, _, err = get(p.metrics + "/metrics")
	require.NoError(t, err)
	assert.Equal(t, 200, status)
	assert.Less(t, time.Since(scrapeStart), 5*time.Second, "the scrape's queries are bounded")
	time.Sleep(time.Until(start.Add(hang())))
	require.NoError(t, pg.Resume())
	mirrored(createInvoice(t, c, invoicing.InvoiceStatusAwaitingPayment, 1).ID, 45*time.Second)
	hangLines := p.since(start)

	t.Logf("log lines: %d during the %v outage, %d until the mirror was current again (an event %v after PostgreSQL was started); %d over the %v hang and its recovery; "+
		"%d from a backfilling process and %d from one reconciling every second, from the kill to their line saying PostgreSQL is back",
		len(during), outage(), len(outageLines), recovered.Round(time.Millisecond), len(hangLines), hang(), otherLines["backfilling"], otherLines["reconciling"])
	if path := os.Getenv("PGMIRROR_OUTAGE_LOG"); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(outageLines, "\n")+"\n--- hang\n"+strings.Join(hangLines, "\n")+"\n"), 0o644))
	}
	assert.LessOrEqual(t, len(outageLines), 10, "%s", strings.Join(outageLines, "\n"))
	assert.LessOrEqual(t, len(hangLines), 10, "%s", strings.Join(hangLines, "\n"))
	for _, l := range outageLines {
		assert.NotContains(t, l, "\\n", "one line per error")
	}
	assert.Equal(t, 1, countContaining(outageLines, `msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does"`))
	assert.Equal(t, 1, countContaining(outageLines, `msg="pgmirror: PostgreSQL answers again"`))
	assert.Equal(t, 1, countContaining(hangLines, `msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does"`))
	assert.Equal(t, 1, countContaining(hangLines, `msg="pgmirror: PostgreSQL answers again"`))
	p.stop(t)
	backfilling.stop(t)
	reconciling.stop(t)
}

// countContaining counts the lines that contain s.
func countContaining(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}
