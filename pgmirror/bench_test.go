package pgmirror_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// The figures of issue 18. Each benchmark reports its figure as a custom
// metric; run them with
//
//	go test -run '^$' -bench . -benchtime 1x ./pgmirror

// requestLatency is the network-like delay of every API request in the
// figures.
const requestLatency = 20 * time.Millisecond

// BenchmarkBackfill backfills 10,000 invoices (1 to 4 lines each) and the
// fake's seed data at 20 ms a request with WithPrefetch(8), batches of 500,
// and reports the invoices' walk in records/s against its bound: the same
// list walked with WithPrefetch(8), writing nothing, in the same run (the
// rate at which the fake serves pages at that latency).
func BenchmarkBackfill(b *testing.B) {
	const invoices = 10_000
	srv, _ := newFake(b)
	seed(b, srv, sizes{invoices: invoices}, 30, 31)
	srv.SetLatency(requestLatency, 0)
	c := srv.Client()
	var walk, bound, whole time.Duration
	for range b.N {
		start := time.Now()
		n := 0
		for _, err := range c.Invoices.List(context.Background(), nil, invoicing.WithPrefetch(pgmirror.DefaultPrefetch)) {
			require.NoError(b, err)
			n++
		}
		bound += time.Since(start)
		require.Equal(b, invoices, n)

		var mu sync.Mutex
		var began, ended time.Time
		cfg := testConfig(c, newSchemaName())
		cfg.BatchSize = pgmirror.DefaultBatchSize
		cfg.OnProgress = func(p pgmirror.Progress) {
			if p.Resource != pgmirror.Invoices {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if began.IsZero() {
				began = time.Now()
			}
			ended = time.Now()
		}
		m := openMirror(b, cfg)
		start = time.Now()
		require.NoError(b, m.Backfill(context.Background()))
		whole += time.Since(start)
		walk += ended.Sub(began)
	}
	perWalk := float64(invoices * b.N)
	b.ReportMetric(perWalk/walk.Seconds(), "records/s")
	b.ReportMetric(perWalk/bound.Seconds(), "bound-records/s")
	b.ReportMetric(bound.Seconds()/walk.Seconds(), "of-bound")
	b.ReportMetric(whole.Seconds()/float64(b.N), "s/backfill")
}

// BenchmarkLag sends 200 events a second for 5 seconds, each a payment to
// a different invoice, to a mirror with the default Workers, fetchers, poll
// interval and coalescing window (and with no window), Gets at 20 ms, and
// reports the time from the webhook's sending to the row's update
// (mirror_changed_at, the start of the writing transaction) as p50 and p99.
func BenchmarkLag(b *testing.B) {
	for _, c := range []struct {
		name   string
		window time.Duration
	}{{"coalesce=250ms", pgmirror.DefaultCoalesceWindow}, {"coalesce=none", -1}} {
		b.Run(c.name, func(b *testing.B) {
			var lags []time.Duration
			var rate float64
			for range b.N {
				l, r := measureLag(b, c.window, 1000, 200, false)
				lags, rate = append(lags, l...), r
			}
			slices.Sort(lags)
			b.ReportMetric(ms(lags[len(lags)/2]), "p50-ms")
			b.ReportMetric(ms(lags[len(lags)*99/100]), "p99-ms")
			b.ReportMetric(ms(lags[len(lags)-1]), "max-ms")
			b.ReportMetric(rate, "events/s")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// measureLag pays n invoices at perSecond and returns each payment's lag and
// the rate achieved; disableHistory sets Config.DisableHistory.
func measureLag(b *testing.B, window time.Duration, n, perSecond int, disableHistory bool) ([]time.Duration, float64) {
	srv, clock := newFake(b)
	seed(b, srv, sizes{invoices: 3 * n}, 32, 33)
	schema := newSchemaName()
	// The defaults: the budget adapts, and the fake never answers 429.
	cfg := pgmirror.Config{Client: srv.Client(), Schema: schema, Logger: testLogger(), CoalesceWindow: window, DisableHistory: disableHistory}
	m := openMirror(b, cfg)
	require.NoError(b, m.Backfill(context.Background()))
	var payable []string
	for inv, err := range srv.Client().Invoices.List(context.Background(), nil) {
		require.NoError(b, err)
		if inv.Status == invoicing.InvoiceStatusAwaitingPayment || inv.Status == invoicing.InvoiceStatusOverdue {
			payable = append(payable, inv.ID)
		}
	}
	require.GreaterOrEqual(b, len(payable), n)
	payable = payable[:n]
	hookUp(b, srv, clock, m)
	run(b, m)
	srv.SetLatency(requestLatency, 0)

	sent := make(map[string]time.Time, n)
	start := time.Now()
	for i, id := range payable {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(perSecond))))
		sent[id] = time.Now()
		_, err := srv.RecordPayment(id, invoicingtest.Payment{Amount: decimal.NewFromInt(1)}) // payment.received
		require.NoError(b, err)
	}
	rate := float64(n) / time.Since(start).Seconds()
	db := adminPool(b, schema)
	waitDrained(b, db, time.Minute)

	rows, err := db.Query(context.Background(), `SELECT id, mirror_changed_at FROM invoices WHERE id = ANY($1)`, payable)
	require.NoError(b, err)
	var lags []time.Duration
	for rows.Next() {
		var id string
		var changed time.Time
		require.NoError(b, rows.Scan(&id, &changed))
		lags = append(lags, changed.Sub(sent[id]))
	}
	require.NoError(b, rows.Err())
	require.Len(b, lags, n)
	return lags, rate
}

// BenchmarkReconcile20000Invoices reconciles a mirror of 20,000 invoices
// (and the fake's seed data), 200 of which changed without an event,
// at 20 ms a request with WithPrefetch(8), and reports the time one
// reconciliation takes.
func BenchmarkReconcile20000Invoices(b *testing.B) {
	const invoices = 20_000
	srv, _ := newFake(b)
	ids := seed(b, srv, sizes{invoices: invoices}, 34, 35)
	schema := newSchemaName()
	cfg := testConfig(srv.Client(), schema)
	cfg.BatchSize = pgmirror.DefaultBatchSize
	m := openMirror(b, cfg)
	require.NoError(b, m.Backfill(context.Background()))
	srv.SetLatency(requestLatency, 0)

	var took time.Duration
	corrected := 0
	for i := range b.N {
		for _, id := range ids["invoices"][i*200 : (i+1)*200] {
			notes := "changed without an event"
			require.NoError(b, srv.UpdateInvoice(id, invoicingtest.InvoiceUpdate{Notes: &notes}))
		}
		start := time.Now()
		n, err := m.Reconcile(context.Background())
		require.NoError(b, err)
		took += time.Since(start)
		corrected += n[pgmirror.Invoices]
	}
	require.Equal(b, 200*b.N, corrected)
	b.ReportMetric(took.Seconds()/float64(b.N), "s/reconciliation")
	b.ReportMetric(float64(invoices*b.N)/took.Seconds(), "invoices/s")
}

// BenchmarkBackfillChangeFeed backfills the same 10,000 invoices (1 to 4
// lines each, and the fake's seed data) with the change feed and without
// it (Config.DisableChangeFeed), alternately, in one run, and reports the
// whole backfill's records/s of each and their ratio: the feed's write
// overhead. At 20 ms a request (latency=20ms) the walk is bound by the
// API; with no latency (latency=0) by the database, the feed's worst case.
func BenchmarkBackfillChangeFeed(b *testing.B) {
	for _, latency := range []time.Duration{0, requestLatency} {
		b.Run("latency="+latency.String(), func(b *testing.B) {
			srv, _ := newFake(b)
			seed(b, srv, sizes{invoices: 10_000}, 36, 37)
			srv.SetLatency(latency, 0)
			records, with, without := alternateBackfills(b, srv, func(cfg *pgmirror.Config, feed bool) { cfg.DisableChangeFeed = !feed },
				func(db *pgxpool.Pool, feed bool, records int) {
					n := count(b, db, `SELECT count(*) FROM mirror_changes`)
					if feed {
						require.GreaterOrEqual(b, n, records)
					} else {
						require.Zero(b, n)
					}
				})
			per := float64(records * b.N)
			b.ReportMetric(per/with.Seconds(), "records/s-with-feed")
			b.ReportMetric(per/without.Seconds(), "records/s-without")
			b.ReportMetric(without.Seconds()/with.Seconds(), "with/without")
		})
	}
}

// alternateBackfills backfills srv into a new schema 2×b.N times, set by
// configure for one side and the other alternately (on first), calls check
// (when not nil) after each, with the records of every resource, and
// returns that number and the time each side's backfills took in all.
func alternateBackfills(b *testing.B, srv *invoicingtest.Server, configure func(cfg *pgmirror.Config, on bool),
	check func(db *pgxpool.Pool, on bool, records int)) (records int, on, off time.Duration) {
	for i := range 2 * b.N {
		side := i%2 == 0
		cfg := testConfig(srv.Client(), newSchemaName())
		cfg.BatchSize = pgmirror.DefaultBatchSize
		configure(&cfg, side)
		m := openMirror(b, cfg)
		start := time.Now()
		require.NoError(b, m.Backfill(context.Background()))
		took := time.Since(start)
		db := adminPool(b, cfg.Schema)
		if records == 0 {
			for _, res := range pgmirror.Resources() {
				records += count(b, db, `SELECT count(*) FROM `+res)
			}
		}
		if check != nil {
			check(db, side, records)
		}
		if side {
			on += took
		} else {
			off += took
		}
		m.Close()
	}
	return records, on, off
}

// BenchmarkHistory measures what the history costs, with it on and off in
// the same run, alternated: a backfill of 10,000 invoices (and the seed's
// other records) at no latency, records/s (a backfill inserts: it writes
// no history, only each row's mirror_valid_from); and the lag of 1,000
// payments at 200 a second (each an update that moves the invoice's
// version and its lines to the history), p50 and p99.
func BenchmarkHistory(b *testing.B) {
	b.Run("backfill", func(b *testing.B) {
		srv, _ := newFake(b)
		seed(b, srv, sizes{invoices: 10_000}, 30, 31)
		records, on, off := alternateBackfills(b, srv, func(cfg *pgmirror.Config, history bool) { cfg.DisableHistory = !history }, nil)
		per := float64(records * b.N)
		b.ReportMetric(per/on.Seconds(), "records/s-on")
		b.ReportMetric(per/off.Seconds(), "records/s-off")
		b.ReportMetric(off.Seconds()/on.Seconds(), "on/off")
	})
	b.Run("lag", func(b *testing.B) {
		lags := map[bool][]time.Duration{}
		for i := range 2 * b.N {
			history := i%2 == 0
			l, _ := measureLag(b, pgmirror.DefaultCoalesceWindow, 1000, 200, !history)
			lags[history] = append(lags[history], l...)
		}
		for _, history := range []bool{true, false} {
			l := lags[history]
			slices.Sort(l)
			name := map[bool]string{true: "on", false: "off"}[history]
			b.ReportMetric(ms(l[len(l)/2]), "p50-ms-"+name)
			b.ReportMetric(ms(l[len(l)*99/100]), "p99-ms-"+name)
		}
	})
}

// BenchmarkHistoryStorage reports the storage of 10,000 invoices with 10
// versions each (each changed 9 times, its notes, a reconciliation after
// each round writing them), in MiB: the invoices' table and the history's,
// each with its lines and indexes, compacted (VACUUM FULL); and the
// history's bytes per version (with its lines).
func BenchmarkHistoryStorage(b *testing.B) {
	const invoices, versions = 10_000, 10
	ctx := context.Background()
	for range b.N {
		srv, clock := newFake(b)
		ids := seed(b, srv, sizes{invoices: invoices}, 38, 39)
		cfg := testConfig(srv.Client(), newSchemaName())
		cfg.BatchSize = pgmirror.DefaultBatchSize
		cfg.Clock = clock.Now
		m := openMirror(b, cfg)
		require.NoError(b, m.Backfill(ctx))
		for round := range versions - 1 {
			clock.Advance(24 * time.Hour)
			for _, id := range ids["invoices"] {
				notes := fmt.Sprintf("version %d", round+2)
				require.NoError(b, srv.UpdateInvoice(id, invoicingtest.InvoiceUpdate{Notes: &notes}))
			}
			_, err := m.Reconcile(ctx)
			require.NoError(b, err)
		}
		db := adminPool(b, cfg.Schema)
		require.Equal(b, invoices*(versions-1), count(b, db, `SELECT count(*) FROM invoices_history WHERE id = ANY($1)`, ids["invoices"]))
		size := func(tables ...string) float64 {
			var total int64
			for _, t := range tables {
				var n int64
				require.NoError(b, db.QueryRow(ctx, `SELECT pg_total_relation_size($1::regclass)`, t).Scan(&n))
				total += n
			}
			return float64(total) / (1 << 20)
		}
		// Compacted: the updates left the current tables' dead versions
		// behind, which autovacuum reclaims for reuse in time.
		_, err := db.Exec(ctx, `VACUUM FULL invoices, invoice_lines, invoices_history, invoice_lines_history`)
		require.NoError(b, err)
		current, history := size("invoices", "invoice_lines"), size("invoices_history", "invoice_lines_history")
		b.ReportMetric(current, "MiB-current")
		b.ReportMetric(history, "MiB-history")
		b.ReportMetric(history/float64(invoices*(versions-1))*(1<<20), "B/version")
		m.Close()
	}
}

// BenchmarkSelectionBackfill backfills 10,000 invoices (and the seed's
// other records) at no latency with a Selection that leaves out three
// members (invoices' notes and lines' descriptions, clients' emails) and
// with none, alternated in one run: the cost of selecting each row (its raw
// JSON decoded and encoded again).
func BenchmarkSelectionBackfill(b *testing.B) {
	srv, _ := newFake(b)
	seed(b, srv, sizes{invoices: 10_000}, 30, 31)
	records, on, off := alternateBackfills(b, srv, func(cfg *pgmirror.Config, selected bool) {
		if selected {
			cfg.Selection = pgmirror.Selection{Exclude: []string{"invoices.notes", "invoices.line_items.description", "clients.email"}}
		}
	}, nil)
	per := float64(records * b.N)
	b.ReportMetric(per/on.Seconds(), "records/s-selected")
	b.ReportMetric(per/off.Seconds(), "records/s-everything")
	b.ReportMetric(off.Seconds()/on.Seconds(), "selected/everything")
}

// BenchmarkSelectionChange backfills 10,000 invoices (1 to 4 lines each,
// and the seed's other records) at no latency, keeping everything, then
// opens the mirror again leaving out three members (invoices' notes and
// lines' descriptions, clients' emails): its Migrate rewrites what the
// mirror holds (the rows, their lines, and the backfill's changes in the
// feed), in one transaction during which the business's writers wait. It
// reports the rewrite's time, the rows it rewrote (from its log line) and
// their rate, and the rewrite's time over the backfill's.
func BenchmarkSelectionChange(b *testing.B) {
	srv, _ := newFake(b)
	seed(b, srv, sizes{invoices: 10_000}, 30, 31)
	var backfill, rewrite time.Duration
	var rows int64
	for range b.N {
		cfg := testConfig(sdkClient(srv), newSchemaName())
		cfg.BatchSize = pgmirror.DefaultBatchSize
		m := openMirror(b, cfg)
		start := time.Now()
		require.NoError(b, m.Backfill(context.Background()))
		backfill += time.Since(start)

		var logs syncBuffer
		cfg.Logger = logs.logger()
		cfg.Selection = pgmirror.Selection{Exclude: []string{"invoices.notes", "invoices.line_items.description", "clients.email"}}
		start = time.Now()
		openMirror(b, cfg)
		rewrite += time.Since(start)
		got := regexp.MustCompile(`rows_rewritten=(\d+)`).FindStringSubmatch(logs.String())
		require.Len(b, got, 2, "the rewrite's log line")
		n, err := strconv.ParseInt(got[1], 10, 64)
		require.NoError(b, err)
		rows += n
	}
	b.ReportMetric(rewrite.Seconds()/float64(b.N), "s/rewrite")
	b.ReportMetric(float64(rows)/float64(b.N), "rows-rewritten")
	b.ReportMetric(float64(rows)/rewrite.Seconds(), "rows/s")
	b.ReportMetric(rewrite.Seconds()/backfill.Seconds(), "of-backfill")
}

// BenchmarkWalkStates times the walk loop's look at the businesses' walks
// (which are backfilled, which reconciliations are due, which paused),
// which it takes before it starts walks, after every walk that ends: at
// 1,000 and 10,000 businesses of 13 resources, every one backfilled and
// ready, a tenth of them paused.
func BenchmarkWalkStates(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("businesses=%d", n), func(b *testing.B) {
			schema, db := migratedSchema(b)
			ctx := context.Background()
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("business%05d", i)
			}
			for _, sql := range []string{
				`INSERT INTO mirror_backfill (business, resource, completed_at) SELECT b, r, now() FROM unnest($1::text[]) AS b,
					unnest(ARRAY['invoices', 'quotes', 'bills', 'clients', 'suppliers', 'items', 'accounts', 'tax_codes', 'bank_accounts',
					'bank_transactions', 'r11', 'r12', 'r13']) AS r`,
				`INSERT INTO mirror_reconcile (business, last_finished_at, ready_at) SELECT b, now(), now() FROM unnest($1::text[]) AS b`,
				`INSERT INTO mirror_budgets (business, tokens, paused_until) SELECT b, 0, CASE WHEN right(b, 1) = '7' THEN now() + interval '1 hour' END
					FROM unnest($1::text[]) AS b`,
			} {
				_, err := db.Exec(ctx, sql, names)
				require.NoError(b, err)
			}
			_, err := db.Exec(ctx, `ANALYZE mirror_backfill, mirror_reconcile, mirror_budgets`)
			require.NoError(b, err)
			b.ResetTimer()
			for range b.N {
				got, err := pgmirror.WalkStatesForTest(ctx, db, schema, names, 13, time.Hour)
				require.NoError(b, err)
				require.Len(b, got, n)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/look")
		})
	}
}
