package pgmirror_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
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

	var logs syncBuffer
	var mu sync.Mutex
	hooked := map[string]int{}
	m, db := newMirror(t, srv, func(cfg *pgmirror.Config) {
		cfg.Logger = logs.logger()
		cfg.OnReconciled = func(resource string, corrected int) {
			mu.Lock()
			defer mu.Unlock()
			hooked[resource] += corrected
		}
	})
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
	requireMirrorEqual(t, srv, m.Schema())
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
	ids := seed(t, srv, sizes{invoices: invoices, quotes: 200, bills: 50, clients: 50}, 23, 3)
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

// The work that grows with a business, bounded (issue 32, item 6), at
// scale: it runs only with PGMIRROR_SCALE=1 and without -short, and logs
// its figures.
//
//  1. A reconciliation of a business of 100,000 invoices
//     (PGMIRROR_SCALE_INVOICES): its time, and the peak of the live heap
//     it adds (as the last garbage collection found it, sampled every
//     5 ms).
//  2. A retention pass over 10,000,000 changes older than the retention
//     (PGMIRROR_SCALE_CHANGES): its time, and the longest an event's change
//     waited to be read by FollowChanges meanwhile (events every 50 ms): a
//     long deletion's transaction would hold the feed's readers back until
//     it ends.
func TestBoundedReconciliationAndRetention(t *testing.T) {
	t.Parallel()
	needScale(t, "reconcile 100,000 invoices and prune 10,000,000 changes")
	invoices := scaleSetting(t, "PGMIRROR_SCALE_INVOICES", 100_000)
	changes := scaleSetting(t, "PGMIRROR_SCALE_CHANGES", 10_000_000)
	ctx := context.Background()
	srv, clock := newFake(t)
	ids := seed(t, srv, sizes{invoices: invoices}, 40, 41)
	m, db := newMirror(t, srv, func(cfg *pgmirror.Config) { cfg.BatchSize = pgmirror.DefaultBatchSize })
	start := time.Now()
	require.NoError(t, m.Backfill(ctx))
	t.Logf("backfill of %d invoices: %v", invoices, time.Since(start).Round(time.Millisecond))

	// 1. A reconciliation, its heap sampled.
	stop := heapPeak(t)
	start = time.Now()
	corrected, err := m.Reconcile(ctx)
	took := time.Since(start)
	added := stop()
	require.NoError(t, err)
	assert.Zero(t, corrected[pgmirror.Invoices], "nothing changed")
	t.Logf("reconciliation of %d invoices: %v; live heap added at its peak: %.1f MB (%.0f bytes an invoice)",
		invoices, took.Round(time.Millisecond), float64(added)/1e6, float64(added)/float64(invoices))

	// 2. A retention pass over old changes, while events are followed.
	start = time.Now()
	_, err = db.Exec(ctx, `INSERT INTO mirror_changes (seq, at, business, resource, id, cause, op, new_values)
		SELECT g, now() - interval '60 days', $1, 'invoices', 'old' || g, 'event', 'insert', '{"old": true}'
		FROM generate_series(1, $2::bigint) AS g`, pgmirror.DefaultBusiness, changes)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `VACUUM ANALYZE mirror_changes`)
	require.NoError(t, err)
	t.Logf("%d old changes written in %v", changes, time.Since(start).Round(time.Millisecond))

	hookUp(t, srv, clock, m)
	run(t, m)
	var mu sync.Mutex
	written := map[string]time.Time{} // invoice id → when its update was made
	var held atomic.Int64             // the longest wait of a change to be followed, in ns
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	after := int64(changes) // the old ones are not followed
	go func() {
		for ch, err := range m.FollowChanges(fctx, after) {
			if err != nil {
				return
			}
			mu.Lock()
			at, ok := written[ch.ID]
			mu.Unlock()
			if ok && ch.Cause == pgmirror.CauseEvent {
				if d := int64(time.Since(at)); d > held.Load() {
					held.Store(d)
				}
			}
		}
	}()
	// The pass: this Prune's, with Run's own if it runs meanwhile; it ends
	// when every old change is deleted.
	start = time.Now()
	pruned := make(chan error, 1)
	go func() {
		if err := m.Prune(ctx); err != nil {
			pruned <- err
			return
		}
		for {
			var left int
			if err := db.QueryRow(ctx, `SELECT count(*) FROM mirror_changes WHERE seq <= $1`, changes).Scan(&left); err != nil || left == 0 {
				pruned <- err
				return
			}
			time.Sleep(10 * time.Millisecond) // polling the deletion's progress
		}
	}()
	notes := 0
	for done := false; !done; {
		select {
		case err := <-pruned:
			require.NoError(t, err)
			done = true
		case <-time.After(50 * time.Millisecond): // pacing the events, not a wait
			id := ids["invoices"][notes%len(ids["invoices"])]
			note := fmt.Sprintf("note %d", notes)
			mu.Lock()
			written[id] = time.Now()
			mu.Unlock()
			require.NoError(t, srv.UpdateInvoice(id, invoicingtest.InvoiceUpdate{Notes: &note}))
			notes++
		}
	}
	pruneTook := time.Since(start)
	t.Logf("retention pass over %d changes: %v; %d events meanwhile, the longest a change waited to be followed: %v",
		changes, pruneTook.Round(time.Millisecond), notes, time.Duration(held.Load()).Round(time.Millisecond))
}

