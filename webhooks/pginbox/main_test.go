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
	"github.com/invoicing-api/invoicing-go/internal/webhooktest"
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
	cfg, err := pgxpool.ParseConfig(server.URL)
	require.NoError(t, err)
	cfg.MaxConns = maxConns
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
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
	var n int
	err := pool.QueryRow(context.Background(),
		`SELECT count(*) FROM invoicing_webhook_inbox WHERE $1 = '' OR status = $1`, status).Scan(&n)
	require.NoError(t, err)
	return n
}

// short is an id prefix for failure messages.
func short(id string) string { return strings.SplitN(id, "-", 2)[0] }
