package pgmirror_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
	"github.com/invoicing-api/invoicing-go/internal/testservers"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// server is the PostgreSQL the tests of this package share; each test works
// in a schema of its own. A test that stops its PostgreSQL has one of its
// own (ownPostgres), so that the others, running in parallel, never see it
// go.
var server *testservers.Postgres

// servers holds the PostgreSQL of the schemas that live on a server of
// their own (ownPostgres), by schema.
var servers sync.Map

// ownPostgres starts a PostgreSQL for schema alone, stopped with the test:
// the helpers that take the schema (openMirror, adminPool, the replicas)
// use it.
func ownPostgres(t testing.TB, schema string) *testservers.Postgres {
	t.Helper()
	pg := newPostgres(t)
	t.Cleanup(func() { servers.Delete(schema) })
	servers.Store(schema, pg)
	return pg
}

// newPostgres starts a PostgreSQL of the test's own, stopped with the test.
func newPostgres(t testing.TB) *testservers.Postgres {
	t.Helper()
	pg, err := testservers.StartPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	return pg
}

// postgresOf returns the PostgreSQL that holds schema.
func postgresOf(schema string) *testservers.Postgres {
	if pg, ok := servers.Load(schema); ok {
		return pg.(*testservers.Postgres)
	}
	return server
}

// binDir holds the invoicing-mirror binary the process tests build.
var binDir string

