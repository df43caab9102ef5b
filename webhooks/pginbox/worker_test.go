package pginbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testkit"
	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// store stores deliveries through a Handler.
func store(t testing.TB, pool *pgxpool.Pool, deliveries ...webhooktest.Delivery) {
	t.Helper()
	h := pginbox.Handler(pool, webhooktest.NewVerifier(t))
	for _, d := range deliveries {
		require.Equal(t, http.StatusOK, d.Send(h))
	}
}

// start runs w until the returned stop is called or the test ends, and
// checks that Run returned nil.
func start(t testing.TB, w *pginbox.Worker) (stop func()) {
	t.Helper()
	return testkit.Start(t, w.Run)
}

// waitFor waits until n rows of the inbox have status.
func waitFor(t testing.TB, pool *pgxpool.Pool, status string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { // no require here: this runs in a goroutine of its own
		got, err := count(pool, status)
		return err == nil && got == n
	}, 30*time.Second, 5*time.Millisecond, "waiting for %d %s deliveries", n, status)
}

func TestWorkerProcessesTypedEvents(t *testing.T) {
	pool := newPool(t, newSchema(t), 4)
	deliveries := webhooktest.Deliveries(3)
	store(t, pool, deliveries...)

	var mu sync.Mutex
	got := map[string]*webhooks.Delivery{}
	start(t, &pginbox.Worker{Pool: pool, PollInterval: 10 * time.Millisecond, Process: func(_ context.Context, d *webhooks.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		got[d.ID] = d
		return nil
	}})
	waitFor(t, pool, pginbox.StatusProcessed, 3)

	mu.Lock()
	defer mu.Unlock()
	for _, want := range deliveries {
		d := got[want.ID]
		require.NotNil(t, d)
		assert.Equal(t, webhooks.EventContactCreated, d.Type)
		assert.Equal(t, want.Body, d.Body)
		assert.WithinDuration(t, time.Now(), d.Timestamp, time.Minute)
		assert.Equal(t, time.UTC, d.Timestamp.Location())
		e, ok := d.Event.(*webhooks.ContactCreated)
		require.True(t, ok, "%T", d.Event)
		assert.Equal(t, want.ID, e.ContactID)
		r := readRow(t, pool, want.ID)
		assert.Equal(t, 1, r.Attempts)
		assert.Zero(t, r.Failures)
	}
}

// The Workers process each business's delivery on its own: the callback
// gets its Business, and the outcome of one business's run is recorded on
// its row only, although the two share the delivery id.
func TestWorkerProcessesEachBusinessApart(t *testing.T) {
	pool := newPool(t, newSchema(t), 4)
	h := businessMux(pginbox.BusinessHandler(pool, twoBusinesses(t)))
	d := webhooktest.Deliveries(1)[0]
	require.Equal(t, http.StatusOK, sendTo(h, "/webhooks/acme", acmeSecret, d))
	require.Equal(t, http.StatusOK, sendTo(h, "/webhooks/globex", globexSecret, d))

	got := make(chan string, 10)
	start(t, &pginbox.Worker{Pool: pool, PollInterval: 10 * time.Millisecond, MaxAttempts: 1,
		ProcessTx: func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
			got <- d.Business
			if d.Business == "globex" {
				return errors.New("globex's callback fails")
			}
			_, err := tx.Exec(ctx, `CREATE TABLE acme_effect (id text)`) // once, or the second run fails
			return err
		}})
	waitFor(t, pool, pginbox.StatusProcessed, 1)
	waitFor(t, pool, pginbox.StatusFailed, 1)
	assert.ElementsMatch(t, []string{"acme", "globex"}, []string{<-got, <-got})

	status := map[string]string{}
	for _, r := range allRows(t, pool, `SELECT business, status, coalesce(last_error, '') FROM invoicing_webhook_inbox`) {
		status[r[0].(string)] = r[1].(string) + " " + r[2].(string)
	}
	assert.Equal(t, map[string]string{"acme": "processed ", "globex": "failed globex's callback fails"}, status)
}

