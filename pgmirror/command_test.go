package pgmirror_test

import (
	"context"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// invoicing-mirror --once backfills with a progress line and exits 0; run
// again on a backfilled mirror it reconciles once. Its output holds none of
// the secrets it was given: the API key, the webhook secret, the database
// password (PostgreSQL's trust authentication accepts any).
func TestTheCommandBackfillsOnceAndPrintsNoSecret(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 2500, quotes: 200, clients: 20}, 21, 22)
	schema := newSchemaName()
	const dbPassword = "db-password-that-must-not-show"
	databaseURL := strings.Replace(server.URL, "postgres@", "postgres:"+dbPassword+"@", 1)
	secret := "whsec_that_must_not_show_" + strings.Repeat("0", 40)
	env := commandEnv(srv.URL, srv.FullKey, secret, databaseURL)
	once := func() string {
		out, code := runCommand(t, env, "--once", "--schema", schema)
		require.Zero(t, code, out)
		for _, s := range []string{srv.FullKey, secret, dbPassword} {
			assert.NotContains(t, out, s)
		}
		return out
	}

	out := once()
	assert.Regexp(t, `backfill: \d+ records, \d+/s; .*invoices 2500/2500`, out, "the last progress line")
	assert.Contains(t, out, `msg="invoicing-mirror: backfill complete"`)
	requireMirrorEqual(t, srv, schema)

	srv.AddClient(newContact("Added since"))
	out = once()
	assert.Contains(t, out, `msg="invoicing-mirror: already backfilled; reconciling once"`)
	assert.Contains(t, out, `msg="invoicing-mirror: reconciliation corrected rows" resource=clients rows=1`)
	requireMirrorEqual(t, srv, schema)
}

// invoicing-mirror doctor passes what a first run needs, and for each
// thing missing or wrong prints the check that failed and its fix, and
// exits 1: a refused key, no webhook secret, a listen address taken, a
// database it cannot reach; with many businesses, one whose values were
// sealed with a key the keyring lacks, and one whose key is refused. It
// prints no secret.
func TestDoctorPassesAFirstRunAndTellsEachFix(t *testing.T) {
	t.Parallel()
	srv := invoicingtest.NewTestServer(t)
	schema := newSchemaName()
	secret := strings.Repeat("5f", 32)
	env := commandEnv(srv.URL, srv.FullKey, secret, postgresOf(schema).URL)
	out, code := runCommand(t, env, "doctor", "--schema", schema, "--listen", "127.0.0.1:0")
	assert.Equal(t, 0, code, "%s", out)
	for _, s := range []string{"ok    the database (DATABASE_URL): reachable", "ok    the database is writable",
		"ok    schema " + schema + ": none yet", "ok    the API at " + srv.URL + " answers the API key",
		"ok    the webhook secret (INVOICING_WEBHOOK_SECRET): set", "ok    the clock: within", "every check passed"} {
		assert.Contains(t, out, s)
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { taken.Close() })
	bad := commandEnv(srv.URL, "sk_test_refused_key_that_must_not_show", "", "postgres://mirror:pw-that-must-not-show@127.0.0.1:1/mirror")
	out, code = runCommand(t, bad, "doctor", "--schema", schema, "--listen", taken.Addr().String(), "--timeout", "5s")
	assert.Equal(t, 1, code, "%s", out)
	for _, s := range []string{"FAIL  the database (DATABASE_URL):", "fix: start PostgreSQL",
		"FAIL  the webhook secret (INVOICING_WEBHOOK_SECRET): not set", "FAIL  the --listen address " + taken.Addr().String(),
		"fix: stop what listens there", "check(s) failed"} {
		assert.Contains(t, out, s)
	}
	assert.NotContains(t, out, "must-not-show")
	out, code = runCommand(t, append(bad[:len(bad)-1], "DATABASE_URL="+postgresOf(schema).URL), "doctor", "--schema", schema,
		"--listen", "127.0.0.1:0")
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, "FAIL  the API key (INVOICING_API_KEY):")
	assert.Contains(t, out, "fix: the service refuses the key")
	assert.NotContains(t, out, "must-not-show")

	// Many businesses: acme answers; globex's values were sealed with k0,
	// which the keyring no longer holds.
	k0, k1 := newKeyText(t, "k0"), newKeyText(t, "k1")
	db := adminPool(t, schema)
	for name, keys := range map[string]string{"acme": k1, "globex": k0} {
		require.NoError(t, pgmirror.MigrateSchema(t.Context(), db, schema, ""))
		require.NoError(t, pgmirror.NewBusinesses(db, schema, keyring(t, keys)).Add(t.Context(),
			pgmirror.BusinessConfig{Name: name, APIKey: srv.FullKey, WebhookSecrets: []string{secret}}))
	}
	multi := append(commandEnv(srv.URL, "", "", postgresOf(schema).URL), pgmirror.EnvKeys+"="+k1)
	out, code = runCommand(t, multi, "doctor", "--schema", schema, "--listen", "127.0.0.1:0")
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, "ok    business acme: its key and secrets open, and the API answers its key")
	assert.Contains(t, out, "FAIL  business globex:")
	assert.Contains(t, out, "fix: put the key it was sealed with in INVOICING_MIRROR_KEYS")
	assert.NotContains(t, out, strings.TrimPrefix(k1, "k1:"))
}