// heapPeak samples the live heap (as the last garbage collection found
// it) every 5 ms until stop is called, which returns the peak above the
// live heap at the start.
func heapPeak(t *testing.T) (stop func() uint64) {
	read := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := read()
	var peak uint64
	stopSampling := testkit.Every(t, 5*time.Millisecond, func() { peak = max(peak, read()) })
	return func() uint64 {
		stopSampling()
		return max(peak, base) - base
	}
}

// While the service answers every request with a 503, for three tries of
// a reconciler that looks every 100 ms, it logs one line when the service
// goes and one when it is back, not a line per failure, and reconciles
// once it is back.
func TestAnAPIOutageDuringReconciliationIsQuiet(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 30}, 11, 12) // enough for the check against another business
	var logs syncBuffer
	m, _ := newMirror(t, srv, func(cfg *pgmirror.Config) {
		cfg.ReconcileInterval = 100 * time.Millisecond
		cfg.Logger = logs.logger()
	})
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
	var logs syncBuffer
	m, db := newMirror(t, srv, func(cfg *pgmirror.Config) { cfg.Logger = logs.logger() })
	schema := m.Schema()
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

// Records the service no longer lists: marked deleted, and unless it is
// told otherwise, the mirror stops when most of a table's records are gone
// (another business behind the key).

// withoutRecords returns srv's state without the records ids of the state's
// key (such as "invoices"), and the payments naming them, for LoadState:
// the service cannot delete.
func withoutRecords(t testing.TB, srv *invoicingtest.Server, key string, ids []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, srv.SaveState(&buf))
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	var st map[string]any
	require.NoError(t, dec.Decode(&st))
	st[key] = slices.DeleteFunc(st[key].([]any), func(r any) bool { return slices.Contains(ids, r.(map[string]any)["id"].(string)) })
	if payments, ok := st["payments"].([]any); ok {
		st["payments"] = slices.DeleteFunc(payments, func(r any) bool {
			id, _ := r.(map[string]any)["invoice_id"].(string)
			return slices.Contains(ids, id)
		})
	}
	b, err := json.Marshal(st)
	require.NoError(t, err)
	return b
}

// backfilledSchema backfills a mirror of a new fake service holding that
// many invoices (seeded from s1 and s2) into a new schema, and returns the
// schema: the mirror of one business, for another to take its place
// behind the key.
func backfilledSchema(t testing.TB, invoices int, s1, s2 uint64) string {
	t.Helper()
	_, m, _ := backfilled(t, sizes{invoices: invoices}, s1, s2)
	return m.Schema()
}

