package pgmirror_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// The figures of issue 25 (items 5 and 7), measured on three
// invoicing-mirror processes against the package's PostgreSQL and a fleet
// of fake businesses at 20 ms a request.
const (
	scaleReplicas       = 3
	scaleBudget         = 10.0 // requests a second, per business
	scaleReconcileEvery = time.Minute
	scaleMaxConns       = 40 // connections a replica may hold (issue 25, item 5)
	scaleLoadFor        = 30 * time.Second
	scaleStall          = 2 * time.Minute // no progress of the backfill for this long fails the test
)

// TestScaleManyBusinesses measures what issue 25 asks at scale, and checks
// its bounds:
//
//  1. 1,000 businesses of 200 invoices on three invoicing-mirror processes
//     (multi-business mode, each business added with a budget of 10
//     requests a second): the time until every business is backfilled
//     (businesses a minute), every business exact (a random sample of 100
//     compared field for field with the service, and every business's row
//     counts equal to theirs), each replica's peak connections (at most
//     40, sampled every 500 ms) and peak RSS, and how the reconciliations
//     of the interval after the backfill spread over it.
//  2. 100 businesses in a new schema, their webhooks balanced round-robin
//     over three new processes: the event→row lag p50 and p99, overall and
//     of the worst business, at 200 invoices created a second for 30 s.
//  3. Each business's requests during its backfill against its budget:
//     over the whole backfill (the token bucket's rate×span + burst) and in
//     its busiest 10 seconds (rate×10).
//
// It runs only with PGMIRROR_SCALE=1 and without -short. Settings in the
// environment change its sizes: PGMIRROR_SCALE_BUSINESSES (1,000),
// PGMIRROR_SCALE_INVOICES (200 a business), PGMIRROR_SCALE_WALKERS (each
// process's --walkers, 8), PGMIRROR_SCALE_SAMPLE (100),
// PGMIRROR_SCALE_LAG_BUSINESSES (100), PGMIRROR_SCALE_EVENT_RATE (200 a
// second) and PGMIRROR_SCALE_PARTITIONS (--partitions, 0). Issue 32's
// figure is 10,000 businesses of 50 invoices, a sample of 200, 500 events
// a second over 1,000 businesses, 16 partitions.
func TestScaleManyBusinesses(t *testing.T) {
	t.Parallel()
	needScale(t, "mirror 1,000 businesses on three invoicing-mirror processes")
	n := scaleSetting(t, "PGMIRROR_SCALE_BUSINESSES", 1000)
	walkers := scaleSetting(t, "PGMIRROR_SCALE_WALKERS", 8)
	invoices := scaleSetting(t, "PGMIRROR_SCALE_INVOICES", 200)
	sz := scaleSizes{
		sample:     scaleSetting(t, "PGMIRROR_SCALE_SAMPLE", 100),
		lag:        scaleSetting(t, "PGMIRROR_SCALE_LAG_BUSINESSES", 100),
		rate:       scaleSetting(t, "PGMIRROR_SCALE_EVENT_RATE", 200),
		partitions: scaleSetting(t, "PGMIRROR_SCALE_PARTITIONS", 0),
		walkers:    walkers,
	}
	ctx := context.Background()
	var figures scaleFigures
	defer func() { t.Logf("figures of TestScaleManyBusinesses:\n%s", figures.String()) }()

	built := time.Now()
	f := newFleet(t, n, withFleetLatency(20*time.Millisecond, 0),
		withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, invoices) }))
	keyText := newKeyText(t, "k1")
	keys := keyring(t, keyText)
	figures.add("machine: %d CPUs; fleet of %d businesses × %d invoices built in %v", runtime.NumCPU(), n, invoices,
		time.Since(built).Round(time.Second))

	// 1. Onboarding n businesses.
	schema := scaleSchema(t, f, keys, sz.partitions)
	db := adminPool(t, schema)
	var maxConns int
	require.NoError(t, db.QueryRow(ctx, `SELECT current_setting('max_connections')::int`).Scan(&maxConns))
	require.GreaterOrEqual(t, maxConns, scaleReplicas*scaleMaxConns/2, "PostgreSQL's max_connections")
	added := time.Now()
	for _, b := range f.Businesses {
		require.NoError(t, pgmirror.NewBusinesses(db, schema, keys).Add(ctx, pgmirror.BusinessConfig{
			Name: b.Name, APIKey: b.Key, WebhookSecrets: []string{secretOf(b.Name)}, Budget: scaleBudget}))
	}
	figures.add("%d businesses added with the package API in %v (budget %g requests/s each)", n,
		time.Since(added).Round(time.Millisecond), scaleBudget)

	args := append(sz.args(schema), "--reconcile-interval", scaleReconcileEvery.String())
	start := time.Now()
	replicas := scaleStartReplicas(t, f.URL, keyText, "replica", args)
	conns := scaleSampleConnections(t, db, replicas)
	done := scaleWaitBackfilled(t, db, n, max(20*time.Minute, time.Duration(n)*200*time.Millisecond))
	backfilled := time.Since(start)
	figures.add("onboarding: %d businesses ready (backfilled) by %d processes (--walkers %d) in %v: %.0f businesses/minute",
		n, scaleReplicas, walkers, backfilled.Round(time.Second), float64(n)/backfilled.Minutes())
	var firstDone, lastDone time.Time
	for _, at := range done {
		if firstDone.IsZero() || at.Before(firstDone) {
			firstDone = at
		}
		if at.After(lastDone) {
			lastDone = at
		}
	}
	figures.add("  first business backfilled %v after the start, last %v", firstDone.Sub(start).Round(time.Millisecond),
		lastDone.Sub(start).Round(time.Millisecond))

	// 3. Each business's requests during its backfill, against its budget.
	scaleRates(t, f, done, &figures)

	// Reconciliations over the interval after the backfill.
	window := time.Now()
	time.Sleep(time.Until(window.Add(scaleReconcileEvery + 5*time.Second)))
	scaleReconciliations(t, db, window, &figures)

	// Exact: a sample field for field, and every business's row counts.
	scaleExact(t, f, db, sz.sample, &figures)

	peaks := conns()
	for _, r := range replicas {
		figures.add("%s: peak %d connections (sampled every 500 ms), peak RSS %s", r.name, peaks[r.name], r.peakRSS(t))
		assert.Positive(t, peaks[r.name], "%s's connections are seen in pg_stat_activity", r.name)
		assert.LessOrEqual(t, peaks[r.name], scaleMaxConns, "%s's peak connections", r.name)
	}
	for _, r := range replicas {
		figures.add("%s: %d log lines, %d at WARN, %d at ERROR", r.name, r.lines.Load(), r.warns.Load(), r.errors.Load())
		r.stop(t)
	}

	// 2. Lag at load, in a new schema: 100 businesses behind a balancer.
	scaleLag(t, f, keys, keyText, sz, &figures)
}

