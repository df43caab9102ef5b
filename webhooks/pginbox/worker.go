package pginbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// Defaults of the Worker's fields.
const (
	// DefaultConcurrency is one delivery at a time per Worker.
	DefaultConcurrency = 1
	// DefaultPollInterval is how long an idle Worker waits between looks.
	DefaultPollInterval = time.Second
	// DefaultMaxAttempts is the number of runs before a delivery is parked.
	DefaultMaxAttempts = 10
	// DefaultTimeout bounds one run of the callback.
	DefaultTimeout = time.Minute
)

// Statuses of a delivery in the inbox table's status column.
const (
	// StatusPending: stored, to be processed at next_attempt_at.
	StatusPending = "pending"
	// StatusProcessed: the callback succeeded.
	StatusProcessed = "processed"
	// StatusFailed: parked after MaxAttempts failures (or a stored body
	// that no longer parses); workers leave it alone. Inbox.Requeue and
	// Inbox.RequeueFailed make it pending again.
	StatusFailed = "failed"
)

// claimSQL locks the pending delivery due first that no other transaction
// has locked. The lock lasts until the claiming transaction ends, and ends
// with it if the worker's connection dies.
const claimSQL = `SELECT business, delivery_id, event_type, signed_at, body, failures
FROM ` + TableName + `
WHERE status = 'pending' AND next_attempt_at <= now()
ORDER BY next_attempt_at
LIMIT 1
FOR UPDATE SKIP LOCKED`

// succeededSQL records a successful run. Its time is clock_timestamp(), the
// database's time when the outcome is recorded, just after the callback
// returned: now() would be the start of the claiming transaction, before
// the callback ran. The database's clock, not the replica's, is the one
// claimSQL compares next_attempt_at with.
const succeededSQL = `UPDATE ` + TableName + `
SET status = 'processed', attempts = attempts + 1, processed_at = clock_timestamp()
WHERE business = $1 AND delivery_id = $2`

// failedSQL records a failed run: $3 the error, $4 the new status, $5 the
// wait before the next run in milliseconds, counted from when the callback
// returned (clock_timestamp(), as in succeededSQL).
const failedSQL = `UPDATE ` + TableName + `
SET status = $4, attempts = attempts + 1, failures = failures + 1, last_error = $3,
    next_attempt_at = clock_timestamp() + $5 * interval '1 millisecond'
WHERE business = $1 AND delivery_id = $2`

// The savepoint ProcessTx runs at: taken with the claim, released with the
// outcome (see record), after a rollback to it when the run failed.
const (
	savepointSQL           = `SAVEPOINT pginbox_process`
	rollbackToSavepointSQL = `ROLLBACK TO SAVEPOINT pginbox_process`
	releaseSavepointSQL    = `RELEASE SAVEPOINT pginbox_process`
)

// errTxOwned is returned by Commit and Rollback of the transaction given to
// ProcessTx: the Worker ends it.
var errTxOwned = errors.New("pginbox: the Worker commits or rolls back the delivery's transaction")

// A Worker processes the deliveries the Handler stored. Run any number of
// Workers, on any replica: each delivery is claimed by one of them at a
// time, with SELECT ... FOR UPDATE SKIP LOCKED inside a transaction that
// lasts while the callback runs and records its outcome.
//
// A delivery is processed at least once: if the Worker's process or
// connection dies before its transaction commits, PostgreSQL rolls it back,
// which releases the row, and another Worker processes the delivery again.
// With ProcessTx, whatever the callback writes in the transaction commits
// together with "processed", so those writes happen exactly once.
//
// A failed run is tried again after Backoff, up to MaxAttempts runs; then
// the delivery is parked with StatusFailed. The table keeps the attempts,
// the failures and the last error.
//
// Set exactly one of Process and ProcessTx; zero fields take their default.
// Each concurrent delivery holds one of the pool's connections while its
// callback runs: give the Workers a pool of their own, with at least
// Concurrency connections, and the Handler another (see "Two pools" in the
// package documentation).
type Worker struct {
	// Pool is the database holding the inbox table (see Migrate). Required.
	// Do not share it with the Handler: a Worker holds one of its
	// connections while each callback runs, and the Handler's inserts must
	// not wait for those. Callbacks should not use it either, but tx.
	Pool *pgxpool.Pool
	// Process is called with each delivery, its Event parsed with
	// webhooks.Parse from the stored body, and its Business the one
	// BusinessHandler stored it for ("" when Handler stored it). A nil
	// error marks the delivery processed; an error (or a panic) counts as
	// a failure.
	Process func(ctx context.Context, d *webhooks.Delivery) error
	// ProcessTx is called instead of Process, inside the transaction that
	// claimed the delivery (at a savepoint): writes made through tx commit
	// together with "processed", or are rolled back when it returns an error
	// or panics.
	// It must not commit or roll back tx.
	ProcessTx func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error
	// Concurrency is how many deliveries the Worker processes at once
	// (DefaultConcurrency when zero).
	Concurrency int
	// PollInterval is how long an idle Worker waits before it looks for
	// pending deliveries again, give or take a tenth, and how long it waits
	// after a database error (DefaultPollInterval when zero). A busy Worker
	// does not wait.
	PollInterval time.Duration
	// MaxAttempts is how many runs a delivery gets before it is parked as
	// failed (DefaultMaxAttempts when zero).
	MaxAttempts int
	// Backoff returns the wait before the next run after the given number of
	// failures, counted from 1 (when nil: 10 seconds, doubling each time, at
	// most an hour).
	Backoff func(failures int) time.Duration
	// Timeout bounds one run of the callback (DefaultTimeout when zero):
	// its context ends then, and the run counts as failed if the callback
	// returns an error. A run that cannot record its outcome (its
	// connection or process died) is rolled back and does not count toward
	// MaxAttempts.
	Timeout time.Duration
	// Logger receives the failures of callbacks (Warn) and of the database
	// (Error, unless OnError is set); nil logs nothing. It never gets a body.
	Logger *slog.Logger
	// OnError, when set, is given each failure of the database that Run
	// meets (claiming a delivery, recording its outcome) instead of the
	// Logger: for a program that reports them itself. Run retries after
	// PollInterval either way. It must not block.
	OnError func(ctx context.Context, err error)
	// Metrics, when not nil, counts the Worker's runs by outcome
	// (processed, retried, failed), its deliveries in flight and its
	// database errors (see NewMetrics). Give every Worker of the inbox the
	// Handler's Metrics.
	Metrics *Metrics
}

