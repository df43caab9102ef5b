package pginbox_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
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

// A replica killed after storing deliveries but before processing them (its
// Worker stopped, its connections closed): another replica's Worker
// processes every one of them.
func TestReplicaKilledAfterStoringBeforeProcessing(t *testing.T) {
	schema := newSchema(t)
	v := webhooktest.NewVerifier(t)
	doomedPool := newPool(t, schema, 4)
	doomed := pginbox.Handler(doomedPool, v)
	deliveries := webhooktest.Deliveries(50)
	for _, d := range deliveries {
		require.Equal(t, http.StatusOK, d.Send(doomed), "acknowledged once stored")
	}
	doomedPool.Close() // the replica dies before its Worker got to them

	survivorPool := newPool(t, schema, 4)
	var processed webhooktest.Counter
	start(t, &pginbox.Worker{Pool: survivorPool, Concurrency: 2, PollInterval: 10 * time.Millisecond,
		Process: func(_ context.Context, d *webhooks.Delivery) error {
			processed.Add(d.ID)
			return nil
		}})
	waitFor(t, survivorPool, pginbox.StatusProcessed, len(deliveries))
	for _, d := range deliveries {
		assert.Equal(t, 1, processed.Count(d.ID), "delivery %s", short(d.ID))
	}
}

