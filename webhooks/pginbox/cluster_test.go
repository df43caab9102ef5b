package pginbox_test

import (
	"context"
	"fmt"
	"net/http"
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

// cluster is a receiver running as replicas that share one database: each
// has a pool, a Handler and a Worker of its own, as separate processes
// would.
type cluster struct {
	schema    string
	pools     []*pgxpool.Pool     // replica i's pool
	handlers  []http.Handler      // replica i's Handler
	processed webhooktest.Counter // delivery id -> successful runs of Process
}

// newCluster starts n replicas. With inTx their Workers use ProcessTx and
// record each delivery in the table effects (delivery_id, replica), in the
// claim's transaction; otherwise they use Process and count in memory.
func newCluster(t testing.TB, n int, inTx bool) *cluster {
	c := &cluster{schema: newSchema(t)}
	v := webhooktest.NewVerifier(t)
	if inTx {
		_, err := newPool(t, c.schema, 1).Exec(context.Background(), `CREATE TABLE effects (delivery_id text NOT NULL, replica int NOT NULL)`)
		require.NoError(t, err)
	}
	for i := range n {
		pool := newNamedPool(t, c.schema, fmt.Sprintf("%s_replica_%d", c.schema, i), 16)
		w := &pginbox.Worker{Pool: pool, Concurrency: 2, PollInterval: 20 * time.Millisecond,
			Backoff: func(int) time.Duration { return 10 * time.Millisecond }}
		if inTx {
			w.ProcessTx = func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
				_, err := tx.Exec(ctx, `INSERT INTO effects VALUES ($1, $2)`, d.ID, i)
				return err
			}
		} else {
			w.Process = func(_ context.Context, d *webhooks.Delivery) error {
				c.processed.Add(d.ID)
				return nil
			}
		}
		start(t, w)
		c.pools = append(c.pools, pool)
		c.handlers = append(c.handlers, pginbox.Handler(pool, v))
	}
	return c
}

// effects returns how many effects rows each delivery id has.
func (c *cluster) effects(t testing.TB) map[string]int { return effectsOf(t, c.pools[0]) }

// Three replicas receive the same 200 deliveries five times each, 32 at a
// time, in random order: each delivery is stored once and processed exactly
// once.
func TestThreeReplicasProcessEachDeliveryExactlyOnce(t *testing.T) {
	c := newCluster(t, 3, false)
	pool := c.pools[0]
	deliveries := webhooktest.Deliveries(200)
	attempts := webhooktest.Attempts(deliveries, 5)

	statuses, _ := webhooktest.Storm{Handlers: c.handlers, Concurrency: 32}.Run(attempts)
	for i, s := range statuses {
		require.Equal(t, http.StatusOK, s, "attempt %d of %s", i, short(attempts[i].ID))
	}
	waitFor(t, pool, pginbox.StatusProcessed, len(deliveries))
	assert.Equal(t, len(deliveries), countRows(t, pool, ""))

	require.Equal(t, len(deliveries), c.processed.Len(), "deliveries processed")
	for _, d := range deliveries {
		assert.Equal(t, 1, c.processed.Count(d.ID), "delivery %s", short(d.ID))
	}
}
