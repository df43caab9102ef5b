package pgmirror

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// Every long-running loop of the mirror (the inbox workers, the fetchers,
// the walks, the business watcher, the pruning) is a step function run by
// the supervisor, and every failure, of a loop's step or of a business's
// work (a fetch, a walk), goes to one decision (failed): it reports a
// dependency away to the dependency (which logs the first failure and the
// recovery), pauses a business whose own calls fail, stops the mirror when
// waiting cannot mend the failure, and gives the one backoff to wait.

// Backoff caps.
const (
	// maxBackoff caps the wait between attempts of a loop, or of a
	// business's work, after failures: about 30 seconds.
	maxBackoff = 30 * time.Second
	// maxRecordBackoff caps the wait between attempts to fetch one record
	// that keeps failing on its own (the service does not show it, or
	// refuses its id).
	maxRecordBackoff = 5 * time.Minute
)

// backoff is the wait after the n-th failure in a row: a second, doubling,
// at most limit, give or take a tenth (so that replicas and loops do not
// retry in step), and at least what the service asked for when err is its
// failure with a Retry-After.
func backoff(n int, limit time.Duration, err error) time.Duration {
	wait := jitter(min(time.Second<<min(max(n-1, 0), 16), limit))
	var apiErr *apiError
	if errors.As(err, &apiErr) && apiErr.retryAfter > wait {
		wait = apiErr.retryAfter
	}
	return wait
}

// jitter returns d give or take a tenth.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d - d/10 + rand.N(d/5+1)
}

// A step is one round of a loop's work. It returns how long to wait before
// the next round (0: at once), errDone when the loop has no more work, or
// a failure, which the supervisor hands to failed.
type step func(ctx context.Context) (time.Duration, error)

// errDone ends a loop that has finished its work.
var errDone = errors.New("pgmirror: done")

