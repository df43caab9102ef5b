package pgmirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// The figure of issue 32, item 1: the write limit of one PostgreSQL.
const (
	// limitStep is how long each rate of the ramp is held.
	limitStep = 3 * time.Second
	// limitLag is the event→row lag the p99 of a step must stay within.
	limitLag = time.Second
	// limitSustained is the share of its target rate a step must achieve
	// to count as sustained by the generator.
	limitSustained = 0.9
	// limitGenerators is how many goroutines fire events at once: firing
	// is synchronous (invoicingtest delivers the webhook before its helper
	// returns), so a rate needs several deliveries in flight.
	limitGenerators = 64
	// limitBudget is each business's budget, far above what a fake with
	// no latency is asked for: the budget never binds.
	limitBudget = 1e6
	// limitBareRuns is how many times the bare upserts run; their median
	// is the limit.
	limitBareRuns = 3
)

// limitRates are the target rates of the ramp, in events a second: each
// about √2 times the one before, so that the figure is known within 41%.
var limitRates = []int{125, 180, 250, 350, 500, 700, 1000, 1400, 2000, 2800, 4000, 5600, 8000}

// BenchmarkWriteLimit measures how many events a second one PostgreSQL
// takes through the mirror, against what it takes as bare upserts, at 1
// and at 1,000 businesses.
//
// The businesses (a fleet of fakes with no latency, each added with a
// budget of 1e6 requests a second; the mirror's other settings are the
// defaults, 16 fetchers, 4 Workers, a 250 ms coalescing window and 100 ms
// polls, but for 16 walkers, which only shorten the backfill) are
// backfilled; then events are fired at rising rates, 125, 180, 250, 350,
// 500 and so on (each about √2 times the last) to 8,000 a second, 3 s
// each. An event is an invoicingtest UpdateInvoice with new notes
// (invoice.updated) of an invoice no other event of the step names, spread
// round-robin over the businesses and fired from 64 goroutines paced to
// the rate (an event due while all 64 are still firing is skipped, and
// counted). An event's lag is from its firing (before UpdateInvoice, which
// delivers the webhook) to its row's mirror_changed_at (now() of the
// transaction that wrote its notes: the write's start; its commit follows
// within that transaction). The ramp stops at the first step whose lag p99
// exceeds 1 s (an event whose row is not written counts as late) or whose
// achieved rate is below 90% of its target; the mirror's figure,
// "events/s-at-p99≤1s", is the achieved rate of the step before (0 when
// the first fails).
//
// The limit, "bare-tx/s", is measured in the same run on the same server,
// once the mirror has drained and stopped: as many transactions as the
// ramp fired events, each one INSERT … ON CONFLICT (business, id) DO
// UPDATE of one event's invoice row (every column, with new notes in the
// column and in raw) into a copy of the invoices table holding the same
// rows (CREATE TABLE … (LIKE invoices INCLUDING ALL)), from as many
// connections as the mirror has fetchers; the median of 3 runs. "of-limit"
// is the one over the other. Each step is logged, with the mirror's own
// figures (the inbox's wait, mirror_event_lag).
//
// Both cases run in CI's pass of every benchmark: about 20 s and 1 min on
// 2 cores. With b.N above 1, each iteration mirrors the fleet in a new
// schema and the figures are the iterations' means.
func BenchmarkWriteLimit(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("businesses=%d", n), func(b *testing.B) {
			// Every step names distinct invoices: enough for the top rate.
			perBusiness := (limitRates[len(limitRates)-1]*int(limitStep/time.Second) + n - 1) / n
			built := time.Now()
			f := newFleet(b, n, withFleetSeed(func(fb *fleetBusiness) { seedBusiness(b, fb, perBusiness) }))
			b.Logf("a fleet of %d business(es) of %d invoices (and the rest) built in %v", n, perBusiness, time.Since(built).Round(time.Millisecond))
			b.ResetTimer()
			var rate, p99, bare float64
			for i := range b.N {
				r := measureWriteLimit(b, f, i)
				rate, p99, bare = rate+r.rate, p99+r.p99, bare+r.bare
			}
			runs := float64(b.N)
			b.ReportMetric(rate/runs, "events/s-at-p99≤1s")
			b.ReportMetric(p99/runs, "p99-ms-at-that-rate")
			b.ReportMetric(bare/runs, "bare-tx/s")
			b.ReportMetric(rate/bare, "of-limit")
		})
	}
}

// limitResult is what one run of measureWriteLimit found: the highest
// sustained rate with a lag p99 within limitLag, that step's p99 in ms, and
// the bare upserts a second.
type limitResult struct{ rate, p99, bare float64 }

