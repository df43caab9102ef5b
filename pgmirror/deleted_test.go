package pgmirror_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// withoutRecords returns srv's state without the records ids of the state's
// key (such as "invoices"), and the payments naming them, for LoadState:
// the service cannot delete.
func withoutRecords(t testing.TB, srv *invoicingtest.Server, key string, ids []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, srv.SaveState(&buf))
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	var st map[string]any
	require.NoError(t, dec.Decode(&st))
	st[key] = slices.DeleteFunc(st[key].([]any), func(r any) bool { return slices.Contains(ids, r.(map[string]any)["id"].(string)) })
	if payments, ok := st["payments"].([]any); ok {
		st["payments"] = slices.DeleteFunc(payments, func(r any) bool {
			id, _ := r.(map[string]any)["invoice_id"].(string)
			return slices.Contains(ids, id)
		})
	}
	b, err := json.Marshal(st)
	require.NoError(t, err)
	return b
}

// Records the service no longer lists are marked deleted by the next
// reconciliation, with their lines, logged and in the change feed; listed
// again, they are unmarked.
func TestDeletedRecordsAreMarkedAndUnmarked(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	ids := seed(t, srv, sizes{invoices: 40, quotes: 5}, rand.New(rand.NewPCG(2, 3)))
	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv), schema)
	var logs syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	m := openMirror(t, cfg)
	ctx := context.Background()
	require.NoError(t, m.Backfill(ctx))
	db := adminPool(t, schema)

	var full bytes.Buffer
	require.NoError(t, srv.SaveState(&full))
	gone := ids["invoices"][5:8]
	require.NoError(t, srv.LoadState(bytes.NewReader(withoutRecords(t, srv, "invoices", gone))))
	corrected, err := m.Reconcile(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, corrected[pgmirror.Invoices])
	assert.Equal(t, 3, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL AND id = ANY($1)`, gone))
	assert.Equal(t, 3, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL`))
	assert.Equal(t, 40, count(t, db, `SELECT count(*) FROM invoices`), "rows kept, as last seen")
	goneLines := count(t, db, `SELECT count(*) FROM invoice_lines WHERE invoice_id = ANY($1)`, gone)
	require.Positive(t, goneLines)
	assert.Equal(t, goneLines, count(t, db, `SELECT count(*) FROM invoice_lines WHERE mirror_deleted_at IS NOT NULL`),
		"the lines of the invoices marked deleted, and only those, are marked with them")
	assert.Contains(t, logs.String(), `msg="pgmirror: marked deleted" business=default resource=invoices rows=3`)
	_, _, deleted, _ := m.CountedForTest()
	assert.Equal(t, int64(3), deleted[pgmirror.Invoices])

	again, err := m.Reconcile(ctx)
	require.NoError(t, err)
	assert.Zero(t, again[pgmirror.Invoices], "marked once")

	require.NoError(t, srv.LoadState(&full))
	corrected, err = m.Reconcile(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, corrected[pgmirror.Invoices])
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL`))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoice_lines WHERE mirror_deleted_at IS NOT NULL`), "listed again: their lines written anew")
	requireMirrorEqual(t, srv, schema)

	ops := map[string]int{}
	waitFeedReadable(t, m)
	for c, err := range m.Changes(ctx, 0) {
		require.NoError(t, err)
		if c.Cause == pgmirror.CauseReconciliation && slices.Contains(gone, c.ID) {
			ops[c.Op]++
		}
	}
	assert.Equal(t, map[string]int{pgmirror.OpDelete: 3, pgmirror.OpInsert: 3}, ops)
	requireFeedReplays(t, m, db)
}

