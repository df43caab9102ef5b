package pgmirror

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// maxDependencyBackoff caps the wait between attempts to reach PostgreSQL
// or the API while it is away.
const maxDependencyBackoff = 30 * time.Second

// A dependency is PostgreSQL or the API as every loop of the mirror sees
// it. However many loops fail while it is away, it logs one line when it
// goes away (with the first error) and one when it is back (with how long
// it was away and how many failures the loops met meanwhile): the loops
// report to it instead of logging each failure.
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

// ok records that the dependency answered; the first answer after it went
// away is logged, at Info.
func (d *dependency) ok(ctx context.Context) {
	d.mu.Lock()
	downAt, failures := d.downAt, d.failures
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

// sleep waits for wait, or less when the dependency is away and another
// loop finds it back meanwhile, and reports whether ctx is still alive: a
// loop waiting after a failure tries again as soon as one of them (the
// Handler storing a delivery, say) sees the dependency answer.
func (d *dependency) sleep(ctx context.Context, wait time.Duration) bool {
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
	}
	return true
}

// up reports whether the dependency answered the last attempt to reach it.
func (d *dependency) up() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.downAt.IsZero()
}

// retryWait is the wait after the n-th failure in a row of a loop reaching
// a dependency: a second, doubling, at most maxDependencyBackoff, give or
// take a tenth so that replicas and loops do not retry in step.
func retryWait(n int) time.Duration {
	return jitter(min(time.Second<<min(max(n-1, 0), 6), maxDependencyBackoff))
}

// apiWait is the wait after the n-th failure in a row of a loop reaching
// the API: retryWait(n), or longer when the service asked for it (the
// Retry-After of a 429 or a 503).
func apiWait(n int, err error) time.Duration {
	wait := retryWait(n)
	var apiErr *invoicing.Error
	if errors.As(err, &apiErr) && apiErr.RetryAfter > wait {
		wait = apiErr.RetryAfter
	}
	return wait
}

// apiFailure marks the error of a request to the service, so that a loop
// tells it from the database's (both can be network errors). Errors.Is and
// errors.As see through it.
type apiFailure struct{ error }

func (e apiFailure) Unwrap() error { return e.error }

// fromAPI marks err, when not nil, as a failure of a request to the service.
func fromAPI(err error) error {
	if err == nil {
		return nil
	}
	return apiFailure{err}
}

// dependencyOf returns the dependency that err says is away, for a loop to
// report the failure to it (which logs the first) and wait with backoff: the
// business's API for a failed request to the service that trying again may
// mend (a network error, a 5xx, a 429; see permanent), PostgreSQL for a
// database that cannot be reached (see databaseAway). It returns nil for
// anything else (no error, a request the service refused, a paused
// business, a statement that failed, ctx ending), which the loop logs or
// returns as it is.
func (m *tenant) dependencyOf(err error) *dependency {
	var a apiFailure
	switch {
	case err == nil || errors.Is(err, context.Canceled) || paused(err):
		return nil
	case m.databaseAway(err):
		return m.db
	case errors.As(err, &a):
		if permanent(a.error) {
			return nil
		}
		return m.api
	}
	return nil
}

// databaseAway reports whether err means that PostgreSQL could not be
// reached (see unreachable): a statement's, or the budget's while a call
// took a token (the call's error then wraps it), never a request's to the
// service.
func (m *Mirror) databaseAway(err error) bool {
	var b budgetError
	if errors.As(err, &b) {
		return unreachable(b.error)
	}
	var a apiFailure
	return !errors.As(err, &a) && unreachable(err)
}

// unreachable reports whether err means that PostgreSQL could not be
// reached or is going away (a refused or broken connection, a server
// shutting down or starting up, too many connections), rather than a
// failure of the statement itself.
func unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || // connection exception
			pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" || // shutting down, starting up
			pgErr.Code == "53300" // too many connections
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || pgconn.SafeToRetry(err)
}

// oneLine is err's message on one line: pgx puts each address it tried on
// a line of its own ("failed to connect to ...:\n\t127.0.0.1:5432 ...").
// pgx's messages name the user and the database, never the password.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