// A callback that fails twice then succeeds: processed once, after two
// backoffs, with the failure count and the last error kept.
func TestWorkerRetriesFailuresWithBackoff(t *testing.T) {
	pool, looked := newLookingPool(t, newSchema(t), 4)
	d := webhooktest.Deliveries(1)[0]
	store(t, pool, d)

	var runs, successes atomic.Int32
	var mu sync.Mutex
	var backoffs []int
	start(t, &pginbox.Worker{
		Pool: pool, PollInterval: 10 * time.Millisecond,
		Backoff: func(failures int) time.Duration {
			mu.Lock()
			defer mu.Unlock()
			backoffs = append(backoffs, failures)
			return 50 * time.Millisecond
		},
		Process: func(context.Context, *webhooks.Delivery) error {
			if n := runs.Add(1); n <= 2 {
				return fmt.Errorf("downstream unavailable (run %d)", n)
			}
			successes.Add(1)
			return nil
		},
	})
	waitFor(t, pool, pginbox.StatusProcessed, 1)

	r := readRow(t, pool, d.ID)
	assert.Equal(t, 3, r.Attempts)
	assert.Equal(t, 2, r.Failures)
	require.NotNil(t, r.LastError)
	assert.Equal(t, "downstream unavailable (run 2)", *r.LastError)
	looked.waitMore(t) // looking again changes nothing
	assert.Equal(t, int32(3), runs.Load())
	assert.Equal(t, int32(1), successes.Load())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []int{1, 2}, backoffs)
}

func TestWorkerParksDeliveryAfterMaxAttempts(t *testing.T) {
	ctx := context.Background()
	pool, looked := newLookingPool(t, newSchema(t), 4)
	d := webhooktest.Deliveries(1)[0]
	store(t, pool, d)

	var runs atomic.Int32
	var fixed atomic.Bool
	start(t, &pginbox.Worker{
		Pool: pool, PollInterval: 10 * time.Millisecond, MaxAttempts: 3,
		Backoff: func(int) time.Duration { return time.Millisecond },
		Process: func(context.Context, *webhooks.Delivery) error {
			runs.Add(1)
			if fixed.Load() {
				return nil
			}
			return errors.New("always fails")
		},
	})
	waitFor(t, pool, pginbox.StatusFailed, 1)
	looked.waitMore(t)
	assert.Equal(t, int32(3), runs.Load(), "a parked delivery is left alone")
	r := readRow(t, pool, d.ID)
	assert.Equal(t, 3, r.Failures)
	assert.Equal(t, "always fails", *r.LastError)

	// The requeue of StatusFailed's documentation.
	fixed.Store(true)
	_, err := pool.Exec(ctx, `UPDATE invoicing_webhook_inbox SET status = 'pending', next_attempt_at = now()
		WHERE delivery_id = $1 AND status = 'failed'`, d.ID)
	require.NoError(t, err)
	waitFor(t, pool, pginbox.StatusProcessed, 1)
	assert.Equal(t, int32(4), runs.Load())
}

// ProcessTx's writes commit with "processed", and are rolled back, while the
// failure is still recorded, when it fails: by returning an error, or by
// panicking.
func TestWorkerProcessTxWritesCommitWithProcessed(t *testing.T) {
	for name, fail := range map[string]func() error{
		"error": func() error { return errors.New("fails after writing") },
		"panic": func() error { panic("fails after writing") },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			pool := newPool(t, newSchema(t), 4)
			_, err := pool.Exec(ctx, `CREATE TABLE effects (delivery_id text NOT NULL, run int NOT NULL)`)
			require.NoError(t, err)
			d := webhooktest.Deliveries(1)[0]
			store(t, pool, d)

			var runs atomic.Int32
			var commitErr, rollbackErr atomic.Value
			start(t, &pginbox.Worker{
				Pool: pool, PollInterval: 10 * time.Millisecond,
				Backoff: func(int) time.Duration { return time.Millisecond },
				ProcessTx: func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
					run := runs.Add(1)
					if _, err := tx.Exec(ctx, `INSERT INTO effects VALUES ($1, $2)`, d.ID, run); err != nil {
						return err
					}
					commitErr.Store(tx.Commit(ctx))
					rollbackErr.Store(tx.Rollback(ctx))
					if run == 1 {
						return fail()
					}
					return nil
				},
			})
			waitFor(t, pool, pginbox.StatusProcessed, 1)

			rows, err := pool.Query(ctx, `SELECT run FROM effects WHERE delivery_id = $1`, d.ID)
			require.NoError(t, err)
			effects, err := pgx.CollectRows(rows, pgx.RowTo[int])
			require.NoError(t, err)
			assert.Equal(t, []int{2}, effects, "the failed run's write was rolled back")
			r := readRow(t, pool, d.ID)
			assert.Equal(t, 1, r.Failures)
			assert.Contains(t, *r.LastError, "fails after writing")
			assert.ErrorContains(t, commitErr.Load().(error), "the Worker commits or rolls back")
			assert.ErrorContains(t, rollbackErr.Load().(error), "the Worker commits or rolls back")
		})
	}
}

