package pgmirror_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// BenchmarkHistory measures what the history costs, with it on and off in
// the same run, alternated: a backfill of 10,000 invoices (and the seed's
// other records) at no latency, records/s (a backfill inserts: it writes
// no history, only each row's mirror_valid_from); and the lag of 1,000
// payments at 200 a second (each an update that moves the invoice's
// version and its lines to the history), p50 and p99.
func BenchmarkHistory(b *testing.B) {
	b.Run("backfill", func(b *testing.B) {
		srv, _ := newFake(b)
		seed(b, srv, sizes{invoices: 10_000}, rand.New(rand.NewPCG(30, 31)))
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
		ids := seed(b, srv, sizes{invoices: invoices}, rand.New(rand.NewPCG(38, 39)))
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
	seed(b, srv, sizes{invoices: 10_000}, rand.New(rand.NewPCG(30, 31)))
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
	seed(b, srv, sizes{invoices: 10_000}, rand.New(rand.NewPCG(30, 31)))
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
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
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