// needScale skips t unless PGMIRROR_SCALE=1 is set and -short is not:
// what says what the test does at that size.
func needScale(t *testing.T, what string) {
	t.Helper()
	if testing.Short() || os.Getenv("PGMIRROR_SCALE") != "1" {
		t.Skip("set PGMIRROR_SCALE=1 (and no -short) to " + what)
	}
}

// scaleSetting is the positive integer in the environment variable name,
// or def when it is unset.
func scaleSetting(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, name)
	require.Positive(t, n, name)
	return n
}

// scaleFigures collects the lines the test logs in one block at its end.
type scaleFigures struct{ testkit.Buffer }

// add adds a line.
func (s *scaleFigures) add(format string, args ...any) { fmt.Fprintf(&s.Buffer, format+"\n", args...) }

// scaleSizes are the sizes of TestScaleManyBusinesses that its settings
// change (see there).
type scaleSizes struct {
	sample, lag, rate, partitions, walkers int
}

// args are the flags of a replica of schema.
func (sz scaleSizes) args(schema string) []string {
	return []string{"--schema", schema, "--walkers", strconv.Itoa(sz.walkers), "--partitions", strconv.Itoa(sz.partitions), "--log-level", "info"}
}

// scaleSchema migrates a new multi-business schema of partitions and
// returns its name.
func scaleSchema(t *testing.T, f *fleet, keys *pgmirror.Keyring, partitions int) string {
	t.Helper()
	schema := newSchemaName()
	cfg := testConfig(f.Client(t), schema)
	cfg.Keys = keys
	cfg.Partitions = partitions
	openMirror(t, cfg)
	return schema
}

