package pgmirror_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A backfill copies every record of every resource, lines and raw JSON
// included, and records each resource's backfill as complete.
func TestBackfillCopiesEveryRecord(t *testing.T) {
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 640, quotes: 230, bills: 120, clients: 150, suppliers: 30, items: 40, bankTransactions: 260},
		rand.New(rand.NewPCG(1, 2)))
	schema := newSchemaName()
	m := openMirror(t, testConfig(sdkClient(srv), schema))

	require.NoError(t, m.Backfill(context.Background()))

	n := requireMirrorEqual(t, srv, schema)
	assert.Greater(t, n, 1400)
	db := adminPool(t, schema)
	assert.Equal(t, 10, count(t, db, `SELECT count(*) FROM mirror_backfill WHERE completed_at IS NOT NULL AND pass = 1`))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM mirror_backfill_seen`), "the ids seen are forgotten once complete")
}