// A different business behind the key (here: another fake, whose invoices
// all have other ids) makes the reconciliation, and RunReconciler, stop
// with an error that says so, before writing or marking anything; with
// AllowMassDeletion, the old rows are marked deleted and the new ones
// written.
func TestMostRecordsVanishingStopsTheMirror(t *testing.T) {
	t.Parallel()
	first, _ := newFake(t)
	seed(t, first, sizes{invoices: 60}, rand.New(rand.NewPCG(4, 5)))
	schema := newSchemaName()
	ctx := context.Background()
	require.NoError(t, openMirror(t, testConfig(sdkClient(first), schema)).Backfill(ctx))

	second, _ := newFake(t)
	seed(t, second, sizes{invoices: 7}, rand.New(rand.NewPCG(6, 7)))
	cfg := testConfig(sdkClient(second), schema)
	cfg.ReconcileInterval = time.Millisecond
	m := openMirror(t, cfg)
	_, err := m.Reconcile(ctx)
	require.ErrorIs(t, err, pgmirror.ErrMassDeletion)
	assert.Contains(t, err.Error(), "the service no longer lists 60 of 60 invoices: a different business behind the API key?")
	db := adminPool(t, schema)
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL`), "nothing marked")
	assert.Equal(t, 60, count(t, db, `SELECT count(*) FROM invoices`), "nothing written")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM mirror_changes WHERE cause = 'reconciliation'`))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM mirror_reconcile WHERE last_started_at IS NOT NULL`), "no reconciliation started")

	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.ErrorIs(t, m.RunReconciler(rctx), pgmirror.ErrMassDeletion, "the reconciler stops")
	require.NoError(t, rctx.Err())

	cfg.AllowMassDeletion = true
	corrected, err := openMirror(t, cfg).Reconcile(ctx)
	require.NoError(t, err)
	assert.Equal(t, 67, corrected[pgmirror.Invoices], "7 written, 60 marked")
	assert.Equal(t, 60, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL`))
	assert.Equal(t, 7, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NULL`))
}

// A backfilled mirror started with a different business behind the key
// (another fake, whose invoices all have other ids) stops at startup with
// ErrMassDeletion, before its fetchers write the records the new
// business's events asked for; with AllowMassDeletion it starts and
// writes them.
func TestRunStopsAtStartupWhenAnotherBusinessIsBehindTheKey(t *testing.T) {
	t.Parallel()
	first, _ := newFake(t)
	seed(t, first, sizes{invoices: 60}, rand.New(rand.NewPCG(4, 5)))
	schema := newSchemaName()
	ctx := context.Background()
	require.NoError(t, openMirror(t, testConfig(sdkClient(first), schema)).Backfill(ctx))
	db := adminPool(t, schema)
	changes := count(t, db, `SELECT count(*) FROM mirror_changes`)

	second, _ := newFake(t)
	ids := seed(t, second, sizes{invoices: 7}, rand.New(rand.NewPCG(6, 7)))["invoices"]
	for _, id := range ids { // as the second business's events would ask
		_, err := db.Exec(ctx, `INSERT INTO mirror_pending_fetch (business, resource, id, due_at) VALUES ('default', 'invoices', $1, now())`, id)
		require.NoError(t, err)
	}
	cfg := testConfig(sdkClient(second), schema)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	err := openMirror(t, cfg).Run(rctx)
	took := time.Since(start)
	require.ErrorIs(t, err, pgmirror.ErrMassDeletion)
	assert.Contains(t, err.Error(), "the service no longer lists 60 of 60 invoices")
	require.NoError(t, rctx.Err())
	assert.Less(t, took, 5*time.Second, "at startup, not at the first reconciliation")
	assert.Equal(t, 60, count(t, db, `SELECT count(*) FROM invoices`), "nothing written")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM invoices WHERE mirror_deleted_at IS NOT NULL`), "nothing marked")
	assert.Equal(t, changes, count(t, db, `SELECT count(*) FROM mirror_changes`), "no change")
	assert.Equal(t, len(ids), count(t, db, `SELECT count(*) FROM mirror_pending_fetch`), "the requests wait")
	t.Logf("Run stopped after %v", took.Round(time.Millisecond))

	cfg.AllowMassDeletion = true
	run(t, openMirror(t, cfg))
	waitUntil(t, 10*time.Second, func() (bool, string) {
		n := count(t, db, `SELECT count(*) FROM invoices WHERE id = ANY($1)`, ids)
		return n == len(ids), fmt.Sprintf("%d of the new business's %d invoices written", n, len(ids))
	})
}