// schemaExists reports whether the package's PostgreSQL has schema.
func schemaExists(t testing.TB, schema string) bool {
	t.Helper()
	db := checkerPool(t, "public")
	return count(t, db, `SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1`, schema) == 1
}

// A wrong API key or base URL is found by the first request, before
// anything is created in the database: invoicing-mirror exits 1, in
// --once mode and in serve mode alike, says what to check, and leaves no
// schema behind.
func TestAWrongKeyOrBaseURLLeavesNoSchema(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	secret := strings.Repeat("5e", 32)
	for name, c := range map[string]struct {
		baseURL, key string
		want         string
	}{
		"a wrong key":      {srv.URL, "sk_test_wrong_key_that_must_not_show", "401"},
		"a wrong base URL": {strings.TrimSuffix(srv.URL, "/api/v1/external") + "/api/v2/external", srv.FullKey, "404"},
	} {
		for _, mode := range [][]string{{"--once"}, {"--listen", "127.0.0.1:0"}} {
			t.Run(name+" "+mode[0], func(t *testing.T) {
				schema := newSchemaName()
				start := time.Now()
				out, code := runCommand(t, commandEnv(c.baseURL, c.key, secret, server.URL), append(mode, "--schema", schema)...)
				assert.Equal(t, 1, code, "%s", out)
				assert.Less(t, time.Since(start), 10*time.Second, "no retrying a refusal")
				assert.Contains(t, out, "refused the mirror's first request (check the base URL and the API key)")
				assert.Contains(t, out, c.want)
				assert.NotContains(t, out, "sk_test_wrong_key_that_must_not_show")
				assert.NotContains(t, out, srv.FullKey)
				assert.Equal(t, 1, strings.Count(strings.TrimSpace(out), "level=ERROR"), "%s", out)
				assert.False(t, schemaExists(t, schema), "schema %s was created", schema)
			})
		}
	}
}

// --once does not wait for an API it cannot reach: it exits 1 at once,
// without creating the schema.
func TestOnceExitsWhenTheAPIIsUnreachable(t *testing.T) {
	t.Parallel()
	// A port that closes every connection at once, held for the test: a
	// port merely closed could be taken meanwhile by another test's server.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, as a port nobody listens on answers
			}
			conn.Close()
		}
	}()
	addr := ln.Addr().String()

	schema := newSchemaName()
	start := time.Now()
	out, code := runCommand(t, commandEnv("http://"+addr+"/api/v1/external", "sk_test_key", "", server.URL), "--once", "--schema", schema)
	took := time.Since(start)
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, `msg="invoicing-mirror: stopped" error="pgmirror: the API at http://`+addr+`/api/v1/external is unreachable: `)
	assert.False(t, schemaExists(t, schema))
	t.Logf("--once against an unreachable API exited %d after %v", code, took.Round(time.Millisecond))
}

// --once stops at its --timeout, exits 1 and says so; what it wrote is
// kept, and the next run goes on from there.
func TestOnceStopsAtItsTimeout(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 300, clients: 5}, 31, 32)
	// Every invoice list fails: the backfill retries until the deadline.
	srv.InjectFault(invoicingtest.Fault{Status: 503, Path: "/invoices", Count: 1_000_000})
	schema := newSchemaName()
	env := commandEnv(srv.URL, srv.FullKey, "", server.URL)

	start := time.Now()
	out, code := runCommand(t, env, "--once", "--timeout", "3s", "--schema", schema)
	took := time.Since(start)
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, `msg="invoicing-mirror: stopped" error="not done within --timeout 3s; what was written is kept, and the next run goes on from there"`)
	assert.Less(t, took, 10*time.Second, "it stops at the deadline, after the batch in progress")
	t.Logf("--once --timeout 3s against a failing API exited %d after %v", code, took.Round(time.Millisecond))

	srv.ClearFaults()
	out, code = runCommand(t, env, "--once", "--schema", schema)
	assert.Equal(t, 0, code, "%s", out)
	requireMirrorEqual(t, srv, schema)
}