// scaleReplica is an invoicing-mirror process serving the businesses of a
// schema; it keeps the last lines of its log.
type scaleReplica struct {
	name string
	cmd  *exec.Cmd
	base string // http://host:port of its webhook endpoint
	done chan error

	lines, warns, errors atomic.Int64
	mu                   sync.Mutex
	last                 []string // its last lines, at most scaleLogLines
}

const scaleLogLines = 40

var scaleListening = regexp.MustCompile(`webhook endpoint listening" addr=(\S+)`)

// scaleStartReplicas starts scaleReplicas invoicing-mirror processes,
// named prefix1, prefix2, ... (also their connections' application_name),
// with args, serving the businesses sealed with keyText, and waits until
// each listens.
func scaleStartReplicas(t *testing.T, baseURL, keyText, prefix string, args []string) []*scaleReplica {
	t.Helper()
	var out []*scaleReplica
	for i := range scaleReplicas {
		name := fmt.Sprintf("%s%d", prefix, i+1)
		cmd := exec.Command(mirrorBinary(t), append([]string{"--listen", "127.0.0.1:0"}, args...)...)
		cmd.Env = append(os.Environ(), "INVOICING_BASE_URL="+baseURL, pgmirror.EnvKeys+"="+keyText,
			"DATABASE_URL="+server.URL+"&application_name="+name)
		stderr, err := cmd.StderrPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		r := &scaleReplica{name: name, cmd: cmd, done: make(chan error, 1)}
		found := make(chan string, 1)
		go r.read(stderr, found)
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			if t.Failed() {
				t.Logf("%s's last log lines:\n%s", name, r.tail())
			}
		})
		select {
		case r.base = <-found:
		case err := <-r.done:
			t.Fatalf("%s exited before listening (%v):\n%s", name, err, r.tail())
		case <-time.After(30 * time.Second):
			t.Fatalf("%s not listening after 30s:\n%s", name, r.tail())
		}
		out = append(out, r)
	}
	return out
}

// read reads the process's log to its end, then waits for the process.
func (r *scaleReplica) read(stderr io.Reader, found chan<- string) {
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		r.lines.Add(1)
		switch {
		case strings.Contains(line, "level=WARN"):
			r.warns.Add(1)
		case strings.Contains(line, "level=ERROR"):
			r.errors.Add(1)
		}
		r.mu.Lock()
		r.last = append(r.last, line)
		if len(r.last) > 2*scaleLogLines {
			r.last = slices.Clone(r.last[len(r.last)-scaleLogLines:])
		}
		r.mu.Unlock()
		if m := scaleListening.FindStringSubmatch(line); m != nil {
			select {
			case found <- "http://" + m[1]:
			default:
			}
		}
	}
	_, _ = io.Copy(io.Discard, stderr)
	r.done <- r.cmd.Wait()
}

// tail returns the last lines of the process's log.
func (r *scaleReplica) tail() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.last[max(0, len(r.last)-scaleLogLines):], "\n")
}

// peakRSS reads the process's peak resident set (VmHWM) while it runs.
func (r *scaleReplica) peakRSS(t *testing.T) string {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			require.NoError(t, err, line)
			return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", r.cmd.Process.Pid)
	return ""
}

