package pgmirror_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// Replicas starting together migrate one at a time: every Migrate succeeds,
// each migration is applied once, and the schema holds the mirror's tables
// and the inbox table.
func TestMigrateIsIdempotentAndSafeForReplicasAtOnce(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	schema := newSchemaName()
	var mirrors []*pgmirror.Mirror
	for range 4 {
		m, err := pgmirror.Open(context.Background(), server.URL, testConfig(sdkClient(srv), schema))
		require.NoError(t, err)
		t.Cleanup(m.Close)
		mirrors = append(mirrors, m)
	}
	errs := make([]error, len(mirrors))
	var wg sync.WaitGroup
	for i, m := range mirrors {
		wg.Go(func() { errs[i] = m.Migrate(context.Background()) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, mirrors[0].Migrate(context.Background()), "and again, later")

	db := adminPool(t, schema)
	assert.Equal(t, pgmirror.SchemaVersion(), count(t, db, `SELECT count(*) FROM mirror_migrations`))
	for _, table := range append(pgmirror.Resources(), "invoice_lines", "quote_lines", "bill_lines", pginbox.TableName) {
		assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2`,
			schema, table), "table %s", table)
	}
}

// Migrating again keeps every row.
func TestMigrateKeepsTheData(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 50}, rand.New(rand.NewPCG(13, 14)))
	schema := newSchemaName()
	m := openMirror(t, testConfig(sdkClient(srv), schema))
	require.NoError(t, m.Backfill(context.Background()))
	require.NoError(t, m.Migrate(context.Background()))
	requireMirrorEqual(t, srv, schema)
}

// A schema migrated by a newer version of the package is refused, not used.
func TestMigrateRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	schema := newSchemaName()
	m := openMirror(t, testConfig(sdkClient(srv), schema))
	_, err := adminPool(t, schema).Exec(context.Background(), `INSERT INTO mirror_migrations (version, name) VALUES ($1, 'future')`,
		pgmirror.SchemaVersion()+1)
	require.NoError(t, err)
	assert.ErrorContains(t, m.Migrate(context.Background()), "newer than this program's")
}

// The tables the SDK's records generate (their //mirror:table lines) are
// the tables the migrations make: the same columns, of the same types. A
// field added to a record without its migration, or a migration without
// its field, fails here.
func TestTheRecordsTablesAreTheMigratedTables(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	m := openMirror(t, testConfig(sdkClient(srv), newSchemaName()))
	tables := pgmirror.TablesForTest()
	require.Len(t, tables, len(pgmirror.Resources())+3, "ten record tables and three lines tables")
	for table, want := range tables {
		got, err := m.ColumnsForTest(context.Background(), table)
		require.NoError(t, err)
		assert.ElementsMatch(t, want, got, "the columns of %s", table)
		// Its history, and the function that reads it as of an instant:
		// the same columns and the version's interval.
		interval := []string{"mirror_valid_to timestamp with time zone"}
		if !slices.Contains(want, "mirror_valid_from timestamp with time zone") { // a lines table
			interval = append(interval, "mirror_valid_from timestamp with time zone")
		}
		got, err = m.ColumnsForTest(context.Background(), table+"_history")
		require.NoError(t, err)
		assert.ElementsMatch(t, append(want, interval...), got, "the columns of %s_history", table)
		got, err = m.FunctionColumnsForTest(context.Background(), table+"_as_of")
		require.NoError(t, err)
		assert.ElementsMatch(t, append(want, interval...), got, "the columns %s_as_of returns", table)
	}
}