// Serving, invoicing-mirror waits for a database that is not there yet,
// with one line, answering /healthz (and /readyz 503) meanwhile, and
// starts when it comes; --once exits 1 at once, on one line without the
// password.
func TestStartupWaitsForTheDatabase(t *testing.T) {
	t.Parallel()
	pg := newPostgres(t)
	require.NoError(t, pg.Kill())
	srv, _ := newFake(t)
	const password = "db-password-that-must-not-show"
	databaseURL := strings.Replace(pg.URL, "postgres@", "postgres:"+password+"@", 1)
	require.Contains(t, databaseURL, password)
	env := commandEnv(srv.URL, srv.FullKey, strings.Repeat("8b", 32), databaseURL)
	schema := newSchemaName()

	out, code := runCommand(t, env, "--once", "--schema", schema)
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, `msg="invoicing-mirror: stopped" error="pgmirror: `)
	assert.Contains(t, out, "connect: connection refused")
	assert.Equal(t, 2, strings.Count(strings.TrimSpace(out), "\n")+1, "starting, stopped: %s", out)
	assert.NotContains(t, out, password)
	t.Logf("--once without its database:\n%s", out)

	p := startServing(t, env, "--listen", "127.0.0.1:0", "--schema", schema)
	waitUntil(t, 10*time.Second, func() (bool, string) {
		return testkit.Count(p.since(time.Time{}), `msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does"`) == 1,
			"the line saying the database is away"
	})
	status, _, err := get(p.base + "/healthz")
	require.NoError(t, err)
	assert.Equal(t, 200, status)
	status, _, err = get(p.base + "/readyz")
	require.NoError(t, err)
	assert.Equal(t, 503, status)

	require.NoError(t, pg.Start())
	waitStatus(t, p.base+"/readyz", 200, time.Minute)
	lines := p.since(time.Time{})
	assert.Equal(t, 1, testkit.Count(lines, `msg="pgmirror: PostgreSQL is not answering`))
	assert.Equal(t, 1, testkit.Count(lines, `msg="pgmirror: PostgreSQL answers again"`))
	for _, l := range lines {
		assert.NotContains(t, l, password)
	}
	p.stop(t)
}

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
	schema := newSchemaName()
	pg := ownPostgres(t, schema) // killed and hung below, the other tests' left alone

	srv := invoicingtest.NewTestServer(t) // the wall clock: the process verifies deliveries with it
	secret := strings.Repeat("5e", 32)
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
		return testkit.Count(p.since(time.Time{}), `msg="pgmirror: backfill complete"`) == 1, `the line "backfill complete"`
	})
	waitUntil(t, 30*time.Second, func() (bool, string) {
		return testkit.Count(reconciling.since(time.Time{}), `msg="pgmirror: reconciliation done"`) >= 1, "a reconciliation"
	})
	waitUntil(t, 30*time.Second, func() (bool, string) {
		return testkit.Count(backfilling.since(time.Time{}), `msg="pgmirror: backfilled"`) >= 1, "a resource backfilled"
	})

	db := adminPool(t, schema)
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
	require.Zero(t, testkit.Count(backfilling.since(time.Time{}), `msg="pgmirror: backfill complete"`), "the backfill is under way")
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
			return answered >= 0 && testkit.Count(lines[answered:], o.done) > 0, "the " + name + " process going on after the outage"
		})
		answered := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `msg="pgmirror: PostgreSQL answers again"`) })
		away := lines[:answered+1] // from the kill to its line saying the database is back
		otherLines[name] = len(away)
		assert.LessOrEqual(t, len(away), 10, "%s: %s", name, strings.Join(away, "\n"))
		assert.Equal(t, 1, testkit.Count(away, `msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does"`), name)
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
	assert.Equal(t, 1, testkit.Count(outageLines, `msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does"`))
	assert.Equal(t, 1, testkit.Count(outageLines, `msg="pgmirror: PostgreSQL answers again"`))
	assert.Equal(t, 1, testkit.Count(hangLines, `msg="pgmirror: PostgreSQL is not answering; retrying with backoff until it does"`))
	assert.Equal(t, 1, testkit.Count(hangLines, `msg="pgmirror: PostgreSQL answers again"`))
	p.stop(t)
	backfilling.stop(t)
	reconciling.stop(t)
}