// stop sends SIGTERM and checks that the process exits with status 0
// within a minute.
func (r *scaleReplica) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-r.done:
		require.NoError(t, err, "%s's exit after SIGTERM:\n%s", r.name, r.tail())
	case <-time.After(time.Minute):
		t.Fatalf("%s did not stop within a minute of SIGTERM:\n%s", r.name, r.tail())
	}
}

// scaleSampleConnections counts each replica's connections in pg_stat_activity
// (by application_name) every 500 ms until the returned function is
// called; that returns each replica's peak.
func scaleSampleConnections(t *testing.T, db *pgxpool.Pool, replicas []*scaleReplica) func() map[string]int {
	t.Helper()
	names := make([]string, len(replicas))
	for i, r := range replicas {
		names[i] = r.name
	}
	peaks := map[string]int{}
	stop := testkit.Every(t, 500*time.Millisecond, func() {
		rows, err := db.Query(context.Background(), `SELECT application_name, count(*)::int FROM pg_stat_activity
			WHERE application_name = ANY($1) GROUP BY application_name`, names)
		if err != nil {
			return
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var n int
			if rows.Scan(&name, &n) == nil {
				peaks[name] = max(peaks[name], n)
			}
		}
	})
	return func() map[string]int {
		stop()
		return peaks
	}
}

