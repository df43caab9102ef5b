package pgmirror_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// Run stops with ErrMassDeletion when a reconciliation finds most of a
// table's records gone (another business behind the key), instead of
// going on.
func TestRunStopsWhenMostRecordsVanish(t *testing.T) {
	t.Parallel()
	first, _ := newFake(t)
	seed(t, first, sizes{invoices: 40}, rand.New(rand.NewPCG(71, 72)))
	schema := newSchemaName()
	require.NoError(t, openMirror(t, testConfig(sdkClient(first), schema)).Backfill(context.Background()))

	other, _ := newFake(t) // a business without those invoices
	cfg := testConfig(sdkClient(other), schema)
	cfg.ReconcileInterval = 200 * time.Millisecond
	m := openMirror(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.ErrorIs(t, m.Run(ctx), pgmirror.ErrMassDeletion)
	require.NoError(t, ctx.Err(), "it stopped by itself")
}