func TestWorkerCountsPanicAsFailure(t *testing.T) {
	pool := newPool(t, newSchema(t), 4)
	d := webhooktest.Deliveries(1)[0]
	store(t, pool, d)
	var runs atomic.Int32
	start(t, &pginbox.Worker{
		Pool: pool, PollInterval: 10 * time.Millisecond,
		Backoff: func(int) time.Duration { return time.Millisecond },
		Process: func(context.Context, *webhooks.Delivery) error {
			if runs.Add(1) == 1 {
				panic("callback bug")
			}
			return nil
		},
	})
	waitFor(t, pool, pginbox.StatusProcessed, 1)
	r := readRow(t, pool, d.ID)
	assert.Equal(t, 1, r.Failures)
	assert.Contains(t, *r.LastError, "pginbox: callback panicked: callback bug")
}

func TestWorkerParksBodyThatNoLongerParses(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t, newSchema(t), 4)
	_, err := pool.Exec(ctx, `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body)
		VALUES ('bad', 'contact.created', now(), '{"contact_id": 7}')`)
	require.NoError(t, err)
	var runs atomic.Int32
	start(t, &pginbox.Worker{Pool: pool, PollInterval: 10 * time.Millisecond, Process: func(context.Context, *webhooks.Delivery) error {
		runs.Add(1)
		return nil
	}})
	waitFor(t, pool, pginbox.StatusFailed, 1)
	r := readRow(t, pool, "bad")
	assert.Equal(t, 1, r.Failures)
	assert.Contains(t, *r.LastError, "invalid payload")
	assert.Zero(t, runs.Load(), "the callback never sees it")
}

func TestWorkerTimesOutSlowCallback(t *testing.T) {
	pool := newPool(t, newSchema(t), 4)
	d := webhooktest.Deliveries(1)[0]
	store(t, pool, d)
	start(t, &pginbox.Worker{Pool: pool, PollInterval: 10 * time.Millisecond, MaxAttempts: 1, Timeout: 50 * time.Millisecond,
		Process: func(ctx context.Context, _ *webhooks.Delivery) error {
			<-ctx.Done()
			return ctx.Err()
		}})
	waitFor(t, pool, pginbox.StatusFailed, 1)
	r := readRow(t, pool, d.ID)
	assert.Equal(t, 1, r.Failures)
	assert.Equal(t, "context deadline exceeded", *r.LastError)
}