// scaleWaitBackfilled waits until n businesses are ready in db's schema
// (their first complete copy recorded: every resource backfilled, and a
// round that found them so, which makes the first reconciliation due),
// logging the progress every 30 s, and returns when each business became
// ready. It fails after timeout, or sooner when neither a resource's
// backfill completed nor a business became ready for scaleStall.
func scaleWaitBackfilled(t *testing.T, db *pgxpool.Pool, n int, timeout time.Duration) map[string]time.Time {
	t.Helper()
	start, logged := time.Now(), time.Now()
	resources, progressed := -1, time.Now()
	for {
		if now := count(t, db, `SELECT (SELECT count(completed_at) FROM mirror_backfill) + (SELECT count(ready_at) FROM mirror_reconcile)`); now != resources {
			resources, progressed = now, time.Now()
		} else if time.Since(progressed) > scaleStall {
			t.Fatalf("no backfill of a resource completed and no business became ready for %v (%d resources and ready businesses of %d); %d advisory locks held, %d connections of the replicas idle",
				scaleStall, resources, n, count(t, db, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'`),
				count(t, db, `SELECT count(*) FROM pg_stat_activity WHERE state = 'idle' AND application_name <> ''`))
		}
		rows, err := db.Query(context.Background(), `SELECT business, ready_at FROM mirror_reconcile WHERE ready_at IS NOT NULL`)
		require.NoError(t, err)
		done := map[string]time.Time{}
		for rows.Next() {
			var name string
			var at time.Time
			require.NoError(t, rows.Scan(&name, &at))
			done[name] = at
		}
		require.NoError(t, rows.Err())
		if len(done) >= n {
			return done
		}
		if time.Since(start) > timeout {
			t.Fatalf("after %v, %d of %d businesses ready", timeout, len(done), n)
		}
		if time.Since(logged) >= 30*time.Second {
			t.Logf("%v: %d of %d businesses ready", time.Since(start).Round(time.Second), len(done), n)
			logged = time.Now()
		}
		time.Sleep(time.Second)
	}
}

// scaleRates checks that each business's requests during its backfill
// (those the fleet received until its backfill completed) stay within its
// budget: at most rate×span + burst over the backfill (to within 5%), and
// at most rate×10 + burst in any 10 seconds (to within 5%).
func scaleRates(t *testing.T, f *fleet, done map[string]time.Time, figures *scaleFigures) {
	t.Helper()
	burst := max(scaleBudget, 1)
	const window = 10 * time.Second
	worstSpan, worstWindow := 0.0, 0.0
	var spanOf, windowOf string
	var requests, businesses int
	for _, b := range f.Businesses {
		end, ok := done[b.Name]
		require.True(t, ok, b.Name)
		times := f.RequestTimes(b.Name)
		times = times[:countBefore(times, end)]
		if len(times) == 0 {
			continue
		}
		requests += len(times)
		businesses++
		span := times[len(times)-1].Sub(times[0]).Seconds()
		if r := float64(len(times)) / (scaleBudget*span + burst); r > worstSpan {
			worstSpan, spanOf = r, fmt.Sprintf("%s: %d requests in %.1f s", b.Name, len(times), span)
		}
		busiest, lo := 0, 0
		for hi := range times {
			for times[hi].Sub(times[lo]) >= window {
				lo++
			}
			busiest = max(busiest, hi-lo+1)
		}
		if r := float64(busiest) / (scaleBudget * window.Seconds()); r > worstWindow {
			worstWindow, windowOf = r, fmt.Sprintf("%s: %d requests", b.Name, busiest)
		}
	}
	require.Positive(t, businesses, "requests seen during the backfills")
	figures.add("budget: %d requests during the backfills, %.1f a business; worst requests/(budget×span + burst) %.3f (%s)",
		requests, float64(requests)/float64(businesses), worstSpan, spanOf)
	figures.add("budget: worst busiest 10 s / (budget×10 s) %.3f (%s; the bucket allows (budget×10 + burst)/(budget×10) = %.2f)",
		worstWindow, windowOf, (scaleBudget*window.Seconds()+burst)/(scaleBudget*window.Seconds()))
	assert.LessOrEqual(t, worstSpan, 1.05, "a business's requests over its backfill against its budget")
	assert.LessOrEqual(t, worstWindow, 1.05*(scaleBudget*window.Seconds()+burst)/(scaleBudget*window.Seconds()),
		"a business's busiest 10 seconds against its budget")
}

// countBefore is how many of times (sorted) are not after end.
func countBefore(times []time.Time, end time.Time) int {
	i, _ := slices.BinarySearchFunc(times, end, func(a, b time.Time) int {
		if a.After(b) {
			return 1
		}
		return -1
	})
	return i
}

// scaleReconciliations reads when each business's last reconciliation
// started and logs, in 10-second buckets, those that started in the
// interval from since: spread over it, no bucket holds more than twice the
// mean.
func scaleReconciliations(t *testing.T, db *pgxpool.Pool, since time.Time, figures *scaleFigures) {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT b.name, r.last_started_at, r.last_finished_at
		FROM mirror_businesses AS b LEFT JOIN mirror_reconcile AS r ON r.business = b.name`)
	require.NoError(t, err)
	const bucket = 10 * time.Second
	buckets := make([]int, scaleReconcileEvery/bucket)
	var never, before, after, inWindow int
	var took time.Duration
	for rows.Next() {
		var name string
		var started, finished *time.Time
		require.NoError(t, rows.Scan(&name, &started, &finished))
		switch {
		case started == nil:
			never++
		case started.Before(since):
			before++
		case !started.Before(since.Add(scaleReconcileEvery)):
			after++
		default:
			buckets[started.Sub(since)/bucket]++
			inWindow++
			if finished != nil && finished.After(*started) {
				took += finished.Sub(*started)
			}
		}
	}
	require.NoError(t, rows.Err())
	mean := float64(inWindow) / float64(len(buckets))
	peak := slices.Max(buckets)
	figures.add("reconciliations (--reconcile-interval %v) started in the interval after the backfill: %d (%d last started before it, %d after, %d never); "+
		"10 s buckets %v: max %d vs mean %.1f (%.2f×); a reconciliation took %v on average",
		scaleReconcileEvery, inWindow, before, after, never, buckets, peak, mean, float64(peak)/mean,
		(took / time.Duration(max(inWindow, 1))).Round(time.Millisecond))
	if inWindow == 0 {
		figures.add("reconciliations: mirror_reconcile holds %d rows (one is made when a business's backfill completes)",
			count(t, db, `SELECT count(*) FROM mirror_reconcile`))
	}
	if assert.Positive(t, inWindow, "reconciliations started in the interval after the backfill") {
		assert.LessOrEqual(t, float64(peak), 2*mean, "the reconciliations are spread over the interval")
	}
}

// scaleExact compares a random sample of n businesses with the
// service field for field, then checks that every business holds as many
// rows in each table as the sample (seedBusiness gives every business the
// same number of records of each resource).
func scaleExact(t *testing.T, f *fleet, db *pgxpool.Pool, n int, figures *scaleFigures) {
	t.Helper()
	started := time.Now()
	rng := rand.New(rand.NewPCG(25, 5))
	sample := rng.Perm(len(f.Businesses))[:min(n, len(f.Businesses))]
	records := 0
	for _, i := range sample {
		b := f.Businesses[i]
		diffs, n := compareScope(t, scope{URL: f.URL, Key: b.Key, Business: b.Name}, db)
		if len(diffs) > 20 {
			diffs = diffs[:20]
		}
		require.Empty(t, diffs, "business %s differs from the service", b.Name)
		records += n
	}
	figures.add("exact: %d businesses picked at random equal to the service field for field (%d records) in %v",
		len(sample), records, time.Since(started).Round(time.Millisecond))

	ctx := context.Background()
	var tables []string
	for _, table := range pgmirror.Resources() {
		var distinct []int
		var businesses int
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*)::int, coalesce(array_agg(DISTINCT n), '{}') FROM
			(SELECT business, count(*)::int AS n FROM `+table+` WHERE mirror_deleted_at IS NULL GROUP BY business) AS c`).
			Scan(&businesses, &distinct))
		require.Len(t, distinct, 1, "%s: every business holds the same number of rows", table)
		require.Equal(t, len(f.Businesses), businesses, "%s: every business has rows", table)
		sampled := count(t, db, `SELECT count(*) FROM `+table+` WHERE business = $1 AND mirror_deleted_at IS NULL`,
			f.Businesses[sample[0]].Name)
		require.Equal(t, sampled, distinct[0], table)
		tables = append(tables, fmt.Sprintf("%s %d", table, distinct[0]))
	}
	figures.add("exact: every one of the %d businesses holds the sample's rows: %s", len(f.Businesses), strings.Join(tables, ", "))
}

