package pgmirror_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
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
)

// A reconciliation corrects what changed without an event reaching the
// mirror (here no webhook endpoint exists at all): invoices made overdue or
// voided, quotes declined or expired, bills approved and paid, a new bank
// transaction and the balance it changes, new accounts, tax codes, items
// and contacts. It reports the corrections per resource, through its
// result, the OnReconciled hook and the log, and deletes the processed
// deliveries past their retention; a second one finds nothing to correct.
func TestReconcileCorrectsChangesThatRaiseNoEvent(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	c := srv.Client()
	overdue, voided := createInvoice(t, c, invoicing.InvoiceStatusAwaitingPayment, 2), createInvoice(t, c, invoicing.InvoiceStatusDraft, 1)
	declined, expired := createQuote(t, c, 2), createQuote(t, c, 1)
	paid, approved := createBill(t, c), createBill(t, c)

	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv), schema)
	var logs syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	var mu sync.Mutex
	hooked := map[string]int{}
	cfg.OnReconciled = func(resource string, corrected int) {
		mu.Lock()
		defer mu.Unlock()
		hooked[resource] += corrected
	}
	m := openMirror(t, cfg)
	ctx := context.Background()
	require.NoError(t, m.Backfill(ctx))

	require.NoError(t, srv.UpdateInvoice(overdue.ID, invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusOverdue}))
	require.NoError(t, srv.UpdateInvoice(voided.ID, invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusVoided}))
	require.NoError(t, srv.DeclineQuote(declined.ID))
	require.NoError(t, srv.ExpireQuote(expired.ID))
	require.NoError(t, srv.ApproveBill(paid.ID))
	require.NoError(t, srv.PayBill(paid.ID, time.Time{}))
	require.NoError(t, srv.ApproveBill(approved.ID))
	srv.AddBankTransaction(invoicingtest.BankTransaction{BankAccountID: invoicingtest.SeedBankAccountID, Date: t0,
		Description: "Interest", Amount: decimal.RequireFromString("3.21")})
	srv.AddAccount(invoicingtest.Account{Code: "4200", Name: "Other Revenue", Type: invoicingtest.AccountRevenue})
	srv.AddTaxCode(invoicingtest.TaxCode{Code: "EXP", Name: "Export", Region: "AU"})
	_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{Name: "Widget", UnitPrice: invoicing.Ptr(decimal.NewFromInt(5)),
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID})
	require.NoError(t, err)
	srv.AddClient(invoicingtest.Contact{Name: "Quiet client"})
	srv.AddSupplier(invoicingtest.Contact{Name: "Quiet supplier"})

	db := adminPool(t, schema)
	_, err = db.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body, status, processed_at)
		VALUES ('old', 'test', now(), '{}', 'processed', now() - interval '8 days'),
		       ('recent', 'test', now(), '{}', 'processed', now() - interval '6 days'),
		       ('parked', 'test', now(), '{}', 'failed', NULL)`)
	require.NoError(t, err)

	corrected, err := m.Reconcile(ctx)
	require.NoError(t, err)
	want := map[string]int{
		pgmirror.Invoices: 2, pgmirror.Quotes: 2, pgmirror.Bills: 2, pgmirror.BankTransactions: 1, pgmirror.BankAccounts: 1,
		pgmirror.Accounts: 1, pgmirror.TaxCodes: 1, pgmirror.Items: 1, pgmirror.Clients: 1, pgmirror.Suppliers: 1,
	}
	assert.Equal(t, want, corrected)
	assert.Equal(t, want, hooked)
	assert.Contains(t, logs.String(), `msg="pgmirror: reconciled" business=default resource=quotes listed=2 corrected=2`)
	requireMirrorEqual(t, srv, schema)
	assert.Equal(t, 2, count(t, db, `SELECT count(*) FROM invoicing_webhook_inbox WHERE delivery_id IN ('recent', 'parked')`),
		"processed deliveries past the week's retention are deleted; recent and parked ones are kept")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoicing_webhook_inbox WHERE delivery_id = 'old'`))

	changed := count(t, db, `SELECT count(*) FROM invoice_lines`)
	again, err := m.Reconcile(ctx)
	require.NoError(t, err)
	for _, r := range pgmirror.Resources() {
		assert.Zero(t, again[r], "%s corrected again", r)
	}
	assert.Equal(t, changed, count(t, db, `SELECT count(*) FROM invoice_lines`))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_changed_at > (SELECT last_started_at FROM mirror_reconcile)`),
		"an unchanged record is not rewritten")
}

// Replicas running the reconciler take turns (one run at a time, never two
// interleaved) and together respect the interval, counted from the end of
// the last run by any replica to the start of the next.
func TestReplicasReconcileOneAtATimeAtTheInterval(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	schema := newSchemaName()
	const interval = 300 * time.Millisecond
	type call struct {
		replica  int
		resource string
		at       time.Time
	}
	var mu sync.Mutex
	var calls []call
	var mirrors []*pgmirror.Mirror
	for i := range 2 {
		cfg := testConfig(sdkClient(srv), schema)
		cfg.ReconcileInterval = interval
		cfg.OnReconciled = func(resource string, _ int) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, call{i, resource, time.Now()})
		}
		mirrors = append(mirrors, openMirror(t, cfg))
	}
	require.NoError(t, mirrors[0].Backfill(context.Background()))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, m := range mirrors {
		wg.Go(func() { m.RunReconciler(ctx) })
	}
	resources := pgmirror.Resources()
	waitUntil(t, 30*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(calls) >= 4*len(resources), fmt.Sprintf("%d of %d resources reconciled", len(calls), 4*len(resources))
	})
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	runs := len(calls) / len(resources)
	for r := range runs {
		run := calls[r*len(resources) : (r+1)*len(resources)]
		for i, c := range run {
			assert.Equal(t, resources[i], c.resource, "run %d: resources in order, not interleaved with another run", r)
			assert.Equal(t, run[0].replica, c.replica, "run %d is one replica's", r)
		}
		if r > 0 {
			gap := run[0].at.Sub(calls[r*len(resources)-1].at)
			assert.GreaterOrEqual(t, gap, interval, "run %d started %v after the previous one ended", r, gap)
		}
	}
}

// tupleCounts are a table's cumulative inserted, updated and deleted tuples
// (pg_stat_user_tables).
type tupleCounts struct{ ins, upd, del int64 }

// tablesWritten reads the tuple counts of the tables of schema, once every
// session named app has ended: a backend flushes its statistics before it
// leaves pg_stat_activity, so the counts then hold all of its writes.
func tablesWritten(t testing.TB, db *pgxpool.Pool, schema, app string, tables ...string) map[string]tupleCounts {
	t.Helper()
	ctx := context.Background()
	waitUntil(t, 30*time.Second, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app) == 0, "the mirror's sessions to end"
	})
	out := map[string]tupleCounts{}
	for _, table := range tables {
		var c tupleCounts
		// A query of its own, outside any transaction: a fresh snapshot
		// of the statistics, summed over the table's partitions when it
		// has some (Config.Partitions).
		require.NoError(t, db.QueryRow(ctx, `SELECT sum(n_tup_ins)::bigint, sum(n_tup_upd)::bigint, sum(n_tup_del)::bigint
			FROM pg_stat_user_tables, (SELECT format('%I.%I', $1::text, $2::text)::regclass AS t) AS t
			WHERE relid = t.t OR relid IN (SELECT relid FROM pg_partition_tree(t.t))`,
			schema, table).Scan(&c.ins, &c.upd, &c.del))
		out[table] = c
	}
	return out
}

// openNamedMirror opens a migrated mirror whose sessions are named app.
func openNamedMirror(t testing.TB, cfg pgmirror.Config, app string) *pgmirror.Mirror {
	t.Helper()
	m, err := pgmirror.Open(context.Background(), server.URL+"&application_name="+app, cfg)
	require.NoError(t, err)
	require.NoError(t, m.Migrate(context.Background()))
	return m
}

// Unchanged means untouched: reconciling an unchanged mirror of 20,000
// invoices (and the fake's seed data) inserts, updates and deletes no tuple
// of the record and line tables, measured in pg_stat_user_tables after the
// reconciler's sessions ended. The same measurement then sees a
// reconciliation correcting 10 invoices: 10 tuples updated in invoices,
// their lines deleted and inserted again.
func TestAnUnchangedReconciliationWritesNothing(t *testing.T) {
	t.Parallel()
	invoices := 20_000
	if testing.Short() || raceDetector {
		invoices = 4_000
	}
	srv, _ := newFake(t)
	ids := seed(t, srv, sizes{invoices: invoices, quotes: 200, bills: 50, clients: 50}, rand.New(rand.NewPCG(23, 3)))
	schema := newSchemaName()
	db := adminPool(t, schema)
	cfg := testConfig(sdkClient(srv), schema)
	cfg.BatchSize = pgmirror.DefaultBatchSize
	ctx := context.Background()
	tables := []string{"invoices", "invoice_lines", "quotes", "quote_lines", "bills", "bill_lines", "clients", "items",
		"accounts", "tax_codes", "bank_accounts", "bank_transactions", "suppliers"}

	reconcile := func(phase string) map[string]int {
		app := schema + "_" + phase
		m := openNamedMirror(t, cfg, app)
		if phase == "backfill" {
			require.NoError(t, m.Backfill(ctx))
			m.Close()
			return nil
		}
		corrected, err := m.Reconcile(ctx)
		require.NoError(t, err)
		m.Close()
		return corrected
	}
	reconcile("backfill")
	before := tablesWritten(t, db, schema, schema+"_backfill", tables...)
	require.Equal(t, int64(invoices), before["invoices"].ins)

	start := time.Now()
	corrected := reconcile("unchanged")
	took := time.Since(start)
	after := tablesWritten(t, db, schema, schema+"_unchanged", tables...)
	for _, table := range tables {
		assert.Equal(t, before[table], after[table], "tuples written in %s by an unchanged reconciliation", table)
	}
	for res, n := range corrected {
		assert.Zero(t, n, res)
	}
	t.Logf("an unchanged reconciliation of %d invoices took %v and wrote %+v tuples to invoices, %+v to invoice_lines",
		invoices, took.Round(time.Millisecond), minus(after["invoices"], before["invoices"]),
		minus(after["invoice_lines"], before["invoice_lines"]))

	// The walk's number stands for the rows it found unchanged: a fetch
	// numbered before it, answering late with other content in the same
	// second, does not win.
	walk := count(t, db, `SELECT walk_seq FROM mirror_backfill WHERE resource = 'invoices'`)
	stale, err := srv.Client().Invoices.Get(ctx, ids["invoices"][0])
	require.NoError(t, err)
	stale.Notes = "a late answer"
	m := openMirror(t, cfg)
	written, err := m.ApplyForTest(ctx, int64(walk-1), stale)
	require.NoError(t, err)
	assert.Empty(t, written)

	lines := 0
	for _, id := range ids["invoices"][:10] {
		notes := "changed without an event"
		require.NoError(t, srv.UpdateInvoice(id, invoicingtest.InvoiceUpdate{Notes: &notes}))
		inv, err := srv.Client().Invoices.Get(ctx, id)
		require.NoError(t, err)
		lines += len(inv.LineItems)
	}
	corrected = reconcile("changed")
	assert.Equal(t, 10, corrected[pgmirror.Invoices])
	changed := tablesWritten(t, db, schema, schema+"_changed", tables...)
	assert.Equal(t, tupleCounts{upd: 10}, minus(changed["invoices"], after["invoices"]))
	assert.Equal(t, tupleCounts{ins: int64(lines), del: int64(lines)}, minus(changed["invoice_lines"], after["invoice_lines"]))
	requireMirrorEqual(t, srv, schema)
}

func minus(a, b tupleCounts) tupleCounts {
	return tupleCounts{a.ins - b.ins, a.upd - b.upd, a.del - b.del}
}

// While the service answers every request with a 503, for three tries of
// a reconciler that looks every 100 ms, it logs one line when the service
// goes and one when it is back, not a line per failure, and reconciles
// once it is back.
func TestAnAPIOutageDuringReconciliationIsQuiet(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 30}, rand.New(rand.NewPCG(11, 12))) // enough for the check against another business
	cfg := testConfig(sdkClient(srv), newSchemaName())
	cfg.ReconcileInterval = 100 * time.Millisecond
	var logs syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	m := openMirror(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, m.Backfill(ctx))

	before := len(logs.String()) // the backfill's lines
	srv.FailNext(1_000_000, http.StatusServiceUnavailable)
	done := make(chan error, 1)
	go func() { done <- m.RunReconciler(ctx) }()
	// An outage long enough for three tries of the reconciler (a second,
	// then two, apart): each begins with the check of a sample of 8
	// invoices, each Get 4 attempts (the SDK retries 3 times).
	const perTry = 8 * 4
	waitUntil(t, time.Minute, func() (bool, string) {
		n := 0
		for _, r := range srv.Requests() {
			if r.Fault {
				n++
			}
		}
		return n >= 3*perTry, fmt.Sprintf("%d requests failed, %d a try", n, perTry)
	})
	srv.ClearFaults()
	away := logs.String()[before:]
	waitUntil(t, 40*time.Second, func() (bool, string) {
		return strings.Contains(logs.String(), `msg="pgmirror: reconciliation done"`), "a reconciliation after the outage"
	})
	cancel()
	require.NoError(t, <-done)

	all := strings.Split(strings.TrimSpace(logs.String()[before:]), "\n")
	lines := strings.Split(strings.TrimSpace(away), "\n")
	t.Logf("%d log lines over the outage", len(lines))
	assert.Equal(t, []string{`msg="pgmirror: the API is not answering; retrying with backoff until it does"`}, msgs(lines), "%s", away)
	assert.Equal(t, 1, strings.Count(logs.String(), `msg="pgmirror: the API answers again"`))
	for _, l := range all {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			assert.Contains(t, l, `msg="pgmirror: the API is not answering; retrying with backoff until it does"`)
		}
	}
}

// msgs returns the msg="..." of each log line.
func msgs(lines []string) []string {
	var out []string
	for _, l := range lines {
		if i := strings.Index(l, `msg="`); i >= 0 {
			j := strings.Index(l[i+5:], `"`)
			out = append(out, l[i:i+5+j+1])
		}
	}
	return out
}