// Stopping a Worker lets the delivery in progress finish, then Run returns.
func TestWorkerStopsCleanly(t *testing.T) {
	pool := newPool(t, newSchema(t), 4)
	d := webhooktest.Deliveries(1)[0]
	store(t, pool, d)

	entered, release := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	w := &pginbox.Worker{Pool: pool, PollInterval: 10 * time.Millisecond, Process: func(ctx context.Context, _ *webhooks.Delivery) error {
		close(entered)
		<-release
		return ctx.Err() // the callback's context outlives Run's
	}}
	go func() { returned <- w.Run(ctx) }()
	<-entered
	cancel()
	select {
	case <-returned:
		t.Fatal("Run returned with a delivery in progress")
	default:
	}
	close(release)
	select {
	case err := <-returned:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	assert.Equal(t, pginbox.StatusProcessed, readRow(t, pool, d.ID).Status)
}

func TestWorkerRejectsMisconfiguration(t *testing.T) {
	pool := newPool(t, "public", 1)
	fn := func(context.Context, *webhooks.Delivery) error { return nil }
	fnTx := func(context.Context, pgx.Tx, *webhooks.Delivery) error { return nil }
	for name, w := range map[string]*pginbox.Worker{
		"no pool":              {Process: fn},
		"no callback":          {Pool: pool},
		"two callbacks":        {Pool: pool, Process: fn, ProcessTx: fnTx},
		"negative concurrency": {Pool: pool, Process: fn, Concurrency: -1},
	} {
		assert.Error(t, w.Run(context.Background()), name)
	}
}

// processed_at, and the next attempt after a failure, are counted from when
// the callback returned, not from when the delivery was claimed: the
// callback returns only once the database's clock has passed the claim.
func TestWorkerTimesOutcomeNotClaim(t *testing.T) {
	for _, outcome := range []string{"success", "failure"} {
		t.Run(outcome, func(t *testing.T) {
			ctx := context.Background()
			schema := newSchema(t)
			admin := newPool(t, schema, 2)
			d := webhooktest.Deliveries(1)[0]
			store(t, admin, d)

			const backoff = time.Hour
			app := schema + "_worker"
			entered, release := make(chan struct{}), make(chan struct{})
			start(t, &pginbox.Worker{Pool: newNamedPool(t, schema, app, 2), PollInterval: 10 * time.Millisecond,
				Backoff: func(int) time.Duration { return backoff },
				Process: func(context.Context, *webhooks.Delivery) error {
					close(entered)
					<-release
					if outcome == "failure" {
						return errors.New("downstream unavailable")
					}
					return nil
				}})
			var once sync.Once
			unblock := func() { once.Do(func() { close(release) }) }
			t.Cleanup(unblock) // before the Worker's, which waits for the callback
			<-entered

			var claimedAt, releasedAt time.Time
			require.NoError(t, admin.QueryRow(ctx, `SELECT xact_start FROM pg_stat_activity
				WHERE application_name = $1 AND xact_start IS NOT NULL`, app).Scan(&claimedAt))
			require.Eventually(t, func() bool { // the database's clock moves past the claim
				err := admin.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&releasedAt)
				return err == nil && releasedAt.After(claimedAt)
			}, 10*time.Second, time.Millisecond)
			unblock()

			var processedAt *time.Time
			var nextAttemptAt time.Time
			require.Eventually(t, func() bool { // the outcome is recorded
				var attempts int
				err := admin.QueryRow(ctx, `SELECT attempts, processed_at, next_attempt_at FROM invoicing_webhook_inbox
					WHERE delivery_id = $1`, d.ID).Scan(&attempts, &processedAt, &nextAttemptAt)
				return err == nil && attempts == 1
			}, 30*time.Second, 5*time.Millisecond)
			if outcome == "success" {
				require.NotNil(t, processedAt)
				assert.False(t, processedAt.Before(releasedAt), "processed_at %v is before the callback returned (after %v); the claim was at %v",
					processedAt, releasedAt, claimedAt)
			} else {
				assert.Nil(t, processedAt)
				assert.False(t, nextAttemptAt.Before(releasedAt.Add(backoff)), "next attempt %v is sooner than %v after the callback failed (after %v); the claim was at %v",
					nextAttemptAt, backoff, releasedAt, claimedAt)
			}
		})
	}
}

// ProcessNext is one step of Run's loops: it processes the delivery due
// first and says whether there was one; a database failure is its error
// (a callback's failure is the delivery's).
func TestProcessNextIsOneStepOfTheLoop(t *testing.T) {
	pool := newPool(t, newSchema(t), 2)
	deliveries := webhooktest.Deliveries(2)
	store(t, pool, deliveries...)
	var seen []string
	w := &pginbox.Worker{Pool: pool, Process: func(_ context.Context, d *webhooks.Delivery) error {
		seen = append(seen, d.ID)
		if len(seen) == 2 {
			return errors.New("the callback's own failure")
		}
		return nil
	}}
	ctx := context.Background()
	for range 2 {
		found, err := w.ProcessNext(ctx)
		require.NoError(t, err)
		assert.True(t, found)
	}
	found, err := w.ProcessNext(ctx)
	require.NoError(t, err)
	assert.False(t, found, "none due: the failed one waits for its backoff")
	assert.ElementsMatch(t, []string{deliveries[0].ID, deliveries[1].ID}, seen)

	broken := &pginbox.Worker{Pool: newPool(t, emptySchema(t), 1), Process: w.Process} // no inbox table
	_, err = broken.ProcessNext(ctx)
	assert.ErrorContains(t, err, "claiming a delivery")
	_, err = (&pginbox.Worker{Pool: pool}).ProcessNext(ctx)
	assert.ErrorContains(t, err, "exactly one of", "misconfigured")
}

// With OnError, Run gives its database failures to it rather than to the
// Logger.
func TestWorkerGivesDatabaseFailuresToOnError(t *testing.T) {
	var logs bytes.Buffer
	failures := make(chan error, 100)
	start(t, &pginbox.Worker{Pool: newPool(t, emptySchema(t), 1), PollInterval: 10 * time.Millisecond,
		Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
		OnError: func(_ context.Context, err error) { failures <- err },
		Process: func(context.Context, *webhooks.Delivery) error { return nil }})
	select {
	case err := <-failures:
		assert.ErrorContains(t, err, "claiming a delivery")
	case <-time.After(30 * time.Second):
		t.Fatal("no failure reached OnError")
	}
	assert.NotContains(t, logs.String(), "processing the inbox")
}
