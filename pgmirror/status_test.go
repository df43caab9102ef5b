package pgmirror_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// ReadStatus tells each resource's phase and rows, the pending work and the
// event lag of the records events named, from the tables alone.
func TestReadStatusTellsPhasesRowsAndLag(t *testing.T) {
	t.Parallel()
	srv, clock := newFake(t)
	schema := newSchemaName()
	db := adminPool(t, schema)

	_, err := pgmirror.ReadStatus(context.Background(), db, schema)
	assert.ErrorIs(t, err, pgmirror.ErrNotMigrated, "no schema yet")

	m := openMirror(t, testConfig(sdkClient(srv), schema))
	st, err := pgmirror.ReadStatus(context.Background(), db, schema)
	require.NoError(t, err)
	require.Len(t, st.Resources, len(pgmirror.Resources()))
	for _, r := range st.Resources {
		assert.Equal(t, pgmirror.PhaseBackfilling, r.Phase, r.Name)
	}
	assert.NotEmpty(t, st.Problems(time.Minute, time.Hour))

	hookUp(t, srv, clock, m)
	run(t, m)
	waitBackfilled(t, db, 30*time.Second)
	c := srv.Client()
	for range 3 {
		createInvoice(t, c, invoicing.InvoiceStatusAwaitingPayment, 1)
	}
	waitDrained(t, db, 30*time.Second)
	var rows int64
	require.NoError(t, db.QueryRow(context.Background(), `SELECT count(*) FROM invoices`).Scan(&rows))

	st, err = pgmirror.ReadStatus(context.Background(), db, schema)
	require.NoError(t, err)
	inv := st.Resources[0]
	for _, r := range st.Resources {
		if r.Name == pgmirror.Invoices {
			inv = r
		}
		assert.Equal(t, pgmirror.PhaseBackfilled, r.Phase, r.Name)
		assert.False(t, r.BackfillCompleted.IsZero(), r.Name)
	}
	assert.Equal(t, rows, inv.Rows)
	assert.GreaterOrEqual(t, inv.Lagged, int64(3), "each invoice's event; the payments' too")
	assert.Greater(t, inv.LagP99, 20*time.Millisecond, "at least the coalescing window")
	assert.Less(t, inv.LagP99, 10*time.Second)
	assert.Equal(t, inv.Lagged, st.Lagged)
	assert.Zero(t, st.InboxPending)
	assert.Empty(t, st.Problems(time.Minute, time.Hour))
}