// Run processes deliveries until ctx ends, then waits for the deliveries in
// progress to finish (their callbacks within Timeout) and returns nil. A
// stopped Worker leaves nothing claimed. Database errors are logged and
// retried after PollInterval. Run returns an error at once when the Worker
// is misconfigured.
func (w *Worker) Run(ctx context.Context) error {
	cfg, err := w.withDefaults()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg.loop(ctx)
		}()
	}
	wg.Wait()
	return nil
}

// withDefaults checks w and returns a copy with the defaults filled in.
func (w *Worker) withDefaults() (*Worker, error) {
	cfg := *w
	switch {
	case cfg.Pool == nil:
		return nil, errors.New("pginbox: Worker.Pool is nil")
	case (cfg.Process == nil) == (cfg.ProcessTx == nil):
		return nil, errors.New("pginbox: set exactly one of Worker.Process and Worker.ProcessTx")
	case cfg.Concurrency < 0, cfg.PollInterval < 0, cfg.MaxAttempts < 0, cfg.Timeout < 0:
		return nil, errors.New("pginbox: negative Worker.Concurrency, PollInterval, MaxAttempts or Timeout")
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Backoff == nil {
		cfg.Backoff = defaultBackoff
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &cfg, nil
}

// defaultBackoff waits 10s after the first failure, doubling up to an hour.
func defaultBackoff(failures int) time.Duration {
	d := 10 * time.Second
	for i := 1; i < failures && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// loop processes deliveries one after the other until ctx ends, pausing
// when there is none or the database fails.
func (w *Worker) loop(ctx context.Context) {
	for ctx.Err() == nil {
		found, err := w.next(ctx)
		switch {
		case err != nil && w.OnError != nil:
			w.OnError(ctx, err)
		case err != nil && w.Logger != nil:
			w.Logger.ErrorContext(ctx, "pginbox: processing the inbox", "error", err.Error())
		}
		if found && err == nil {
			continue
		}
		jitter := time.Duration(rand.Int64N(int64(w.PollInterval)/5+1)) - w.PollInterval/10
		select {
		case <-ctx.Done():
		case <-time.After(w.PollInterval + jitter):
		}
	}
}

// ProcessNext processes the pending delivery due first, if there is one,
// as each of Run's loops does: it claims it, runs the callback and records
// the outcome, in one transaction that ctx ending does not cut short (a
// delivery in progress is finished). It reports whether it found a
// delivery; its error is the database's (a failure of the callback is
// recorded as the delivery's, not returned), or the Worker's
// misconfiguration. It is for a program that runs the Worker's loop under
// its own scheduling and backoff instead of Run.
func (w *Worker) ProcessNext(ctx context.Context) (found bool, err error) {
	cfg, err := w.withDefaults()
	if err != nil {
		return false, err
	}
	return cfg.next(ctx)
}

// next is processNext, counting a database failure in the Metrics.
func (w *Worker) next(ctx context.Context) (bool, error) {
	found, err := w.processNext(ctx)
	if err != nil {
		w.Metrics.databaseError()
	}
	return found, err
}

// recordTimeout bounds claiming a delivery and recording its outcome, on
// top of the callback's Timeout.
const recordTimeout = 30 * time.Second

// processNext claims the pending delivery due first, runs the callback and
// records the outcome, all in one transaction. It reports whether it found a
// delivery. The transaction does not end with ctx: a delivery in progress is
// finished when the Worker stops.
func (w *Worker) processNext(ctx context.Context) (found bool, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.Timeout+recordTimeout)
	defer cancel()
	tx, err := w.Pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx) // after Commit, this does nothing

	// The claim, and the savepoint ProcessTx runs at, travel together.
	var b pgx.Batch
	b.Queue(claimSQL)
	if w.ProcessTx != nil {
		b.Queue(savepointSQL)
	}
	br := tx.SendBatch(ctx, &b)
	var d webhooks.Delivery
	var eventType string
	var failures int
	err = br.QueryRow().Scan(&d.Business, &d.ID, &eventType, &d.Timestamp, &d.Body, &failures)
	if cerr := br.Close(); err == nil {
		err = cerr // the savepoint's answer
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pginbox: claiming a delivery: %w", err)
	}
	d.Type = webhooks.EventType(eventType)
	d.Timestamp = d.Timestamp.UTC()
	w.Metrics.claimed(1)
	defer w.Metrics.claimed(-1)

	permanent := false
	d.Event, err = webhooks.Parse(d.Type, d.Body)
	if err != nil {
		permanent = true // the stored body will not parse next time either
	} else {
		callCtx, cancelCall := context.WithTimeout(ctx, w.Timeout)
		err = w.call(callCtx, tx, &d)
		cancelCall()
	}
	result := outcomeProcessed
	if err == nil {
		err = w.record(ctx, tx, false, succeededSQL, d.Business, d.ID)
	} else {
		result, err = w.recordFailure(ctx, tx, &d, failures+1, permanent, err)
	}
	if err != nil {
		return true, fmt.Errorf("pginbox: recording the outcome of delivery %s: %w", name(&d), err)
	}
	if err := tx.Commit(ctx); err != nil {
		return true, fmt.Errorf("pginbox: committing delivery %s: %w", name(&d), err)
	}
	w.Metrics.add(result)
	return true, nil
}

// call runs the callback, turning a panic into an error. ProcessTx runs
// at the savepoint taken with the claim (see record).
func (w *Worker) call(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("pginbox: callback panicked: %v\n%s", p, debug.Stack())
		}
	}()
	if w.Process != nil {
		return w.Process(ctx, d)
	}
	return w.ProcessTx(ctx, ownedTx{tx}, d)
}