// scaleLag mirrors the first sz.lag businesses of f in a new schema on
// three new processes, their webhooks balanced over them, and measures the
// event→row lag while invoices are created at sz.rate a second for
// scaleLoadFor.
func scaleLag(t *testing.T, f *fleet, keys *pgmirror.Keyring, keyText string, sz scaleSizes, figures *scaleFigures) {
	t.Helper()
	ctx := context.Background()
	bs := f.Businesses[:min(sz.lag, len(f.Businesses))]
	rate := sz.rate
	schema := scaleSchema(t, f, keys, sz.partitions)
	db := adminPool(t, schema)
	lb := newScaleBalancer(t)
	for _, b := range bs {
		require.NoError(t, pgmirror.NewBusinesses(db, schema, keys).Add(ctx, pgmirror.BusinessConfig{
			Name: b.Name, APIKey: b.Key, WebhookSecrets: []string{secretOf(b.Name)}, Budget: scaleBudget}))
		b.Subscribe(lb.url+"/webhooks/"+b.Name, secretOf(b.Name))
	}
	start := time.Now()
	replicas := scaleStartReplicas(t, f.URL, keyText, "lag", sz.args(schema))
	for _, r := range replicas {
		lb.route(r.base)
	}
	conns := scaleSampleConnections(t, db, replicas)
	scaleWaitBackfilled(t, db, len(bs), 10*time.Minute)
	figures.add("lag: %d businesses ready by %d new processes in %v (default --coalesce %v and --reconcile-interval %v)",
		len(bs), scaleReplicas, time.Since(start).Round(time.Second), pgmirror.DefaultCoalesceWindow, pgmirror.DefaultReconcileInterval)

	clients := make([]*invoicing.Client, len(bs))
	for i, b := range bs {
		clients[i] = businessClient(t, f, b)
	}
	var mu sync.Mutex
	var ids []string
	var createdAt []time.Time // when each invoice's Create returned, as ids
	var failed atomic.Int64
	jobs := make(chan int, rate)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := range jobs {
				id, err := scaleCreateInvoice(clients[i%len(clients)])
				if err != nil {
					failed.Add(1)
					continue
				}
				mu.Lock()
				ids, createdAt = append(ids, id), append(createdAt, time.Now())
				mu.Unlock()
			}
		})
	}
	loaded := time.Now()
	late := 0
	for i := 0; ; i++ { // the i-th invoice is due i/rate seconds in, whatever the delays before it
		at := loaded.Add(time.Duration(i) * time.Second / time.Duration(rate))
		if at.Sub(loaded) >= scaleLoadFor {
			break
		}
		time.Sleep(time.Until(at))
		select {
		case jobs <- i:
		default:
			late++ // every creator is busy: counted, not queued
		}
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(loaded)
	require.Zero(t, failed.Load(), "invoices that could not be created")
	figures.add("lag: %d invoices created in %v (%.0f a second over %d businesses; %d skipped because every creator was busy)",
		len(ids), elapsed.Round(time.Millisecond), float64(len(ids))/elapsed.Seconds(), len(bs), late)

	waitUntil(t, 2*time.Minute, func() (bool, string) {
		n := count(t, db, `SELECT count(*) FROM unnest($1::text[]) AS c(id) JOIN invoices AS i ON i.id = c.id`, ids)
		return n == len(ids), fmt.Sprintf("%d of the %d invoices created mirrored", n, len(ids))
	})
	landed := time.Since(loaded)
	var events int
	var p50, p99, worst float64
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*)::int, percentile_cont(0.5) WITHIN GROUP (ORDER BY lag_seconds),
		percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_seconds), max(lag_seconds) FROM mirror_event_lag`).Scan(&events, &p50, &p99, &worst))
	var worstName string
	var worstEvents int
	var worstP50, worstP99 float64
	require.NoError(t, db.QueryRow(ctx, `SELECT business, count(*)::int, percentile_cont(0.5) WITHIN GROUP (ORDER BY lag_seconds),
		percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_seconds) FROM mirror_event_lag
		GROUP BY business ORDER BY 4 DESC LIMIT 1`).Scan(&worstName, &worstEvents, &worstP50, &worstP99))
	figures.add("lag: every invoice mirrored %v after the load began (%v after it ended); %d rows written for events: event→row lag p50 %.0f ms, p99 %.0f ms, max %.0f ms",
		landed.Round(time.Millisecond), (landed - elapsed).Round(time.Millisecond), events, p50*1000, p99*1000, worst*1000)
	var e2e50, e2e99, e2eMax float64
	require.NoError(t, db.QueryRow(ctx, `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s), percentile_cont(0.99) WITHIN GROUP (ORDER BY s), max(s)
		FROM (SELECT extract(epoch FROM i.mirror_changed_at - c.at)::float8 AS s
			FROM unnest($1::text[], $2::timestamptz[]) AS c(id, at) JOIN invoices AS i ON i.id = c.id) AS l`, ids, createdAt).
		Scan(&e2e50, &e2e99, &e2eMax))
	figures.add("lag: from each Create's answer to its row's write (the service's delivery included): p50 %.0f ms, p99 %.0f ms, max %.0f ms",
		e2e50*1000, e2e99*1000, e2eMax*1000)
	figures.add("lag: worst business %s: p99 %.0f ms (p50 %.0f ms, %d events)", worstName, worstP99*1000, worstP50*1000, worstEvents)
	figures.add("lag: balancer forwarded %d deliveries (%s), %d not answered 2xx", lb.forwarded.Load(), lb.spread(), lb.refused.Load())
	require.GreaterOrEqual(t, events, len(ids), "every event's write has its lag")

	// Exact after the load: a sample of 10.
	for _, i := range rand.New(rand.NewPCG(25, 7)).Perm(len(bs))[:min(10, len(bs))] {
		b := bs[i]
		diffs, _ := compareScope(t, scope{URL: f.URL, Key: b.Key, Business: b.Name}, db)
		if len(diffs) > 20 {
			diffs = diffs[:20]
		}
		require.Empty(t, diffs, "business %s differs from the service after the load", b.Name)
	}
	figures.add("lag: 10 businesses picked at random equal to the service after the load")

	peaks := conns()
	for _, r := range replicas {
		figures.add("%s: peak %d connections, peak RSS %s; %d log lines, %d at WARN, %d at ERROR",
			r.name, peaks[r.name], r.peakRSS(t), r.lines.Load(), r.warns.Load(), r.errors.Load())
		assert.LessOrEqual(t, peaks[r.name], scaleMaxConns, "%s's peak connections", r.name)
	}
	for _, r := range replicas {
		r.stop(t)
	}
}

// scaleCreateInvoice creates a draft invoice of one line and returns its
// id.
func scaleCreateInvoice(c *invoicing.Client) (string, error) {
	res, err := c.Invoices.Create(context.Background(), &invoicing.InvoiceCreateParams{
		ClientID: invoicingtest.SeedClientID, Status: invoicing.InvoiceStatusDraft, Notes: "load",
		DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{Description: "Work", UnitPrice: decimal.NewFromInt(100)}},
	})
	if err != nil {
		return "", err
	}
	return res.Invoice.ID, nil
}

// scaleBalancer is a load balancer in front of the replicas' webhook
// endpoints: each delivery to /webhooks/{business} goes to the next
// replica, round-robin. The fake service signs at its fake clock's time,
// so the balancer signs each delivery again (body and delivery id
// untouched) with the business's secret at the wall clock's time, as
// network does.
type scaleBalancer struct {
	url    string
	client *http.Client

	mu      sync.Mutex
	targets []string
	next    int
	counts  []int

	forwarded, refused atomic.Int64
}

func newScaleBalancer(t *testing.T) *scaleBalancer {
	lb := &scaleBalancer{client: &http.Client{Timeout: 30 * time.Second}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhooks/{business}", lb.serve)
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	lb.url = s.URL
	return lb
}

// route adds a replica, by the base URL of its webhook endpoint.
func (lb *scaleBalancer) route(base string) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.targets = append(lb.targets, base)
	lb.counts = append(lb.counts, 0)
}

// spread is how many deliveries each replica was given.
func (lb *scaleBalancer) spread() string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	parts := make([]string, len(lb.counts))
	for i, c := range lb.counts {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, "/")
}

func (lb *scaleBalancer) serve(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("business")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	lb.mu.Lock()
	if len(lb.targets) == 0 {
		lb.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	i := lb.next % len(lb.targets)
	lb.next++
	lb.counts[i]++
	target := lb.targets[i]
	lb.mu.Unlock()
	d := webhooks.TestDelivery{Secret: secretOf(name), Type: webhooks.EventType(r.Header.Get(webhooks.HeaderEvent)),
		DeliveryID: r.Header.Get(webhooks.HeaderDelivery), Body: body, Timestamp: time.Now()}
	req, err := d.Request(target + "/webhooks/" + name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	lb.forwarded.Add(1)
	resp, err := lb.client.Do(req)
	if err != nil {
		lb.refused.Add(1)
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		lb.refused.Add(1)
	}
	w.WriteHeader(resp.StatusCode)
}