// invoicing-mirror status exits 0 for a healthy mirror, 1 for a degraded
// one with each reason, and 2 when it cannot tell: no mirror in the
// schema, or a database it cannot reach (whose password it never prints).
func TestTheStatusCommandIsAHealthProbe(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 40, clients: 5}, 51, 52)
	schema := newSchemaName()
	env := commandEnv(srv.URL, srv.FullKey, "", server.URL)
	status := func(args ...string) (string, int) {
		t.Helper()
		return runCommand(t, env, append([]string{"status", "--schema", schema}, args...)...)
	}

	out, code := status()
	assert.Equal(t, 2, code, "%s", out)
	assert.Contains(t, out, "has no mirror_migrations table")

	out, code = runCommand(t, env, "--once", "--schema", schema)
	require.Equal(t, 0, code, "%s", out)
	out, code = status()
	assert.Equal(t, 0, code, "%s", out)
	assert.Regexp(t, regexp.MustCompile(`(?m)^invoices +backfilled +40 +0 +20\d\d-`), out)
	assert.Contains(t, out, "\nreconciliation: none yet; the first is due a --reconcile-interval after 20")
	assert.Regexp(t, regexp.MustCompile(`(?m)^default +ready +70 +10/10, 70/70 records +none; due an interval after 20`), out)
	assert.Contains(t, out, "\nhealthy\n")
	out, code = status("--json", "--business", "default")
	require.Equal(t, 0, code, "%s", out)
	var js struct {
		Healthy    bool
		Businesses []struct {
			Name, Phase string
			Rows        int64
			ReadyAt     *time.Time `json:"ready_at"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &js), out)
	assert.True(t, js.Healthy)
	require.Len(t, js.Businesses, 1)
	assert.Equal(t, "ready", js.Businesses[0].Phase)
	assert.Equal(t, int64(70), js.Businesses[0].Rows)
	assert.NotNil(t, js.Businesses[0].ReadyAt)
	out, code = status("--business", "nobody")
	assert.Equal(t, 2, code, "%s", out)
	assert.Contains(t, out, `the mirror holds no business "nobody"`)

	db := adminPool(t, schema)
	_, err := db.Exec(context.Background(), `INSERT INTO mirror_pending_fetch (business, resource, id, due_at, requested_at)
		VALUES ('default', 'quotes', 'a-quote', now() + interval '1 hour', now() - interval '10 minutes')`)
	require.NoError(t, err)
	_, err = db.Exec(context.Background(), `UPDATE mirror_backfill SET completed_at = NULL WHERE resource = 'bills'`)
	require.NoError(t, err)
	out, code = status()
	assert.Equal(t, 1, code, "%s", out)
	assert.Regexp(t, regexp.MustCompile(`(?m)^bills +backfilling `), out)
	assert.Contains(t, out, "degraded:\n  - the backfill is not complete: bills\n  - 1 quotes wait to be fetched, the oldest for 10m0s (more than 5m0s)\n")
	out, code = status("--max-lag", "1h")
	assert.Equal(t, 1, code, "%s", out)
	assert.NotContains(t, out, "wait to be fetched")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	const password = "db-password-that-must-not-show"
	for i, v := range env {
		if strings.HasPrefix(v, "DATABASE_URL=") {
			env[i] = "DATABASE_URL=postgres://mirror:" + password + "@" + addr + "/mirror"
		}
	}
	out, code = status("--timeout", "3s")
	assert.Equal(t, 2, code, "%s", out)
	assert.Contains(t, out, "invoicing-mirror status: ")
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(out), "\n")+1, "one line: %s", out)
	assert.NotContains(t, out, password)
}

// Each business has its line, the same in SQL (the view mirror_status) and
// in ReadBusinessStatus: a ready one, one paused with its reason. A
// business's first complete copy is announced once, by a NOTIFY naming it
// and a log line, and Ready tells it.
func TestEachBusinessHasItsStatusAndItsReadiness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t, 2, withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, 30) }))
	acme, globex := f.Businesses[0], f.Businesses[1]
	f.Fail(globex.Name, 401)
	var logs syncBuffer
	mm := newMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), func(c *pgmirror.Config) {
		c.Logger = logs.logger()
	})
	ready, err := pgx.Connect(ctx, postgresOf(mm.Schema).URL)
	require.NoError(t, err)
	t.Cleanup(func() { ready.Close(context.Background()) })
	_, err = ready.Exec(ctx, `LISTEN "pgmirror_ready_`+mm.Schema+`"`)
	require.NoError(t, err)
	mm.add(t, acme, 0)
	mm.add(t, globex, 0)
	_, err = mm.Ready(ctx, "nobody")
	assert.ErrorIs(t, err, pgmirror.ErrNoSuchBusiness)
	run(t, mm.Mirror)

	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n, err := ready.WaitForNotification(wctx)
	require.NoError(t, err)
	assert.Equal(t, acme.Name, n.Payload, "acme's first complete copy")
	ok, err := mm.Ready(ctx, acme.Name)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = mm.Ready(ctx, globex.Name)
	require.NoError(t, err)
	assert.False(t, ok, "globex is refused")
	readyLine := `msg="pgmirror: business ready: its first complete copy is done" business=` + acme.Name
	waitUntil(t, 10*time.Second, func() (bool, string) { // logged after the commit that notifies
		return strings.Contains(logs.String(), readyLine), "the ready line logged"
	})
	assert.Equal(t, 1, strings.Count(logs.String(), readyLine))
	waitUntil(t, 10*time.Second, func() (bool, string) {
		return count(t, mm.DB, `SELECT count(*) FROM mirror_status WHERE business = $1 AND phase = 'paused'`, globex.Name) == 1, "globex paused"
	})

	st, err := pgmirror.ReadStatus(ctx, mm.DB, mm.Schema)
	require.NoError(t, err)
	require.Len(t, st.Businesses, 2)
	a, g := st.Businesses[0], st.Businesses[1]
	assert.Equal(t, pgmirror.PhaseReady, a.Phase)
	assert.Equal(t, len(pgmirror.Resources()), a.Backfilled)
	rowsOf := 0
	for _, res := range pgmirror.Resources() {
		rowsOf += count(t, mm.DB, `SELECT count(*) FROM `+res+` WHERE business = $1`, acme.Name)
	}
	assert.Equal(t, int64(rowsOf), a.Rows)
	assert.False(t, a.ReadyAt.IsZero())
	assert.False(t, a.ReconcileFinished.After(a.ReadyAt), "the first reconciliation is due within an interval of the complete copy (spread)")
	assert.True(t, a.ReconcileStarted.IsZero(), "none yet")
	assert.Equal(t, pgmirror.PhasePaused, g.Phase)
	assert.Contains(t, g.PauseReason, "refused")
	assert.True(t, g.ReadyAt.IsZero())

	var phase string
	var rows int64
	var backfilled int
	require.NoError(t, mm.DB.QueryRow(ctx, `SELECT phase, rows, backfilled_resources FROM mirror_status WHERE business = $1`, acme.Name).
		Scan(&phase, &rows, &backfilled))
	assert.Equal(t, []any{a.Phase, a.Rows, a.Backfilled}, []any{phase, rows, backfilled}, "the view says what the package says")

	one, err := pgmirror.ReadBusinessStatus(ctx, mm.DB, mm.Schema, acme.Name)
	require.NoError(t, err)
	require.Len(t, one.Businesses, 1)
	assert.Equal(t, acme.Name, one.Businesses[0].Name)
	var invoices int64
	for _, r := range one.Resources {
		if r.Name == pgmirror.Invoices {
			invoices = r.Rows
		}
	}
	assert.Equal(t, int64(30), invoices, "acme's rows only")
}

// sample returns the value of the sample of a scrape whose name and labels
// are series (such as `x_total{a="b"}`), or -1 when there is none.
func sample(scrape, series string) float64 {
	for line := range strings.Lines(scrape) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// invoicing-mirror --metrics serves the mirror's metrics, and its inbox's,
// on an address of its own, by route template and never by id; /readyz answers 503 while
// the backfill is not complete and 200 after, /healthz 200 throughout.
func TestTheCommandServesMetricsAndReadiness(t *testing.T) {
	t.Parallel()
	srv := invoicingtest.NewTestServer(t) // the wall clock: the process verifies deliveries with it
	seed(t, srv, sizes{invoices: 120, clients: 5}, 41, 42)
	srv.InjectFault(invoicingtest.Fault{Status: 503, Method: "GET", Path: "/invoices", Count: 1_000_000})
	secret := strings.Repeat("6f", 32)
	schema := newSchemaName()
	p := startServing(t, commandEnv(srv.URL, srv.FullKey, secret, server.URL),
		"--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--schema", schema, "--coalesce", "20ms")
	srv.AddWebhookEndpointWithSecret(p.base+"/webhooks", secret)
	scrape := func() string {
		t.Helper()
		status, body, err := get(p.metrics + "/metrics")
		require.NoError(t, err)
		require.Equal(t, 200, status, body)
		return body
	}

	// The invoices' walk fails: not ready, but alive.
	waitUntil(t, 30*time.Second, func() (bool, string) {
		return sample(scrape(), `invoicing_mirror_api_requests_total{route="GET /invoices",status="503"}`) > 0, "a 503 counted"
	})
	for _, path := range []string{"/readyz", "/readyz?business=default"} {
		status, body, err := get(p.base + path)
		require.NoError(t, err)
		assert.Equal(t, 503, status, "%s: %s", path, body)
	}
	status, _, err := get(p.base + "/healthz")
	require.NoError(t, err)
	assert.Equal(t, 200, status)
	status, _, err = get(p.base + "/readyz?business=nobody")
	require.NoError(t, err)
	assert.Equal(t, 404, status, "a business the mirror does not know")

	srv.ClearFaults()
	waitStatus(t, p.base+"/readyz", 200, time.Minute)
	waitStatus(t, p.base+"/readyz?business=default", 200, time.Minute)

	// An event whose fetch meets a 429 asking for a one-second pause.
	srv.InjectFault(invoicingtest.Fault{Status: 429, RetryAfter: time.Second, Method: "GET", Path: "/invoices/*"})
	inv := createInvoice(t, srv.Client(), invoicing.InvoiceStatusAwaitingPayment, 2)
	db := checkerPool(t, schema)
	waitUntil(t, 30*time.Second, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM invoices WHERE id = $1`, inv.ID) == 1, "the invoice mirrored"
	})

	var got string
	waitUntil(t, 10*time.Second, func() (bool, string) {
		got = scrape()
		return sample(got, `invoicing_mirror_event_lag_seconds_count{resource="invoices"}`) >= 1, "the lag observed"
	})
	for series, want := range map[string]float64{
		`invoicing_mirror_api_requests_total{route="GET /invoices/{id}",status="429"}`: 1,
		`invoicing_mirror_api_requests_total{route="GET /invoices/{id}",status="200"}`: 1,
		`invoicing_mirror_api_rate_limit_pause_seconds_total`:                          1,
		`invoicing_mirror_dependency_up{dependency="postgresql"}`:                      1,
		`invoicing_mirror_dependency_up{dependency="api"}`:                             1,
		`invoicing_mirror_pending_fetches{resource="invoices"}`:                        0,
		`invoicing_pginbox_pending_deliveries{state="due"}`:                            0,
		`invoicing_pginbox_oldest_pending_age_seconds`:                                 0,
		`invoicing_mirror_backfill_complete{resource="invoices"}`:                      1,
		`invoicing_mirror_backfill_total_records{resource="invoices"}`:                 120,
		`invoicing_mirror_changes_total{cause="backfill",resource="invoices"}`:         120,
		`invoicing_mirror_changes_total{cause="event",resource="invoices"}`:            1,
		`invoicing_mirror_changes_total{cause="reconciliation",resource="invoices"}`:   0,
		`invoicing_mirror_reconciliation_corrections_total{resource="invoices"}`:       0,
		`invoicing_mirror_deletion_marks_total{resource="invoices"}`:                   0,
		`invoicing_mirror_reconciliations_overdue`:                                     0,
		`invoicing_mirror_businesses{state="paused"}`:                                  0,
	} {
		assert.Equal(t, want, sample(got, series), series)
	}
	assert.Greater(t, sample(got, `invoicing_mirror_api_requests_total{route="GET /invoices",status="200"}`), 1.0)
	assert.GreaterOrEqual(t, sample(got, `invoicing_mirror_backfill_listed_records{resource="invoices"}`), 120.0)
	assert.Equal(t, 1.0, sample(got, `invoicing_pginbox_deliveries_total{outcome="stored"}`), "the inbox's collector, fed by the Handler")
	assert.GreaterOrEqual(t, sample(got, `invoicing_pginbox_deliveries_total{outcome="processed"}`), 1.0, "and by the Workers")
	assert.Greater(t, sample(got, `invoicing_mirror_event_lag_seconds_sum{resource="invoices"}`), 1.0, "the pause is part of the lag")
	assert.NotRegexp(t, uuidPattern, got, "no id in any label")
	for name := range strings.SplitSeq("api_requests_total api_rate_limit_pause_seconds_total event_lag_seconds dependency_up pending_fetches "+
		"backfill_listed_records backfill_total_records backfill_complete reconciliation_corrections_total "+
		"deletion_marks_total changes_total businesses reconciliations_overdue", " ") {
		assert.Contains(t, got, "# HELP invoicing_mirror_"+name+" ", name)
	}
	p.stop(t)
}