// limitEvent is one event of the ramp: the invoice it changed, to which
// notes, and when it was fired.
type limitEvent struct {
	business, id, notes string
	fired               time.Time
}

// measureWriteLimit mirrors f's businesses in a new schema and measures
// the ramp and the bare upserts once (see BenchmarkWriteLimit); iteration
// makes the events' notes unique across iterations.
func measureWriteLimit(b *testing.B, f *fleet, iteration int) limitResult {
	ctx := context.Background()
	mm := newMultiMirror(b, f, keyring(b, newKeyText(b, "k1")), func(cfg *pgmirror.Config) {
		// The defaults, but for the budgets (each business's, below) and
		// the walkers, idle once the backfill is done.
		cfg.PollInterval, cfg.CoalesceWindow, cfg.FetchLease, cfg.BatchSize, cfg.Budget = 0, 0, 0, 0, 0
		cfg.Walkers = 16
	})
	var endpoints []*invoicingtest.WebhookEndpoint
	for _, fb := range f.Businesses {
		endpoints = append(endpoints, mm.add(b, fb, limitBudget))
	}
	defer func() { // a later iteration's mirror gets the events alone
		for _, ep := range endpoints {
			ep.Delete()
		}
	}()
	started := time.Now()
	stop := run(b, mm.Mirror)
	waitAllBackfilled(b, mm.DB, 10*time.Minute, len(f.Businesses))
	backfilled := time.Since(started)

	// Each business's invoices, in id order.
	servers := make(map[string]*invoicingtest.Server, len(f.Businesses))
	for _, fb := range f.Businesses {
		servers[fb.Name] = fb.Srv
	}
	pool := make([][]string, len(f.Businesses))
	for i, fb := range f.Businesses {
		rows, err := mm.DB.Query(ctx, `SELECT id FROM invoices WHERE business = $1 ORDER BY id`, fb.Name)
		require.NoError(b, err)
		for rows.Next() {
			var id string
			require.NoError(b, rows.Scan(&id))
			pool[i] = append(pool[i], id)
		}
		require.NoError(b, rows.Err())
	}

	// The log: a line for the ramp, one for each of its last two steps
	// (go test keeps 10 lines of a benchmark's log), one for the rest.
	var res limitResult
	var fired []limitEvent
	var ramp []string
	var last, failed string
	for step, rate := range limitRates {
		began := time.Now()
		events, achieved, skipped := fireLimitStep(b, f, servers, pool, rate, fmt.Sprintf("limit %d.%d", iteration, step))
		fired = append(fired, events...)
		lags, written := limitLags(b, mm.DB, events)
		p50, p99 := lags[len(lags)/2], lags[len(lags)*99/100]
		passed := achieved >= limitSustained*float64(rate) && p99 <= limitLag
		ramp = append(ramp, fmt.Sprintf("%d→%.0f/s p99 %s", rate, achieved, limitDuration(p99)))
		detail := fmt.Sprintf("target %d/s: %d events fired (%d skipped, every generator busy), %.0f/s; %d rows written; lag p50 %s, p99 %s; %s",
			rate, len(events), skipped, achieved, written, limitDuration(p50), limitDuration(p99), mirrorLags(b, mm.DB, began))
		if !passed {
			failed = "failed " + detail
			break
		}
		last = "passed " + detail
		res.rate, res.p99 = achieved, ms(p99)
		waitDrained(b, mm.DB, time.Minute)
	}
	drained := time.Now()
	waitDrained(b, mm.DB, 10*time.Minute) // the backlog of the failed step
	stop()
	drainTook := time.Since(drained)
	b.Logf("ramp (target→achieved, lag p99): %s", strings.Join(ramp, ", "))
	for _, line := range []string{last, failed} {
		if line != "" {
			b.Log(line)
		}
	}

	res.bare = bareUpserts(b, mm.Schema, pgmirror.DefaultFetchers, fired)
	b.Logf("backfilled in %v; drained and stopped %v after the ramp; bare: %d upserts, one a transaction, on %d connections: %.0f/s",
		backfilled.Round(time.Millisecond), drainTook.Round(time.Millisecond), len(fired), pgmirror.DefaultFetchers, res.bare)
	return res
}

