package pginbox_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// server is the PostgreSQL every test of this package uses; each test works
// in a schema of its own.
var server *testservers.Postgres

func TestMain(m *testing.M) {
	var err error
	server, err = testservers.StartPostgres()
	webhooktest.Main(m, server, err)
}

var schemas atomic.Int64

// newSchema creates a schema for the test, with the inbox table in it.
func newSchema(t testing.TB) string {
	name := emptySchema(t)
	require.NoError(t, pginbox.Migrate(context.Background(), newPool(t, name, 1)))
	return name
}

// emptySchema creates an empty schema for the test.
func emptySchema(t testing.TB) string {
	ctx := context.Background()
	name := fmt.Sprintf("test_%d", schemas.Add(1))
	conn, err := pgx.Connect(ctx, server.URL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+name)
	require.NoError(t, err)
	return name
}

// newPool returns a pool of at most maxConns connections working in schema,
// closed with the test: one per replica, as separate processes would have.
func newPool(t testing.TB, schema string, maxConns int32) *pgxpool.Pool {
	return newNamedPool(t, schema, schema, maxConns)
}

// newNamedPool is newPool whose connections show app as their
// application_name, so that a test can find them in pg_stat_activity.
func newNamedPool(t testing.TB, schema, app string, maxConns int32) *pgxpool.Pool {
	return newTracedPool(t, schema, app, maxConns, nil)
}

// newTracedPool is newNamedPool whose queries go to tracer (none if nil).
func newTracedPool(t testing.TB, schema, app string, maxConns int32, tracer pgx.QueryTracer) *pgxpool.Pool {
	cfg, err := pgxpool.ParseConfig(server.URL)
	require.NoError(t, err)
	cfg.MaxConns = maxConns
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// looks counts how many times Workers looked for a delivery to claim on a
// pool: a pgx.QueryTracer counting the claim queries that returned. A test
// waits for looks instead of sleeping when it checks that a Worker leaves
// something alone.
type looks struct{ n atomic.Int64 }

// newLookingPool is newPool with a looks counting its claim queries.
func newLookingPool(t testing.TB, schema string, maxConns int32) (*pgxpool.Pool, *looks) {
	l := &looks{}
	return newTracedPool(t, schema, schema, maxConns, l), l
}

type isClaimKey struct{}

func (l *looks) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, isClaimKey{}, strings.Contains(data.SQL, "FOR UPDATE SKIP LOCKED"))
}

func (l *looks) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if isClaim, _ := ctx.Value(isClaimKey{}).(bool); isClaim {
		l.n.Add(1)
	}
}

// TraceBatchQuery counts a claim sent in a batch (with ProcessTx's
// savepoint) once its answer is read.
func (l *looks) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	if strings.Contains(data.SQL, "FOR UPDATE SKIP LOCKED") {
		l.n.Add(1)
	}
}

func (l *looks) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (l *looks) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// waitMore waits until the Workers have looked twice more: at least one
// look started, and returned, after waitMore was called.
func (l *looks) waitMore(t testing.TB) {
	t.Helper()
	target := l.n.Load() + 2
	require.Eventually(t, func() bool { return l.n.Load() >= target }, 30*time.Second, time.Millisecond,
		"waiting for the Workers to look for deliveries again")
}

// row is a delivery's row in the inbox table.
type row struct {
	EventType string
	SignedAt  time.Time
	Body      []byte
	Status    string
	Attempts  int
	Failures  int
	LastError *string
}

// readRow returns the row of delivery id.
func readRow(t testing.TB, pool *pgxpool.Pool, id string) row {
	t.Helper()
	var r row
	err := pool.QueryRow(context.Background(), `SELECT event_type, signed_at, body, status, attempts, failures, last_error
		FROM invoicing_webhook_inbox WHERE delivery_id = $1`, id).
		Scan(&r.EventType, &r.SignedAt, &r.Body, &r.Status, &r.Attempts, &r.Failures, &r.LastError)
	require.NoError(t, err, "delivery %s", id)
	return r
}

// countRows returns how many rows of the inbox table have status ("" for
// any).
func countRows(t testing.TB, pool *pgxpool.Pool, status string) int {
	t.Helper()
	n, err := count(pool, status)
	require.NoError(t, err)
	return n
}

// count is countRows that returns the error.
func count(pool *pgxpool.Pool, status string) (int, error) {
	var n int
	err := pool.QueryRow(context.Background(),
		`SELECT count(*) FROM invoicing_webhook_inbox WHERE $1 = '' OR status = $1`, status).Scan(&n)
	return n, err
}

// effectsOf returns how many rows of the table effects (which the tests'
// callbacks fill) each delivery id has.
func effectsOf(t testing.TB, pool *pgxpool.Pool) map[string]int {
	rows, err := pool.Query(context.Background(), `SELECT delivery_id, count(*) FROM effects GROUP BY delivery_id`)
	require.NoError(t, err)
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		require.NoError(t, rows.Scan(&id, &n))
		out[id] = n
	}
	require.NoError(t, rows.Err())
	return out
}

// short is an id prefix for failure messages.
func short(id string) string { return strings.SplitN(id, "-", 2)[0] }