// The alert rules shipped with the module load, and fire as their tests
// say (promtool test rules; the test command installs promtool with
// Prometheus's Debian package). Each alert has a runbook naming the command
// to run, and reads only metrics the mirror serves (or Prometheus's up).
func TestTheAlertRulesPassPromtool(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	require.NoError(t, err, "these tests need promtool (Debian: apt-get install prometheus; scripts/install-deps.sh installs it)")
	for _, args := range [][]string{{"check", "rules", "invoicing-mirror.rules.yml"}, {"test", "rules", "invoicing-mirror.rules.test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "alerts"
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %v:\n%s", args, out)
	}

	rules, err := os.ReadFile("alerts/invoicing-mirror.rules.yml")
	require.NoError(t, err)
	alerts := regexp.MustCompile(`(?m)^      - alert: (\w+)\n((?:        .*\n)+)`).FindAllStringSubmatch(string(rules), -1)
	require.Len(t, alerts, 8)
	for _, a := range alerts {
		_, runbook, ok := strings.Cut(a[2], "runbook: >-\n")
		require.True(t, ok, "%s has a runbook", a[1])
		assert.Contains(t, runbook, "`invoicing-mirror ", "%s's runbook names a command", a[1])
		for _, metric := range regexp.MustCompile(`invoicing_\w+`).FindAllString(strings.SplitN(a[2], "\n", 2)[0], -1) {
			assert.Regexp(t, `^invoicing_(mirror_(dependency_up|businesses|event_lag_seconds_bucket|reconciliations_overdue)|`+
				`pginbox_(oldest_pending_age_seconds|deliveries_total))$`, metric, "%s reads a metric the mirror serves", a[1])
		}
	}
}