func TestMain(m *testing.M) {
	var err error
	server, err = testservers.StartPostgres()
	if err != nil {
		fmt.Fprintln(os.Stderr, "these tests need a real PostgreSQL:", err)
		os.Exit(1)
	}
	binDir, err = os.MkdirTemp("", "pgmirror-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	if err := server.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// mirrorBinary builds the invoicing-mirror command once per test binary
// (without the race detector: it runs as the replicas' separate processes)
// and returns its path.
func mirrorBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		builtBin = filepath.Join(binDir, "invoicing-mirror")
		out, err := exec.Command("go", "build", "-o", builtBin, "./cmd/invoicing-mirror").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building invoicing-mirror: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// t0 is the fake service's clock at the start of every test.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

var schemaCount atomic.Int64

// newSchemaName returns a schema name no other test uses.
func newSchemaName() string {
	return fmt.Sprintf("mirror_test_%d_%d", os.Getpid(), schemaCount.Add(1))
}

// newFake starts a fake service on a fake clock, closed with the test.
func newFake(t testing.TB, opts ...invoicingtest.Option) (*invoicingtest.Server, *invoicingtest.FakeClock) {
	clock := invoicingtest.NewFakeClock(t0)
	srv := invoicingtest.NewTestServer(t, append([]invoicingtest.Option{invoicingtest.WithClock(clock)}, opts...)...)
	return srv, clock
}

// sdkClient is the client a mirror of srv uses: the SDK's defaults, with
// short retry waits so that injected 429s and 5xx do not slow the tests.
func sdkClient(srv *invoicingtest.Server, opts ...invoicing.Option) *invoicing.Client {
	return srv.Client(append([]invoicing.Option{invoicing.WithRetryWait(5*time.Millisecond, 50*time.Millisecond)}, opts...)...)
}

// newClientAt is sdkClient for a service at baseURL (a proxy in front of
// the fake).
func newClientAt(baseURL, key string) (*invoicing.Client, error) {
	return invoicing.NewClient(baseURL, key, invoicing.WithRetryWait(5*time.Millisecond, 50*time.Millisecond))
}

// testConfig is the configuration the tests' mirrors start from: quick
// polls and a short coalescing window and lease.
func testConfig(c *invoicing.Client, schema string) pgmirror.Config {
	return pgmirror.Config{
		Client:         c,
		Schema:         schema,
		Logger:         testLogger(),
		PollInterval:   10 * time.Millisecond,
		CoalesceWindow: 20 * time.Millisecond,
		FetchLease:     5 * time.Second,
		BatchSize:      250,
		// The tests' fake answers at once: a budget that never binds,
		// unless a test sets its own.
		Budget:     10000,
		Partitions: testPartitions(),
	}
}

// testPartitions is Config.Partitions for the tests:
// PGMIRROR_TEST_PARTITIONS, 0 when unset, so that the whole suite runs
// against partitioned tables too.
func testPartitions() int {
	n, _ := strconv.Atoi(os.Getenv("PGMIRROR_TEST_PARTITIONS"))
	return n
}

// testLogger logs to stderr when PGMIRROR_TEST_LOG is set (debug, info,
// warn or error), and nothing otherwise.
func testLogger() *slog.Logger {
	level := os.Getenv("PGMIRROR_TEST_LOG")
	if level == "" {
		return slog.New(slog.DiscardHandler)
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// openMirror opens a migrated mirror of cfg, closed with the test.
func openMirror(t testing.TB, cfg pgmirror.Config) *pgmirror.Mirror {
	t.Helper()
	return openTracedMirror(t, cfg, nil)
}

// openTracedMirror is openMirror with tracer (nil for none) tracing its
// pools' statements.
func openTracedMirror(t testing.TB, cfg pgmirror.Config, tracer pgx.QueryTracer) *pgmirror.Mirror {
	t.Helper()
	pc, err := pgxpool.ParseConfig(postgresOf(cfg.Schema).URL)
	require.NoError(t, err)
	pc.ConnConfig.Tracer = tracer
	m, err := pgmirror.New(context.Background(), pc, cfg)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	require.NoError(t, m.Migrate(context.Background()))
	return m
}

// backfilled starts a fake service seeded with n (its choices drawn from
// s1 and s2) and a mirror of it (newMirror) that has backfilled it.
func backfilled(t testing.TB, n sizes, s1, s2 uint64) (*invoicingtest.Server, *pgmirror.Mirror, *pgxpool.Pool) {
	t.Helper()
	srv, _ := newFake(t)
	seed(t, srv, n, s1, s2)
	m, db := newMirror(t, srv)
	require.NoError(t, m.Backfill(context.Background()))
	return srv, m, db
}

// newMirror opens a migrated mirror of srv in a new schema (m.Schema()),
// its Config testConfig's changed by each edit, and returns it with a pool
// on the schema for the test's own queries.
func newMirror(t testing.TB, srv *invoicingtest.Server, edit ...func(*pgmirror.Config)) (*pgmirror.Mirror, *pgxpool.Pool) {
	t.Helper()
	cfg := testConfig(sdkClient(srv), newSchemaName())
	for _, e := range edit {
		e(&cfg)
	}
	return openMirror(t, cfg), adminPool(t, cfg.Schema)
}

// migratedSchema migrates a mirror's schema, closes the mirror, and
// returns the schema's name and a pool in it: for tests of the store's
// statements that need no running mirror.
func migratedSchema(t testing.TB) (string, *pgxpool.Pool) {
	t.Helper()
	srv, _ := newFake(t)
	var schema string
	m, db := newMirror(t, srv, func(c *pgmirror.Config) { schema = c.Schema })
	m.Close()
	return schema, db
}

// run runs m.Run until the returned stop is called or the test ends, and
// checks that it stopped cleanly.
func run(t testing.TB, m *pgmirror.Mirror) (stop func()) {
	t.Helper()
	return testkit.Start(t, m.Run)
}

// hookUp serves m's Handler and registers it as a webhook endpoint of srv
// for every event; the Handler verifies deliveries against the fake clock.
func hookUp(t testing.TB, srv *invoicingtest.Server, clock *invoicingtest.FakeClock, m *pgmirror.Mirror) *invoicingtest.WebhookEndpoint {
	t.Helper()
	var mu sync.Mutex
	var h http.Handler = http.NotFoundHandler()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		handler := h
		mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	ep := srv.AddWebhookEndpoint(s.URL + "/webhooks")
	mu.Lock()
	h = m.Handler(verifierFor(t, ep, clock))
	mu.Unlock()
	return ep
}

// verifierFor verifies the deliveries of ep, signed at the fake clock's
// time.
func verifierFor(t testing.TB, ep *invoicingtest.WebhookEndpoint, clock *invoicingtest.FakeClock) *webhooks.Verifier {
	t.Helper()
	v, err := webhooks.NewVerifier(ep.Secret(), webhooks.WithClock(clock.Now))
	require.NoError(t, err)
	return v
}

// adminPool is a pool working in schema, for the tests' own queries.
func adminPool(t testing.TB, schema string) *pgxpool.Pool {
	return checkerPool(t, schema)
}

// count runs a count query.
func count(t testing.TB, db *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// waitUntil polls cond until it reports true, failing the test after
// timeout with cond's last description of what it waits for.
func waitUntil(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	if ok, what := poll(timeout, cond); !ok {
		t.Fatalf("after %v still waiting: %s", timeout, what)
	}
}

// poll calls cond every 10 ms until it reports true or timeout passes, and
// returns its last answer (for a goroutine, which cannot fail the test).
func poll(timeout time.Duration, cond func() (bool, string)) (bool, string) {
	deadline := time.Now().Add(timeout)
	for {
		ok, what := cond()
		if ok || time.Now().After(deadline) {
			return ok, what
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitDrained waits until every stored delivery is processed and every
// requested fetch is done.
func waitDrained(t testing.TB, db *pgxpool.Pool, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, func() (bool, string) {
		var inbox, fetches int
		err := db.QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM invoicing_webhook_inbox WHERE status = 'pending'),
			(SELECT count(*) FROM mirror_pending_fetch)`).Scan(&inbox, &fetches)
		if err != nil {
			return false, err.Error()
		}
		return inbox == 0 && fetches == 0, fmt.Sprintf("%d deliveries and %d fetches pending", inbox, fetches)
	})
}

// fetchUntilDrained runs m's fetchers until no request is left.
func fetchUntilDrained(t testing.TB, m *pgmirror.Mirror, db *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.RunFetchers(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitUntil(t, 30*time.Second, func() (bool, string) {
		n := count(t, db, `SELECT count(*) FROM mirror_pending_fetch`)
		return n == 0, fmt.Sprintf("%d fetches pending", n)
	})
}

// waitBackfilled waits until the backfill of every resource is complete.
func waitBackfilled(t testing.TB, db *pgxpool.Pool, timeout time.Duration) {
	t.Helper()
	waitAllBackfilled(t, db, timeout, 1)
}

// waitAllBackfilled waits until every resource of each of the mirror's
// businesses (as many as given) is backfilled.
func waitAllBackfilled(t testing.TB, db *pgxpool.Pool, timeout time.Duration, businesses int) {
	t.Helper()
	waitUntil(t, timeout, func() (bool, string) {
		done, err := backfillsComplete(db, businesses)
		if err != nil {
			return false, err.Error()
		}
		return done, fmt.Sprintf("the backfill of every resource of %d business(es)", businesses)
	})
}

// backfillsComplete reports whether every resource of each of the mirror's
// businesses (as many as given) is backfilled.
func backfillsComplete(db *pgxpool.Pool, businesses int) (bool, error) {
	var done int
	err := db.QueryRow(context.Background(), `SELECT count(*) FROM mirror_backfill WHERE completed_at IS NOT NULL`).Scan(&done)
	return done == businesses*len(pgmirror.Resources()), err
}

// requests counts the requests the fake received whose method and path
// (relative to the base URL) match, e.g. "GET /invoices/".
func requests(srv *invoicingtest.Server, prefix string) int {
	n := 0
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.Method+" "+r.Path, prefix) && !r.Fault {
			n++
		}
	}
	return n
}

// syncBuffer is a log destination safe for concurrent use.
type syncBuffer struct{ testkit.Buffer }

// logger is a text logger writing to s at info level and above: a
// Config.Logger whose lines the test reads.
func (s *syncBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(s, nil))
}

// newContact is a contact for AddClient and AddSupplier.
func newContact(name string) invoicingtest.Contact {
	return invoicingtest.Contact{Name: name, Email: strings.ReplaceAll(strings.ToLower(name), " ", ".") + "@example.com"}
}

// createInvoice creates an invoice through the API (invoice.created).
func createInvoice(t testing.TB, c *invoicing.Client, status invoicing.InvoiceStatus, lines int) *invoicing.Invoice {
	t.Helper()
	p := &invoicing.InvoiceCreateParams{ClientID: invoicingtest.SeedClientID, Status: status, Notes: "created",
		DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID}
	for i := range lines {
		p.LineItems = append(p.LineItems, invoicing.LineItemParams{Description: "Work", UnitPrice: decimal.NewFromInt(int64(100 + i))})
	}
	res, err := c.Invoices.Create(context.Background(), p)
	require.NoError(t, err)
	return res.Invoice
}

// createQuote creates a quote through the API (quote.created).
func createQuote(t testing.TB, c *invoicing.Client, lines int) *invoicing.Quote {
	t.Helper()
	p := &invoicing.QuoteCreateParams{ClientID: invoicingtest.SeedOtherClientID,
		DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID}
	for i := range lines {
		l := invoicing.LineItemParams{Description: "Option", UnitPrice: decimal.RequireFromString("49.95")}
		if i == 0 {
			l.ItemID = invoicingtest.SeedItemID
		}
		p.LineItems = append(p.LineItems, l)
	}
	q, err := c.Quotes.Create(context.Background(), p)
	require.NoError(t, err)
	return q
}

// createBill creates a bill through the API (bill.created).
func createBill(t testing.TB, c *invoicing.Client) *invoicing.Bill {
	t.Helper()
	b, err := c.Bills.Create(context.Background(), &invoicing.BillCreateParams{SupplierID: invoicingtest.SeedSupplierID,
		DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{Description: "Paper", UnitPrice: decimal.RequireFromString("12.34")}}})
	require.NoError(t, err)
	return b
}

// These helpers run invoicing-mirror as a process of its own against a
// database the test chooses (the replica tests' startProcess uses the
// package's server).

// commandEnv is the environment of an invoicing-mirror process.
func commandEnv(baseURL, key, secret, databaseURL string) []string {
	return append(os.Environ(), "INVOICING_BASE_URL="+baseURL, "INVOICING_API_KEY="+key,
		"INVOICING_WEBHOOK_SECRET="+secret, "DATABASE_URL="+databaseURL)
}

// unbounded gives the command a request budget that never binds (the
// tests' fake answers at once), unless args run a subcommand or set one.
func unbounded(args []string) []string {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") || slices.Contains(args, "--budget") {
		return args
	}
	return append(slices.Clip(args), "--budget", "10000")
}

// runCommand runs invoicing-mirror with args to its end and returns its
// combined output and exit status.
func runCommand(t testing.TB, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(mirrorBinary(t), unbounded(args)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err, "%s", out)
	return string(out), 0
}

// served is an invoicing-mirror process serving its webhook endpoint.
type served struct {
	cmd     *exec.Cmd
	base    string // http://host:port of --listen
	metrics string // http://host:port of --metrics, when given
	done    chan error

	mu    sync.Mutex
	lines []logLine
}

// logLine is a line the process wrote, and when the test read it.
type logLine struct {
	at   time.Time
	text string
}

var addrOf = regexp.MustCompile(`msg="invoicing-mirror: (webhook endpoint|metrics) listening" addr=(\S+)`)

// startServing starts invoicing-mirror in serve mode with args (which
// should include --listen 127.0.0.1:0) and waits until it listens (and
// serves its metrics, with --metrics).
func startServing(t testing.TB, env []string, args ...string) *served {
	t.Helper()
	withMetrics := false
	for _, a := range args {
		withMetrics = withMetrics || a == "--metrics"
	}
	p := &served{cmd: exec.Command(mirrorBinary(t), unbounded(args)...), done: make(chan error, 1)}
	p.cmd.Env = env
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	addrs := make(chan [2]string, 2)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, logLine{time.Now(), sc.Text()})
			p.mu.Unlock()
			if m := addrOf.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- [2]string{m[1], "http://" + m[2]}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("invoicing-mirror's log:\n%s", strings.Join(p.since(time.Time{}), "\n"))
		}
	})
	for p.base == "" || withMetrics && p.metrics == "" {
		select {
		case a := <-addrs:
			if a[0] == "metrics" {
				p.metrics = a[1]
			} else {
				p.base = a[1]
			}
		case err := <-p.done:
			t.Fatalf("invoicing-mirror exited before listening (%v):\n%s", err, strings.Join(p.since(time.Time{}), "\n"))
		case <-time.After(30 * time.Second):
			t.Fatal("invoicing-mirror not listening after 30s")
		}
	}
	return p
}

// since returns the lines the process wrote from t on.
func (p *served) since(t time.Time) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		if !l.at.Before(t) {
			out = append(out, l.text)
		}
	}
	return out
}

// stop sends SIGTERM and checks that the process exits with status 0.
func (p *served) stop(t testing.TB) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("invoicing-mirror did not stop within a minute of SIGTERM")
	}
}

// get returns the status and body of a GET of url, or the error.
func get(url string) (int, string, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// waitStatus waits until a GET of url answers status.
func waitStatus(t testing.TB, url string, status int, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, func() (bool, string) {
		got, body, err := get(url)
		return got == status, fmt.Sprintf("GET %s: %d %q %v", url, got, body, err)
	})
}