// Records the service no longer lists are marked deleted by the next
// reconciliation, with their lines, logged and in the change feed; listed
// again, they are unmarked.
func TestDeletedRecordsAreMarkedAndUnmarked(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	ids := seed(t, srv, sizes{invoices: 40, quotes: 5}, 2, 3)
	var logs syncBuffer
	m, db := newMirror(t, srv, func(cfg *pgmirror.Config) { cfg.Logger = logs.logger() })
	ctx := context.Background()
	require.NoError(t, m.Backfill(ctx))

	var full bytes.Buffer
	require.NoError(t, srv.SaveState(&full))
	gone := ids["invoices"][5:8]
	require.NoError(t, srv.LoadState(bytes.NewReader(withoutRecords(t, srv, "invoices", gone))))
	corrected, err := m.Reconcile(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, corrected[pgmirror.Invoices])
	assert.Equal(t, 3, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL AND id = ANY($1)`, gone))
	assert.Equal(t, 3, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL`))
	assert.Equal(t, 40, count(t, db, `SELECT count(*) FROM invoices`), "rows kept, as last seen")
	goneLines := count(t, db, `SELECT count(*) FROM invoice_lines WHERE invoice_id = ANY($1)`, gone)
	require.Positive(t, goneLines)
	assert.Equal(t, goneLines, count(t, db, `SELECT count(*) FROM invoice_lines WHERE mirror_deleted_at IS NOT NULL`),
		"the lines of the invoices marked deleted, and only those, are marked with them")
	assert.Contains(t, logs.String(), `msg="pgmirror: marked deleted" business=default resource=invoices rows=3`)
	_, _, deleted, _ := m.CountedForTest()
	assert.Equal(t, int64(3), deleted[pgmirror.Invoices])

	again, err := m.Reconcile(ctx)
	require.NoError(t, err)
	assert.Zero(t, again[pgmirror.Invoices], "marked once")

	require.NoError(t, srv.LoadState(&full))
	corrected, err = m.Reconcile(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, corrected[pgmirror.Invoices])
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL`))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoice_lines WHERE mirror_deleted_at IS NOT NULL`), "listed again: their lines written anew")
	requireMirrorEqual(t, srv, m.Schema())

	ops := map[string]int{}
	waitFeedReadable(t, m)
	for c, err := range m.Changes(ctx, 0) {
		require.NoError(t, err)
		if c.Cause == pgmirror.CauseReconciliation && slices.Contains(gone, c.ID) {
			ops[c.Op]++
		}
	}
	assert.Equal(t, map[string]int{pgmirror.OpDelete: 3, pgmirror.OpInsert: 3}, ops)
	requireFeedReplays(t, m, db)
}