// A replica whose connection drops while its Worker processes a delivery
// (the process was killed, or the network failed): PostgreSQL ends the
// transaction and its row lock, another replica's Worker processes the
// delivery, and the work written in the transaction happens exactly once.
func TestWorkerConnectionDroppedMidProcessing(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	admin := newPool(t, schema, 2)
	_, err := admin.Exec(ctx, `CREATE TABLE effects (delivery_id text NOT NULL, replica text NOT NULL)`)
	require.NoError(t, err)
	d := webhooktest.Deliveries(1)[0]
	store(t, admin, d)

	effect := func(name string) func(context.Context, pgx.Tx, *webhooks.Delivery) error {
		return func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
			_, err := tx.Exec(ctx, `INSERT INTO effects VALUES ($1, $2)`, d.ID, name)
			return err
		}
	}
	entered, release := make(chan struct{}), make(chan struct{})
	dying := effect("dying")
	start(t, &pginbox.Worker{Pool: newNamedPool(t, schema, schema+"_dying", 2), PollInterval: 10 * time.Millisecond,
		ProcessTx: func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
			if err := dying(ctx, tx, d); err != nil {
				return err
			}
			close(entered)
			<-release
			return nil
		}})
	<-entered

	var survivorRuns atomic.Int32
	survivor := effect("survivor")
	survivorPool, survivorLooked := newLookingPool(t, schema, 2)
	start(t, &pginbox.Worker{Pool: survivorPool, PollInterval: 10 * time.Millisecond,
		ProcessTx: func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
			survivorRuns.Add(1)
			return survivor(ctx, tx, d)
		}})
	survivorLooked.waitMore(t)
	assert.Zero(t, survivorRuns.Load(), "the row is locked while the dying replica holds it")

	var killed int
	require.NoError(t, admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`,
		schema+"_dying").Scan(&killed))
	require.Positive(t, killed)
	waitFor(t, admin, pginbox.StatusProcessed, 1)
	close(release) // the dying replica's callback returns; its commit fails

	var replicas []string
	rows, err := admin.Query(ctx, `SELECT replica FROM effects WHERE delivery_id = $1`, d.ID)
	require.NoError(t, err)
	replicas, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	assert.Equal(t, []string{"survivor"}, replicas, "the dying replica's write was rolled back")
	r := readRow(t, admin, d.ID)
	assert.Equal(t, 1, r.Attempts)
	assert.Zero(t, r.Failures)
	assert.Equal(t, int32(1), survivorRuns.Load())
}

// PostgreSQL stopping in the middle of a run: every request sent after it
// stopped is answered 5xx (so the service retries), no delivery is answered
// 2xx without being stored, and once PostgreSQL is back the service's
// retries are stored and every delivery is processed exactly once.
func TestPostgresGoingAwayMidRunAnswers5xx(t *testing.T) {
	c := newCluster(t, 3, true)
	pool := c.pools[0]
	sent := webhooktest.Outage{Handlers: c.handlers, Stop: server.Stop, Start: server.Start, Store: "PostgreSQL",
		Answered: func(d webhooktest.Delivery, status int) {
			if status == http.StatusOK {
				readRow(t, pool, d.ID) // fails the test if the delivery was not stored
			}
		}}.Run(t, webhooktest.Deliveries(1000))

	waitFor(t, pool, pginbox.StatusProcessed, len(sent))
	effects := c.effects(t)
	for _, d := range sent {
		assert.Equal(t, 1, effects[d.ID], "delivery %s", short(d.ID))
	}
	assert.Len(t, effects, len(sent))
}

// PostgreSQL hanging (every one of its processes stopped with SIGSTOP): the
// Handler answers 500 within its limit instead of waiting with the
// database, whether its request waits for a pool connection or for an
// insert sent on a connection whose backend is frozen, and acknowledges
// nothing. Once PostgreSQL is back, resumed or killed and restarted, the
// service's retries are stored and every delivery is processed exactly
// once.
func TestHandlerAnswers5xxWhilePostgresHangs(t *testing.T) {
	for _, recovery := range []string{"resumed", "killed and restarted"} {
		t.Run(recovery, func(t *testing.T) {
			schema := newSchema(t)
			v := webhooktest.NewVerifier(t)
			pool := newPool(t, schema, 2)
			// Two Handlers on one pool: one with a short limit while
			// PostgreSQL hangs, one with the default before and after, so
			// that a slow machine cannot fail the deliveries that must be
			// stored.
			hasty, patient := pginbox.Handler(pool, v, pginbox.WithTimeout(200*time.Millisecond)), pginbox.Handler(pool, v)
			deliveries := webhooktest.Deliveries(5)
			require.Equal(t, http.StatusOK, deliveries[0].Send(patient), "stored before the hang, on a connection that stays open")

			t.Cleanup(func() { assert.NoError(t, server.Resume()) }) // also if the test fails
			require.NoError(t, server.Pause())
			statuses := sendAll(t, hasty, deliveries[1:]) // 4 at once on 2 connections: 2 wait for one
			for i, status := range statuses {
				assert.Equal(t, http.StatusInternalServerError, status, "delivery %d, sent while PostgreSQL hangs", i+1)
			}

			if recovery == "resumed" {
				require.NoError(t, server.Resume())
			} else {
				require.NoError(t, server.Kill())
				require.NoError(t, server.Start())
			}
			for _, d := range deliveries[1:] { // the service's retries
				retryUntilAcknowledged(t, patient, d)
			}
			effects := processAll(t, schema, len(deliveries))
			for _, d := range deliveries {
				assert.Equal(t, 1, effects[d.ID], "delivery %s", short(d.ID))
			}
			assert.Len(t, effects, len(deliveries))
		})
	}
}

// sendAll sends every delivery to h at once and returns their answers. It
// fails t if they are not all answered within 30 seconds, the time the
// service waits.
func sendAll(t *testing.T, h http.Handler, deliveries []webhooktest.Delivery) []int {
	t.Helper()
	statuses := make([]int, len(deliveries))
	var wg sync.WaitGroup
	for i, d := range deliveries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = d.Send(h)
		}()
	}
	answered := make(chan struct{})
	go func() {
		wg.Wait()
		close(answered)
	}()
	select {
	case <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("deliveries not answered within the 30 seconds the service waits")
	}
	return statuses
}

// retryUntilAcknowledged sends d to h again until it is answered 200, as the
// service retries, failing t after 10 seconds.
func retryUntilAcknowledged(t *testing.T, h http.Handler, d webhooktest.Delivery) {
	t.Helper()
	require.Eventually(t, func() bool { return d.Send(h) == http.StatusOK }, 10*time.Second, 10*time.Millisecond,
		"delivery %s not acknowledged 10s after PostgreSQL came back", short(d.ID))
}

// processAll runs a Worker on schema until n deliveries are processed, its
// callback recording each run in the table effects in the claim's
// transaction, and returns how many runs each delivery id had.
func processAll(t *testing.T, schema string, n int) map[string]int {
	t.Helper()
	ctx := context.Background()
	pool := newPool(t, schema, 4)
	_, err := pool.Exec(ctx, `CREATE TABLE effects (delivery_id text NOT NULL)`)
	require.NoError(t, err)
	stop := start(t, &pginbox.Worker{Pool: pool, Concurrency: 2, PollInterval: 10 * time.Millisecond,
		ProcessTx: func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
			_, err := tx.Exec(ctx, `INSERT INTO effects VALUES ($1)`, d.ID)
			return err
		}})
	waitFor(t, pool, pginbox.StatusProcessed, n)
	stop()
	return effectsOf(t, pool)
}
