package pginbox_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	rows, err := pool.Query(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`, schema, pginbox.TableName)
	require.NoError(t, err)
	for rows.Next() {
		var c string
		require.NoError(t, rows.Scan(&c))
		columns = append(columns, c)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"delivery_id", "event_type", "signed_at", "body", "received_at", "status",
		"attempts", "failures", "last_error", "next_attempt_at", "processed_at"}, columns)
	assert.Contains(t, pginbox.MigrationSQL(), "CREATE TABLE IF NOT EXISTS invoicing_webhook_inbox")
}

func TestMigrateReportsDatabaseErrors(t *testing.T) {
	pool := newPool(t, "public", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorContains(t, pginbox.Migrate(ctx, pool), "pginbox: creating table invoicing_webhook_inbox")
}