// A different business behind the key (here: another fake, whose invoices
// all have other ids) makes the reconciliation, and RunReconciler, stop
// with an error that says so, before writing or marking anything; with
// AllowMassDeletion, the old rows are marked deleted and the new ones
// written.
func TestMostRecordsVanishingStopsTheMirror(t *testing.T) {
	t.Parallel()
	schema := backfilledSchema(t, 60, 4, 5)
	ctx := context.Background()

	second, _ := newFake(t)
	seed(t, second, sizes{invoices: 7}, 6, 7)
	cfg := testConfig(sdkClient(second), schema)
	cfg.ReconcileInterval = time.Millisecond
	m := openMirror(t, cfg)
	_, err := m.Reconcile(ctx)
	require.ErrorIs(t, err, pgmirror.ErrMassDeletion)
	assert.Contains(t, err.Error(), "the service no longer lists 60 of 60 invoices: a different business behind the API key?")
	db := adminPool(t, schema)
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL`), "nothing marked")
	assert.Equal(t, 60, count(t, db, `SELECT count(*) FROM invoices`), "nothing written")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM mirror_changes WHERE cause = 'reconciliation'`))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM mirror_reconcile WHERE last_started_at IS NOT NULL`), "no reconciliation started")

	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.ErrorIs(t, m.RunReconciler(rctx), pgmirror.ErrMassDeletion, "the reconciler stops")
	require.NoError(t, rctx.Err())

	cfg.AllowMassDeletion = true
	corrected, err := openMirror(t, cfg).Reconcile(ctx)
	require.NoError(t, err)
	assert.Equal(t, 67, corrected[pgmirror.Invoices], "7 written, 60 marked")
	assert.Equal(t, 60, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL`))
	assert.Equal(t, 7, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NULL`))
}

// A backfilled mirror started with a different business behind the key
// (another fake, whose invoices all have other ids) stops at startup with
// ErrMassDeletion, before its fetchers write the records the new
// business's events asked for; with AllowMassDeletion it starts and
// writes them.
func TestRunStopsAtStartupWhenAnotherBusinessIsBehindTheKey(t *testing.T) {
	t.Parallel()
	schema := backfilledSchema(t, 60, 4, 5)
	ctx := context.Background()
	db := adminPool(t, schema)
	changes := count(t, db, `SELECT count(*) FROM mirror_changes`)

	second, _ := newFake(t)
	ids := seed(t, second, sizes{invoices: 7}, 6, 7)["invoices"]
	for _, id := range ids { // as the second business's events would ask
		_, err := db.Exec(ctx, `INSERT INTO mirror_pending_fetch (business, resource, id, due_at) VALUES ('default', 'invoices', $1, now())`, id)
		require.NoError(t, err)
	}
	cfg := testConfig(sdkClient(second), schema)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	err := openMirror(t, cfg).Run(rctx)
	took := time.Since(start)
	require.ErrorIs(t, err, pgmirror.ErrMassDeletion)
	assert.Contains(t, err.Error(), "the service no longer lists 60 of 60 invoices")
	require.NoError(t, rctx.Err())
	assert.Less(t, took, 5*time.Second, "at startup, not at the first reconciliation")
	assert.Equal(t, 60, count(t, db, `SELECT count(*) FROM invoices`), "nothing written")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL`), "nothing marked")
	assert.Equal(t, changes, count(t, db, `SELECT count(*) FROM mirror_changes`), "no change")
	assert.Equal(t, len(ids), count(t, db, `SELECT count(*) FROM mirror_pending_fetch`), "the requests wait")
	t.Logf("Run stopped after %v", took.Round(time.Millisecond))

	cfg.AllowMassDeletion = true
	run(t, openMirror(t, cfg))
	waitUntil(t, 10*time.Second, func() (bool, string) {
		n := count(t, db, `SELECT count(*) FROM invoices WHERE id = ANY($1)`, ids)
		return n == len(ids), fmt.Sprintf("%d of the new business's %d invoices written", n, len(ids))
	})
}