// A supervisor runs loops until its context ends, or until one of them, or
// a business's work, meets a failure that must stop the mirror.
type supervisor struct {
	m      *Mirror
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

// supervise returns a supervisor of loops on m, living until ctx ends.
func (m *Mirror) supervise(ctx context.Context) *supervisor {
	s := &supervisor{m: m}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	return s
}

// loop runs fn again and again, waiting as it asks after a success (less
// when wake fires; nil never does) and with backoff after a failure, until
// the supervisor stops or fn returns errDone.
func (s *supervisor) loop(name string, wake <-chan struct{}, fn step) {
	s.wg.Go(func() {
		ctx := s.ctx
		failures := 0
		for ctx.Err() == nil {
			began := time.Now()
			wait, err := fn(ctx)
			woken := wake
			switch {
			case errors.Is(err, errDone):
				return
			case err != nil:
				failures++
				var stop error
				if wait, stop = s.m.failed(ctx, nil, name, err, failures); stop != nil {
					s.stop(stop)
					return
				}
				woken = nil // after a failure, the whole wait (unless the database comes back)
			default:
				failures = 0
				s.m.db.ok(ctx, began)
			}
			s.m.db.sleep(ctx, wait, woken)
		}
	})
}

// do runs fn, a piece of work of the loops (a fetch, a walk), which
// decides its own failures (see failed) and returns the one that must stop
// the mirror, if any.
func (s *supervisor) do(fn func(ctx context.Context) error) {
	s.wg.Go(func() {
		if err := fn(s.ctx); err != nil {
			s.stop(err)
		}
	})
}

// stop stops every loop, for err: wait returns it.
func (s *supervisor) stop(err error) { s.cancel(err) }

// wait waits until every loop and piece of work has returned, and returns
// the failure that stopped them, or nil.
func (s *supervisor) wait() error {
	s.wg.Wait()
	err := context.Cause(s.ctx)
	s.cancel(nil)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Pauses of a business whose own calls cannot wait (see failed).
const (
	// refusedPause is how long a business whose key the service refuses
	// (401, 403), or whose requests it rejects, is paused before one call
	// tries again: Businesses.Add with a new key ends the pause at once.
	refusedPause = 15 * time.Minute
	// massDeletionPause is how long a business whose records mostly
	// vanished (ErrMassDeletion) is paused: until someone looks.
	massDeletionPause = 24 * time.Hour
)

// failed decides what follows err, the n-th failure in a row of work
// named what, of business t (nil for a loop's step, which is no one
// business's), and returns how long the work waits before it is tried
// again, and the error that must stop the mirror, if any:
//
//   - PostgreSQL away: reported to its dependency (which logs the first
//     failure); backoff.
//   - The service failing the business's calls (a network error, a 5xx, a
//     429 storm): reported to the business's API dependency, and the
//     business paused for the backoff (raised to a Retry-After), so that no
//     replica calls the service for it meanwhile.
//   - The business paused: wait for the pause's end.
//   - The service refusing the business's key or requests, or most of its
//     records vanished (ErrMassDeletion): for a business that stops the
//     mirror (Config.Client's), the error to stop with; for the others a
//     pause (refusedPause, massDeletionPause), logged at Error.
//   - Anything else (a statement that fails): logged at Error; backoff.
func (m *Mirror) failed(ctx context.Context, t *tenant, what string, err error, n int) (time.Duration, error) {
	var dbErr *store.Error
	var apiErr *apiError
	var stop *stopError
	switch {
	case ctx.Err() != nil:
		return 0, nil
	case errors.As(err, &stop):
		return 0, stop.error
	case errors.As(err, &dbErr) && dbErr.Away():
		m.db.failed(ctx, err)
		return backoff(n, maxBackoff, nil), nil
	case t != nil && errors.As(err, &apiErr) && apiErr.kind == apiPaused:
		return max(time.Until(apiErr.until), time.Millisecond), nil
	case t != nil && errors.As(err, &apiErr) && apiErr.kind == apiTransient:
		wait := backoff(int(t.failures.Add(1)), maxBackoff, err)
		t.api.failed(ctx, err)
		t.pause(ctx, wait, oneLine(err))
		return wait, nil
	case t != nil && (apiErr != nil || errors.Is(err, ErrMassDeletion)):
		if t.stops {
			return 0, err
		}
		pause, msg, reason := refusedPause, "pgmirror: the service refused a business's requests; the business is paused",
			"the service refused the business's requests (check its API key): "+oneLine(err)
		if errors.Is(err, ErrMassDeletion) {
			pause, msg, reason = massDeletionPause, "pgmirror: most of a business's records vanished; the business is paused", oneLine(err)
		}
		t.log.ErrorContext(ctx, msg, "for", pause.String(), "error", oneLine(err))
		t.pause(ctx, pause, reason)
		return pause, nil
	}
	wait := backoff(n, maxBackoff, nil)
	log := m.log
	if t != nil {
		log = t.log
	}
	if errors.Is(err, errStaleSelection) { // expected while replicas take a new Selection
		log.InfoContext(ctx, "pgmirror: "+what+": the business's selection changed meanwhile; trying again", "retry_in", wait.String())
		return wait, nil
	}
	log.ErrorContext(ctx, "pgmirror: "+what+" failed; trying again", "retry_in", wait.String(), "error", oneLine(err))
	return wait, nil
}

// A dependency is PostgreSQL or the service (as a business's calls find
// it) as every loop of the mirror sees it. However many loops fail while
// it is away, it logs one line when it goes away (with the first error)
// and one when it is back (with how long it was away and how many failures
// the loops met meanwhile): the loops report to it instead of logging each
// failure.
type dependency struct {
	name string // "PostgreSQL" or "the API", as the log lines say
	log  *slog.Logger

	mu       sync.Mutex
	downAt   time.Time     // zero while it answers
	failures int           // failures since downAt
	back     chan struct{} // while it is away: closed when it answers again
}

func newDependency(name string, log *slog.Logger) *dependency {
	return &dependency{name: name, log: log}
}

// failed records a failure to reach the dependency; the first since it last
// answered is logged, at Warn (the loops retry).
func (d *dependency) failed(ctx context.Context, err error) {
	d.mu.Lock()
	first := d.downAt.IsZero()
	if first {
		d.downAt, d.back = time.Now(), make(chan struct{})
	}
	d.failures++
	d.mu.Unlock()
	if first {
		d.log.WarnContext(ctx, "pgmirror: "+d.name+" is not answering; retrying with backoff until it does",
			"error", oneLine(err))
	}
}

// ok records that the dependency answered an attempt that began at began
// (zero: unknown); the first answer after it went away is logged, at
// Info. An attempt that began before it went away says nothing of it now
// (a statement answered as the server was killed): it is ignored.
func (d *dependency) ok(ctx context.Context, began time.Time) {
	d.mu.Lock()
	downAt, failures := d.downAt, d.failures
	if !began.IsZero() && began.Before(downAt) {
		d.mu.Unlock()
		return
	}
	if !downAt.IsZero() {
		close(d.back)
	}
	d.downAt, d.failures = time.Time{}, 0
	d.mu.Unlock()
	if !downAt.IsZero() {
		d.log.InfoContext(ctx, "pgmirror: "+d.name+" answers again",
			"away", time.Since(downAt).Round(time.Millisecond).String(), "failures", failures)
	}
}

// sleep waits for wait, less when wake fires, or when the dependency is
// away and another loop finds it back meanwhile (the Handler storing a
// delivery, say), and reports whether ctx is still alive.
func (d *dependency) sleep(ctx context.Context, wait time.Duration, wake <-chan struct{}) bool {
	if wait <= 0 {
		return ctx.Err() == nil
	}
	var back chan struct{} // nil, which never fires, while it answers
	d.mu.Lock()
	if !d.downAt.IsZero() {
		back = d.back
	}
	d.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-back:
	case <-wake:
	}
	return true
}

// up reports whether the dependency answered the last attempt to reach it.
func (d *dependency) up() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.downAt.IsZero()
}

// sleep waits for d or until ctx ends, and reports whether ctx is still
// alive.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// oneLine is err's message on one line: pgx puts each address it tried on
// a line of its own ("failed to connect to ...:\n\t127.0.0.1:5432 ...").
// pgx's messages name the user and the database, never the password.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
