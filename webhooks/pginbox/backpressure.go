package pginbox

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of Backpressure's fields.
const (
	// DefaultMaxPending is the backlog of due deliveries at which the
	// Handler starts answering 503: 10,000, minutes of work for a Worker
	// whose callback takes tens of milliseconds, and a bound on what
	// each check of the backlog counts.
	DefaultMaxPending = 10000
	// DefaultMaxPendingAge is how long the oldest due delivery may have
	// waited before the Handler answers 503: 5 minutes, well above what
	// a callback within its DefaultTimeout (1 minute) holds a delivery.
	DefaultMaxPendingAge = 5 * time.Minute
	// DefaultRetryAfter is the Retry-After of the Handler's 503s: a
	// minute, the service's first retry.
	DefaultRetryAfter = time.Minute
	// DefaultCheckInterval is how often the Handler reads the backlog
	// from the table.
	DefaultCheckInterval = time.Second
)

// Backpressure configures WithBackpressure: the backlog at which the
// Handler refuses deliveries. Zero fields take their default; a negative
// MaxPending or MaxPendingAge turns that limit off.
type Backpressure struct {
	// MaxPending is the number of due deliveries (pending and not waiting
	// out a backoff, those in progress included) at which the Handler
	// answers 503 (DefaultMaxPending).
	MaxPending int
	// MaxPendingAge is how long the oldest due delivery may have waited
	// for a Worker (since it was received, or since its backoff ended)
	// before the Handler answers 503 (DefaultMaxPendingAge). A delivery
	// waiting out its backoff after a failure is not waiting for a
	// Worker: however old, it does not count, so that one delivery that
	// keeps failing does not close the inbox.
	MaxPendingAge time.Duration
	// RetryAfter is the Retry-After header of a 503, in whole seconds, at
	// least 1 (DefaultRetryAfter).
	RetryAfter time.Duration
	// CheckInterval is how often the Handler reads the backlog from the
	// table (DefaultCheckInterval): at most one query per interval, in
	// the background, whatever the traffic.
	CheckInterval time.Duration
}

// WithBackpressure makes the Handler (or BusinessHandler) refuse new
// deliveries while the Workers are behind: while at least b.MaxPending
// deliveries are due, or the oldest due one has waited b.MaxPendingAge, it
// answers 503 Service Unavailable with a Retry-After header of
// b.RetryAfter, before reading the request, rather than store more than
// the Workers can handle. The service retries the delivery later (after 1
// minute, 5, 30, 2 hours, then 24: a delivery refused at each of those is
// marked failed there, to retry from the service's webhook page); the
// Handler accepts deliveries again by itself once the Workers have caught
// up.
//
// Checking costs a request a few atomic operations: the Handler reads the
// backlog from the table every b.CheckInterval, in the background, with
// one query through the partial index of the pending deliveries that
// counts at most b.MaxPending of them, and counts the deliveries it has
// let through since, so that a flood between two checks does not
// overshoot MaxPending (it counts to be safe those a check may have seen
// already, and may refuse a few early until the next check). Only a
// request after a quiet spell (no check for two intervals) waits for a
// fresh check, one short query. The counts are per process: N replicas
// may together let through up to N-1 intervals' worth of deliveries
// beyond MaxPending. When the query fails the Handler goes by the last
// figures it read. With WithLogger, the Handler logs when a check finds
// the inbox behind (Warn) and when one finds it caught up (Info), not
// each refusal; WithMetrics counts the refusals as throttled.
//
// Without this option the Handler never refuses a delivery for the
// backlog. The Handler panics if b.RetryAfter or b.CheckInterval is
// negative.
func WithBackpressure(b Backpressure) HandlerOption {
	return func(c *handlerConfig) { c.backpressure = &b }
}