// mirrorLags describes, for the log, the mirror's own figures of the
// writes since began: the inbox's wait (a delivery's storing to its
// processing) and mirror_event_lag (its storing to its row's write), p50
// and p99, so that a step's lag can be placed.
func mirrorLags(b *testing.B, db *pgxpool.Pool, began time.Time) string {
	var inbox50, inbox99, event50, event99 *float64
	require.NoError(b, db.QueryRow(context.Background(), `WITH w AS (
		SELECT extract(epoch FROM processed_at - received_at)::float8 AS s FROM invoicing_webhook_inbox
		WHERE received_at >= $1 AND processed_at IS NOT NULL
	), l AS (SELECT lag_seconds AS s FROM mirror_event_lag WHERE written_at >= $1)
	SELECT (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FROM w), (SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY s) FROM w),
		(SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FROM l), (SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY s) FROM l)`,
		began).Scan(&inbox50, &inbox99, &event50, &event99))
	seconds := func(s *float64) string {
		if s == nil {
			return "-"
		}
		return (time.Duration(*s * float64(time.Second))).Round(time.Millisecond).String()
	}
	return fmt.Sprintf("so far the inbox's wait p50 %s, p99 %s; mirror_event_lag p50 %s, p99 %s",
		seconds(inbox50), seconds(inbox99), seconds(event50), seconds(event99))
}

// fireLimitStep fires rate events a second for limitStep: the i-th event
// is due i/rate seconds in and changes the notes (to prefix and i) of the
// (i/N)-th invoice of business i%N. It returns the events fired, the rate
// achieved (events over the time until the last one returned) and how many
// were skipped because every generator was busy when they fell due.
func fireLimitStep(b *testing.B, f *fleet, servers map[string]*invoicingtest.Server, pool [][]string, rate int, prefix string) ([]limitEvent, float64, int) {
	total := rate * int(limitStep/time.Second)
	n := len(f.Businesses)
	events := make([]limitEvent, total)
	jobs := make(chan int)
	var failed atomic.Pointer[error]
	var wg, ready sync.WaitGroup
	ready.Add(limitGenerators)
	for range limitGenerators {
		wg.Go(func() {
			ready.Done()
			for i := range jobs {
				e := &events[i]
				e.business, e.id, e.notes = f.Businesses[i%n].Name, pool[i%n][i/n], fmt.Sprintf("%s.%d", prefix, i)
				e.fired = time.Now()
				if err := servers[e.business].UpdateInvoice(e.id, invoicingtest.InvoiceUpdate{Notes: &e.notes}); err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	ready.Wait()
	skipped := 0
	start := time.Now()
	for i := range total {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate)))) // the pacing
		select {
		case jobs <- i:
		default:
			skipped++
		}
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)
	if err := failed.Load(); err != nil {
		require.NoError(b, *err, "firing an event")
	}
	return slices.DeleteFunc(events, func(e limitEvent) bool { return e.fired.IsZero() }),
		float64(total-skipped) / elapsed.Seconds(), skipped
}

// limitLags waits until every event's row holds its notes, or until the
// events certainly late (written more than limitLag after their firing,
// or not written limitLag after it) make the p99 exceed limitLag, and
// returns every event's lag, sorted, an event not written counting as
// infinitely late, and how many were written. Each look reads only the
// rows of the events not yet seen written.
func limitLags(b *testing.B, db *pgxpool.Pool, events []limitEvent) ([]time.Duration, int) {
	ctx := context.Background()
	lags := make([]time.Duration, len(events))
	pending := make([]int, len(events))
	for i := range events {
		lags[i], pending[i] = math.MaxInt64, i
	}
	allowed := len(events) - len(events)*99/100 // late events at which the p99 is late
	lateWritten := 0
	waitUntil(b, 5*time.Minute, func() (bool, string) {
		businesses, ids, notes, fired := make([]string, len(pending)), make([]string, len(pending)), make([]string, len(pending)), make([]time.Time, len(pending))
		for k, i := range pending {
			e := events[i]
			businesses[k], ids[k], notes[k], fired[k] = e.business, e.id, e.notes, e.fired
		}
		now := time.Now()
		rows, err := db.Query(ctx, `SELECT c.k::int, extract(epoch FROM i.mirror_changed_at - c.fired)::float8
			FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) WITH ORDINALITY AS c(business, id, notes, fired, k)
			JOIN invoices AS i ON i.business = c.business AND i.id = c.id AND i.notes = c.notes`,
			businesses, ids, notes, fired)
		if err != nil {
			return false, err.Error()
		}
		seen := map[int]bool{}
		for rows.Next() {
			var k int
			var s float64
			if err := rows.Scan(&k, &s); err != nil {
				rows.Close()
				return false, err.Error()
			}
			i := pending[k-1]
			seen[i], lags[i] = true, time.Duration(s*float64(time.Second))
			if lags[i] > limitLag {
				lateWritten++
			}
		}
		if err := rows.Err(); err != nil {
			return false, err.Error()
		}
		pending = slices.DeleteFunc(pending, func(i int) bool { return seen[i] })
		late := lateWritten
		for _, i := range pending {
			if now.Sub(events[i].fired) > limitLag {
				late++
			}
		}
		return len(pending) == 0 || late >= allowed,
			fmt.Sprintf("%d of %d events' rows written, %d certainly late", len(events)-len(pending), len(events), late)
	})
	slices.Sort(lags)
	return lags, len(events) - len(pending)
}