// A resync asked for (the package's Businesses.Resync, or the command)
// walks the business on the running replica within a second or so, without
// a restart: the changes that raised no event are corrected then, not an
// interval later; a resync of one resource walks that one only, and does
// not count as the business's reconciliation.
func TestAResyncWalksTheBusinessNowOnARunningReplica(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	c := srv.Client()
	overdue := createInvoice(t, c, invoicing.InvoiceStatusAwaitingPayment, 1)
	declined := createQuote(t, c, 1)
	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv), schema)
	var logs syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	m := openMirror(t, cfg)
	db := adminPool(t, schema)
	ctx := context.Background()
	bs := pgmirror.NewBusinesses(db, schema, nil)
	assert.ErrorIs(t, bs.Resync(ctx, pgmirror.DefaultBusiness), pgmirror.ErrNotReady, "not backfilled yet")
	run(t, m)
	waitBackfilled(t, db, 30*time.Second)
	waitUntil(t, 10*time.Second, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM mirror_status WHERE phase = 'ready'`) == 1, "the business ready"
	})

	// One resource: the quotes are walked; the invoice's change waits.
	require.NoError(t, srv.UpdateInvoice(overdue.ID, invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusOverdue}))
	require.NoError(t, srv.DeclineQuote(declined.ID))
	assert.ErrorContains(t, bs.Resync(ctx, pgmirror.DefaultBusiness, "payments"), `no resource "payments"`)
	asked := time.Now()
	require.NoError(t, bs.Resync(ctx, pgmirror.DefaultBusiness, pgmirror.Quotes))
	waitUntil(t, 10*time.Second, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM quotes WHERE id = $1 AND status = 'declined'`, declined.ID) == 1, "the quote's walk"
	})
	t.Logf("a resync of one resource corrected it %v after it was asked for", time.Since(asked).Round(time.Millisecond))
	waitUntil(t, 10*time.Second, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM mirror_reconcile WHERE resync_at IS NULL`) == 1, "the resync cleared"
	})
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM invoices WHERE id = $1 AND status = 'awaiting_payment'`, overdue.ID),
		"the invoices were not walked")
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM mirror_reconcile WHERE last_started_at IS NULL`), "not a reconciliation")

	// The whole business, through the command.
	out, code := runCommand(t, commandEnv(srv.URL, "", "", postgresOf(schema).URL), "resync", "--schema", schema, "--business", pgmirror.DefaultBusiness)
	require.Zero(t, code, out)
	asked = time.Now()
	var started time.Duration
	waitUntil(t, 10*time.Second, func() (bool, string) {
		if started == 0 && count(t, db, `SELECT count(*) FROM mirror_reconcile WHERE last_started_at IS NOT NULL`) == 1 {
			started = time.Since(asked)
		}
		return count(t, db, `SELECT count(*) FROM invoices WHERE id = $1 AND status = 'overdue'`, overdue.ID) == 1, "the business's walk"
	})
	t.Logf("a resync of the business started %v after it was asked for", started.Round(time.Millisecond))
	assert.Contains(t, logs.String(), `msg="pgmirror: resync done"`)
	requireMirrorEqual(t, srv, schema)
}