// withDefaults returns b with the defaults filled in, and reports whether
// it limits anything.
func (b Backpressure) withDefaults() (Backpressure, bool) {
	if b.RetryAfter < 0 || b.CheckInterval < 0 {
		panic("pginbox: WithBackpressure needs a RetryAfter and a CheckInterval that are not negative")
	}
	setDefault(&b.MaxPending, DefaultMaxPending)
	setDefault(&b.MaxPendingAge, DefaultMaxPendingAge)
	setDefault(&b.RetryAfter, DefaultRetryAfter)
	setDefault(&b.CheckInterval, DefaultCheckInterval)
	return b, b.MaxPending > 0 || b.MaxPendingAge > 0
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// backlogSQL reads, through the partial index of the pending deliveries,
// how many are due, counting at most $1, and how long in seconds the
// oldest due one has waited (0 when none is due), on the database's clock.
const backlogSQL = `SELECT
    (SELECT count(*) FROM (SELECT 1 FROM ` + TableName + `
        WHERE status = 'pending' AND next_attempt_at <= now() LIMIT $1) AS due),
    greatest(0, coalesce(EXTRACT(EPOCH FROM now() - (SELECT min(next_attempt_at) FROM ` + TableName + `
        WHERE status = 'pending')), 0))::float8`

// checkTimeout bounds a check of the backlog (or the Handler's timeout,
// when shorter): a request may wait for one.
const checkTimeout = 2 * time.Second

// A gate lets deliveries through to the Handler while the backlog is
// under Backpressure's limits.
type gate struct {
	pool       *pgxpool.Pool
	limits     Backpressure
	retryAfter string // the header's value
	timeout    time.Duration
	log        *slog.Logger
	metrics    *Metrics

	last     atomic.Pointer[backlog]
	admitted atomic.Int64 // deliveries let through since the start
	finished atomic.Int64 // of those, the ones answered
	checking sync.Mutex   // held by the check under way
	behind   bool         // the last check's verdict, for the log; under checking
}

// backlog is what a check read.
type backlog struct {
	at       time.Time     // when the check began; zero before the first
	due      int64         // due deliveries then (at most MaxPending), plus those let through and not answered
	admitted int64         // gate.admitted then
	waited   time.Duration // how long the oldest due delivery had waited
}

// throttle wraps h in the gate of cfg's Backpressure, if it has one that
// limits anything.
func (cfg handlerConfig) throttle(pool *pgxpool.Pool, h http.Handler) http.Handler {
	if cfg.backpressure == nil {
		return h
	}
	limits, on := cfg.backpressure.withDefaults()
	if !on {
		return h
	}
	g := &gate{pool: pool, limits: limits, timeout: min(cfg.timeout, checkTimeout), log: cfg.log, metrics: cfg.metrics,
		retryAfter: strconv.FormatInt(max(1, int64(math.Ceil(limits.RetryAfter.Seconds()))), 10)}
	g.last.Store(&backlog{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.admit() {
			g.metrics.add(outcomeThrottled)
			w.Header().Set("Retry-After", g.retryAfter)
			http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
			return
		}
		defer g.finished.Add(1)
		h.ServeHTTP(w, r)
	})
}

// admit reports whether a delivery may go through, counting it if so. Figures older than CheckInterval are read again in the
// background; figures older than two (before the first check, after a
// quiet spell) are read again before the delivery is judged, so that a
// delivery after a quiet spell is not refused for a backlog long gone.
func (g *gate) admit() bool {
	last := g.last.Load()
	if age := time.Since(last.at); age >= 2*g.limits.CheckInterval {
		g.checking.Lock()
		if last = g.last.Load(); time.Since(last.at) >= g.limits.CheckInterval { // no other request read them meanwhile
			last = g.check(last)
		}
		g.checking.Unlock()
	} else if age >= g.limits.CheckInterval && g.checking.TryLock() {
		go func() {
			defer g.checking.Unlock()
			g.check(last)
		}()
	}
	if g.limits.MaxPendingAge > 0 && last.waited >= g.limits.MaxPendingAge {
		return false
	}
	for {
		// admitted only grows, a delivery counted once it is let through:
		// a check compares what it read with it.
		n := g.admitted.Load()
		if g.limits.MaxPending > 0 && last.due+n+1-last.admitted > int64(g.limits.MaxPending) {
			return false
		}
		if g.admitted.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// check reads the backlog, stores it and returns it; last is the check
// before. The caller holds g.checking.
func (g *gate) check(last *backlog) *backlog {
	// The deliveries let through and not answered yet may or may not be in
	// the count: count them, to be safe (finished is read first, so that
	// none is missed), and those let through from here on by admitted.
	finished := g.finished.Load()
	now := &backlog{at: time.Now(), admitted: g.admitted.Load()}
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	var due int64
	var waited float64
	if err := g.pool.QueryRow(ctx, backlogSQL, max(g.limits.MaxPending, 0)).Scan(&due, &waited); err != nil {
		// Go by the last figures until the next check; the inserts meet
		// the failure too.
		kept := *last
		kept.at = now.at
		g.last.Store(&kept)
		return &kept
	}
	now.due = due + now.admitted - finished
	now.waited = time.Duration(waited * float64(time.Second))
	// The log goes by the table alone, not by the deliveries counted to be
	// safe.
	behind := g.limits.MaxPending > 0 && due >= int64(g.limits.MaxPending) ||
		g.limits.MaxPendingAge > 0 && now.waited >= g.limits.MaxPendingAge
	if behind != g.behind && g.log != nil {
		attrs := []any{"due", due, "oldest_due_waited", now.waited.Round(time.Millisecond).String()}
		if behind {
			g.log.Warn("pginbox: the inbox is behind; answering 503 to new deliveries", attrs...)
		} else {
			g.log.Info("pginbox: the inbox caught up; accepting deliveries again", attrs...)
		}
	}
	g.last.Store(now)
	g.behind = behind
	return now
}