// recordFailure records a failed run of d, its failures-th: it parks d as
// failed once MaxAttempts runs failed, or at once for a permanent error, and
// otherwise schedules the next run after Backoff. It returns which of the
// two it did (outcomeFailed or outcomeRetried).
func (w *Worker) recordFailure(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery, failures int, permanent bool, cause error) (outcome, error) {
	result, status, wait := outcomeRetried, StatusPending, w.Backoff(failures)
	if permanent || failures >= w.MaxAttempts {
		result, status, wait = outcomeFailed, StatusFailed, 0
	}
	if w.Logger != nil {
		attrs := []any{"delivery_id", d.ID, "event", string(d.Type), "failures", failures, "status", status, "error", cause.Error()}
		if d.Business != "" {
			attrs = append(attrs, "business", d.Business)
		}
		w.Logger.WarnContext(ctx, "pginbox: delivery failed", attrs...)
	}
	err := w.record(ctx, tx, true, failedSQL, d.Business, d.ID, clip(cause.Error()), status, wait.Milliseconds())
	return result, err
}

// record runs sql, which records the outcome of a run. With ProcessTx, the
// savepoint it ran at goes in the same round trip, first: rolled back to
// when the run failed (its writes undone, whether it returned an error or
// panicked), then released, so that the outcome is written by the
// transaction that locked the row: written under the savepoint, the update
// of a row its parent locked makes PostgreSQL record the two in a new
// MultiXact (about a fifth fewer deliveries a second in BenchmarkProcess's
// ProcessTx case).
func (w *Worker) record(ctx context.Context, tx pgx.Tx, failed bool, sql string, args ...any) error {
	if w.ProcessTx == nil {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	}
	var b pgx.Batch
	if failed {
		b.Queue(rollbackToSavepointSQL)
	}
	b.Queue(releaseSavepointSQL)
	b.Queue(sql, args...)
	return tx.SendBatch(ctx, &b).Close()
}

// name names d in an error: its id, after its business if it has one.
func name(d *webhooks.Delivery) string {
	if d.Business == "" {
		return d.ID
	}
	return d.Business + "/" + d.ID
}

// clip makes an error message storable as text: at most 4000 bytes of valid
// UTF-8, without the NUL bytes PostgreSQL refuses.
func clip(s string) string {
	if len(s) > 4000 {
		s = s[:4000]
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// ownedTx is the transaction given to ProcessTx: the Worker ends it.
type ownedTx struct{ pgx.Tx }

// Commit refuses: the Worker commits.
func (ownedTx) Commit(context.Context) error { return errTxOwned }

// Rollback refuses: the Worker rolls back.
func (ownedTx) Rollback(context.Context) error { return errTxOwned }
