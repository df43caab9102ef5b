package pginbox_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

func TestMigrateIsIdempotentAndConcurrent(t *testing.T) {
	ctx := context.Background()
	schema := emptySchema(t)
	pool := newPool(t, schema, 4)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs { // replicas starting together
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = pginbox.Migrate(ctx, pool)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, pginbox.Migrate(ctx, pool), "and again, later")

	var columns []string
	for _, c := range shapeOf(t, pool, schema).Columns {
		columns = append(columns, strings.Fields(c)[0])
	}
	assert.Equal(t, []string{"delivery_id", "event_type", "signed_at", "body", "received_at", "status",
		"attempts", "failures", "last_error", "next_attempt_at", "processed_at", "business"}, columns)
	assert.Contains(t, shapeOf(t, pool, schema).Constraints, "PRIMARY KEY (business, delivery_id)")
	assert.Contains(t, pginbox.MigrationSQL(), "CREATE TABLE IF NOT EXISTS invoicing_webhook_inbox")
}

// An inbox table created by the first version of the package (without
// business, testdata/inbox_v1.sql) is upgraded in place by replicas
// starting together: every row kept as it was, in business "", and then
// the same table as a new one. The Handler and the Workers go on with it:
// a retry of a stored delivery is still a copy, a pending one is
// processed, and BusinessHandler's deliveries can share it.
func TestMigrateUpgradesAnInboxWithoutBusinesses(t *testing.T) {
	ctx := context.Background()
	schema := emptySchema(t)
	pool := newPool(t, schema, 4)
	v1, err := os.ReadFile("testdata/inbox_v1.sql")
	require.NoError(t, err)
	_, err = pool.Exec(ctx, string(v1))
	require.NoError(t, err)
	deliveries := webhooktest.Deliveries(3)
	for i, status := range []string{pginbox.StatusPending, pginbox.StatusProcessed, pginbox.StatusFailed} {
		_, err := pool.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body, status, attempts, failures, last_error)
			VALUES ($1, 'contact.created', now(), $2, $3, $4, $4, CASE WHEN $4 > 0 THEN 'no' END)`, deliveries[i].ID, deliveries[i].Body, status, i)
		require.NoError(t, err)
	}
	const rowsSQL = `SELECT delivery_id, event_type, signed_at, body, received_at, status, attempts, failures, last_error, next_attempt_at, processed_at
		FROM invoicing_webhook_inbox ORDER BY delivery_id`
	before := allRows(t, pool, rowsSQL)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs { // replicas of the new version starting together
		wg.Go(func() { errs[i] = pginbox.Migrate(ctx, pool) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, pginbox.Migrate(ctx, pool), "and again, later")

	assert.Equal(t, before, allRows(t, pool, rowsSQL), "every row kept as it was")
	assert.Equal(t, []any{int64(3)}, allRows(t, pool, `SELECT count(*) FROM invoicing_webhook_inbox WHERE business = ''`)[0])
	assert.Equal(t, shapeOf(t, newPool(t, newSchema(t), 1), ""), shapeOf(t, pool, ""), "the same table as a new one")

	_, err = pool.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body)
		VALUES ('x', 'contact.created', now(), '{}') ON CONFLICT (delivery_id) DO NOTHING`)
	assert.ErrorContains(t, err, "no unique or exclusion constraint matching the ON CONFLICT",
		"the earlier version's insert fails: its replicas answer 500 (and the service retries) until replaced")

	h := pginbox.Handler(pool, webhooktest.NewVerifier(t))
	assert.Equal(t, http.StatusOK, deliveries[1].Send(h), "a retry of a delivery stored before the upgrade")
	assert.Equal(t, 3, countRows(t, pool, ""), "is a copy")
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", pginbox.BusinessHandler(pool, oneBusiness(t, "acme")))
	assert.Equal(t, http.StatusOK, sendTo(mux, "/webhooks/acme", webhooktest.Secret, deliveries[1]), "the same id for a business")
	assert.Equal(t, 4, countRows(t, pool, ""), "is another delivery")

	processed := make(chan string, 10)
	start(t, &pginbox.Worker{Pool: pool, PollInterval: 10 * time.Millisecond,
		Process: func(_ context.Context, d *webhooks.Delivery) error {
			processed <- d.Business + "/" + d.ID
			return nil
		}})
	waitFor(t, pool, pginbox.StatusProcessed, 3)
	assert.ElementsMatch(t, []string{"/" + deliveries[0].ID, "acme/" + deliveries[1].ID}, []string{<-processed, <-processed})
}

// shape is what makes an inbox table: its columns (name, type, nullability
// and default), constraints and indexes, without the schema's name.
type shape struct{ Columns, Constraints, Indexes []string }

// shapeOf returns the shape of the inbox table of pool's search_path
// (schema is only for the message of a failure).
func shapeOf(t *testing.T, pool *pgxpool.Pool, schema string) shape {
	t.Helper()
	strs := func(sql string) []string {
		var out []string
		for _, r := range allRows(t, pool, sql) {
			out = append(out, r[0].(string))
		}
		require.NotEmpty(t, out, "schema %s: %s", schema, sql)
		return out
	}
	return shape{
		Columns: strs(`SELECT format('%s %s %s %s', column_name, data_type, is_nullable, coalesce(column_default, '-'))
			FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'invoicing_webhook_inbox'
			ORDER BY ordinal_position`),
		Constraints: strs(`SELECT pg_get_constraintdef(oid) FROM pg_constraint
			WHERE conrelid = 'invoicing_webhook_inbox'::regclass ORDER BY 1`),
		Indexes: strs(`SELECT replace(indexdef, current_schema() || '.', '') FROM pg_indexes
			WHERE schemaname = current_schema() AND tablename = 'invoicing_webhook_inbox' ORDER BY 1`),
	}
}

// allRows returns the values of every row sql returns.
func allRows(t *testing.T, pool *pgxpool.Pool, sql string) [][]any {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
	require.NoError(t, err)
	return out
}

func TestMigrateReportsDatabaseErrors(t *testing.T) {
	pool := newPool(t, "public", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorContains(t, pginbox.Migrate(ctx, pool), "pginbox: creating table invoicing_webhook_inbox")
}