// limitDuration prints a lag, "never" for an event not written.
func limitDuration(d time.Duration) string {
	if d == math.MaxInt64 {
		return "∞ (not written)"
	}
	return d.Round(time.Millisecond).String()
}

// bareUpserts copies the invoices table of schema (its columns, indexes
// and rows) to limit_bare, then upserts there, in a transaction each and
// from conns connections at once, the row of each event's invoice as the
// mirror holds it, with new notes (the column and raw's member), and
// returns the transactions a second.
func bareUpserts(b *testing.B, schema string, conns int, events []limitEvent) float64 {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(postgresOf(schema).URL)
	require.NoError(b, err)
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.MaxConns, cfg.MinConns = int32(conns), int32(conns)
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(b, err)
	defer db.Close()

	_, err = db.Exec(ctx, `CREATE TABLE limit_bare (LIKE invoices INCLUDING ALL);
		INSERT INTO limit_bare SELECT * FROM invoices; ANALYZE limit_bare`)
	require.NoError(b, err)
	var names, types []string
	rows, err := db.Query(ctx, `SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = 'invoices'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`)
	require.NoError(b, err)
	for rows.Next() {
		var name, typ string
		require.NoError(b, rows.Scan(&name, &typ))
		names, types = append(names, name), append(types, typ)
	}
	require.NoError(b, rows.Err())
	var params, sets, texts []string
	for i, name := range names {
		params = append(params, fmt.Sprintf("$%d::text::%s", i+1, types[i]))
		texts = append(texts, name+"::text")
		if name != "business" && name != "id" {
			sets = append(sets, name+" = EXCLUDED."+name)
		}
	}
	upsert := `INSERT INTO limit_bare (` + strings.Join(names, ", ") + `) VALUES (` + strings.Join(params, ", ") +
		`) ON CONFLICT (business, id) DO UPDATE SET ` + strings.Join(sets, ", ")

	// Every event's row, as text, before the clock starts.
	current := map[[2]string][]*string{}
	rows, err = db.Query(ctx, `SELECT `+strings.Join(texts, ", ")+` FROM invoices`)
	require.NoError(b, err)
	for rows.Next() {
		row := make([]*string, len(names))
		dest := make([]any, len(names))
		for i := range row {
			dest[i] = &row[i]
		}
		require.NoError(b, rows.Scan(dest...))
		current[[2]string{*row[slices.Index(names, "business")], *row[slices.Index(names, "id")]}] = row
	}
	require.NoError(b, rows.Err())
	rates := make([]float64, limitBareRuns)
	for r := range rates {
		args := bareArgs(b, names, current, events, r)
		rates[r] = timeUpserts(b, db, conns, upsert, args)
	}
	slices.Sort(rates)
	return rates[len(rates)/2]
}

// bareArgs are the arguments of the bare upsert of each event's row, the
// rows being current (as text, by business and id, in the order of the
// columns names): the row with the notes "bare run.k" for the k-th event,
// in the column and in raw.
func bareArgs(b *testing.B, names []string, current map[[2]string][]*string, events []limitEvent, run int) [][]any {
	args := make([][]any, len(events))
	for k, e := range events {
		row := current[[2]string{e.business, e.id}]
		require.NotNil(b, row, "the row of invoice %s of %s", e.id, e.business)
		notes := fmt.Sprintf("bare %d.%d", run, k)
		var raw map[string]json.RawMessage // the other members as they are
		require.NoError(b, json.Unmarshal([]byte(*row[slices.Index(names, "raw")]), &raw))
		quoted, err := json.Marshal(notes)
		require.NoError(b, err)
		raw["notes"] = quoted
		rawText, err := json.Marshal(raw)
		require.NoError(b, err)
		args[k] = make([]any, len(names))
		for i, v := range row {
			switch {
			case names[i] == "notes":
				args[k][i] = notes
			case names[i] == "raw":
				args[k][i] = string(rawText)
			case v != nil:
				args[k][i] = *v
			}
		}
	}
	return args
}

// timeUpserts runs upsert once with each of args, from conns goroutines
// on db, and returns the upserts a second.
func timeUpserts(b *testing.B, db *pgxpool.Pool, conns int, upsert string, args [][]any) float64 {
	ctx := context.Background()
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Go(func() {
			for k := int(next.Add(1) - 1); k < len(args); k = int(next.Add(1) - 1) {
				if _, err := db.Exec(ctx, upsert, args[k]...); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := failed.Load(); err != nil {
		require.NoError(b, *err, "a bare upsert")
	}
	return float64(len(args)) / elapsed.Seconds()
}