// Run stops with ErrMassDeletion when a reconciliation finds most of a
// table's records gone (another business behind the key), instead of
// going on.
func TestRunStopsWhenMostRecordsVanish(t *testing.T) {
	t.Parallel()
	schema := backfilledSchema(t, 40, 71, 72)
	other, _ := newFake(t) // a business without those invoices
	cfg := testConfig(sdkClient(other), schema)
	cfg.ReconcileInterval = 200 * time.Millisecond
	m := openMirror(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.ErrorIs(t, m.Run(ctx), pgmirror.ErrMassDeletion)
	require.NoError(t, ctx.Err(), "it stopped by itself")
}

// Forgetting the ids a walk listed takes a range of the key a batch,
// whatever plan the connection cached: with a plan made while the table
// was empty (its usual state between walks; PostgreSQL keeps a statement's
// generic plan until the table is analyzed), a batch that was a join
// compared every id of the business with every id of the batch, 12 s for
// 20,000 ids, and the end of a reconciliation of 20,000 invoices ran out of
// its 30 s.
func TestForgettingTheIDsAWalkListedIsFastWhateverPlanWasCached(t *testing.T) {
	t.Parallel()
	schema, _ := migratedSchema(t)
	pc, err := pgxpool.ParseConfig(postgresOf(schema).URL)
	require.NoError(t, err)
	pc.MaxConns = 1 // one connection: the plan cached is the plan used
	pc.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	ctx := context.Background()

	require.NoError(t, pgmirror.ForgetListedForTest(ctx, pool, schema, "b1", pgmirror.Invoices)) // planned on an empty table
	_, err = pool.Exec(ctx, `INSERT INTO `+schema+`.mirror_walk_listed (business, resource, id)
		SELECT b, 'invoices', 'inv_' || g FROM generate_series(1, 30000) AS g, unnest(ARRAY['b1', 'b2']) AS b`)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, pgmirror.ForgetListedForTest(ctx, pool, schema, "b1", pgmirror.Invoices))
	took := time.Since(start)
	t.Logf("forgetting 30,000 ids with the plan cached on an empty table took %v", took.Round(time.Millisecond))
	assert.Less(t, took, 5*time.Second)
	assert.Equal(t, 0, count(t, pool, `SELECT count(*) FROM `+schema+`.mirror_walk_listed WHERE business = 'b1'`))
	assert.Equal(t, 30000, count(t, pool, `SELECT count(*) FROM `+schema+`.mirror_walk_listed WHERE business = 'b2'`), "another business's")
}

// The walk loop's look at the businesses reads each business's own state:
// whether its backfill is complete, when its next reconciliation is due
// (the interval after its last, or a resync asked for, whichever is
// first; none before its first complete copy), and how long it stays
// paused.
func TestTheWalkLoopReadsEachBusinesssOwnWalks(t *testing.T) {
	t.Parallel()
	schema, db := migratedSchema(t)
	ctx := context.Background()
	last := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	resync := last.Add(10 * time.Minute)
	_, err := db.Exec(ctx, `INSERT INTO mirror_backfill (business, resource, completed_at)
		SELECT b, r, CASE WHEN b = 'b2' AND r = 'items' THEN NULL ELSE now() END
		FROM unnest(ARRAY['b1', 'b2']) AS b, unnest(ARRAY['invoices', 'quotes', 'items']) AS r`)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `INSERT INTO mirror_reconcile (business, last_finished_at, resync_at, ready_at)
		VALUES ('b1', $1, NULL, now()), ('b2', $1 + interval '1 minute', $2, now()), ('b3', $1, NULL, NULL)`, last, resync)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `INSERT INTO mirror_budgets (business, tokens, paused_until) VALUES ('b1', 0, now() - interval '1 minute'), ('b3', 0, now() + interval '1 hour')`)
	require.NoError(t, err)

	states, err := pgmirror.WalkStatesForTest(ctx, db, schema, []string{"b1", "b2", "b3", "b4"}, 3, time.Hour)
	require.NoError(t, err)
	require.Len(t, states, 4)
	assert.True(t, states["b1"].Backfilled)
	assert.Equal(t, last.Add(time.Hour), states["b1"].Reconcile.UTC(), "the interval after the last")
	assert.Zero(t, states["b1"].Paused, "a pause that ended")
	assert.False(t, states["b2"].Backfilled, "a resource not backfilled")
	assert.Equal(t, resync, states["b2"].Reconcile.UTC(), "the resync asked for, before the interval")
	assert.Zero(t, states["b3"].Reconcile, "not ready")
	assert.InDelta(t, time.Hour.Seconds(), states["b3"].Paused.Seconds(), 60)
	assert.Equal(t, pgmirror.WalkStateForTest{}, states["b4"], "a business the tables do not know yet")
}
