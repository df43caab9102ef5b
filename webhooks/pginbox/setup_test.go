package pginbox_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// The documented setup, built by the package example's newReceiver (which
// doc.go and the README show), with callbacks as slow as can be: while each
// of the Worker's concurrency callbacks is blocked, holding its connection,
// the Handler still stores and acknowledges deliveries. It never needs one
// of the Worker's connections.
func TestDocumentedSetupHandlerNeverWaitsForWorkers(t *testing.T) {
	ctx := context.Background()
	schema := emptySchema(t)
	inCallback, release := make(chan string, 100), make(chan struct{})
	r, err := newReceiver(ctx, server.URL+"&search_path="+schema, webhooktest.NewVerifier(t),
		func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
			inCallback <- d.ID
			<-release
			return nil
		})
	require.NoError(t, err)
	t.Cleanup(r.close)
	admin := newPool(t, schema, 1)

	busy := webhooktest.Deliveries(concurrency)
	for _, d := range busy {
		require.Equal(t, http.StatusOK, d.Send(r.handler))
	}
	start(t, r.worker)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the Worker's, which waits for the callbacks
	for range concurrency {
		select {
		case <-inCallback:
		case <-time.After(30 * time.Second):
			t.Fatal("the Worker did not take up every stored delivery")
		}
	}
	require.Equal(t, int32(concurrency), r.worker.Pool.Stat().AcquiredConns(), "each blocked callback holds a connection")
	assert.Equal(t, float64(concurrency), byLabel(gather(t, r.metrics)["invoicing_pginbox_deliveries_in_flight"])[""])

	more := webhooktest.Deliveries(20)
	for _, d := range more {
		require.Equal(t, http.StatusOK, d.Send(r.handler), "delivery %s, sent while every callback is blocked", short(d.ID))
		assert.Equal(t, pginbox.StatusPending, readRow(t, admin, d.ID).Status)
	}
	assert.Empty(t, inCallback, "the callbacks are still blocked")
	assert.Equal(t, int32(concurrency), r.worker.Pool.Stat().AcquiredConns())

	unblock()
	waitFor(t, admin, pginbox.StatusProcessed, len(busy)+len(more))
	require.Eventually(t, func() bool { return outcomes(t, r.metrics)["processed"] == float64(len(busy)+len(more)) }, 30*time.Second, time.Millisecond)
	assert.Equal(t, map[string]float64{"stored": float64(len(busy) + len(more)), "processed": float64(len(busy) + len(more))}, outcomes(t, r.metrics))
}
