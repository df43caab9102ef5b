package pgmirror_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

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

// run runs m.Run until the test ends, and checks that it stopped cleanly.
func run(t testing.TB, m *pgmirror.Mirror) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
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

// syncBuffer is an io.Writer safe for concurrent use, for logs.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ io.Writer = (*syncBuffer)(nil)

// newContact is a contact for AddClient and AddSupplier.
func newContact(name string) invoicingtest.Contact {
	return invoicingtest.Contact{Name: name, Email: strings.ReplaceAll(strings.ToLower(name), " ", ".") + "@example.com"}
}
