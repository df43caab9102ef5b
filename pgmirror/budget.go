package pgmirror

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultBudget is a business's request budget when none is given: requests
// per second to the service, summed over every replica. The API document
// gives no rate limit numbers (API.md section 8); 10 a second keeps a
// backfill of a few thousand records to a minute or two.
const DefaultBudget = 10.0

// A budget is a business's requests per second to the service, shared by
// every replica through a token bucket in PostgreSQL (mirror_budgets): each
// request takes a token in one statement, the bucket refilling at the
// budget's rate up to one second's worth (at least one token). Over any
// window of W seconds a business sends at most rate×W + burst requests,
// whatever the number of replicas.
//
// Event fetches take any token (events); walks (backfills and
// reconciliations) leave a reserve (walks), so that a business's events
// are fetched at once even while its backfill uses all of its budget.
//
// The bucket's row also holds the business's pause: while the service
// refuses its key (401) or keeps answering 429 or failing, no replica calls
// the service for it until paused_until (Wait returns an errPaused); then
// one call tries again. pause_reason stays until a call succeeds: the
// business is reported paused (status, metrics) meanwhile.
type budget struct {
	t           *tenant
	rate, burst float64
	reserve     float64 // tokens walks leave for events
	created     atomic.Bool
	failing     atomic.Bool // the business is paused (a reason is recorded), as this replica last read it
	chunk       float64     // tokens one statement takes at most: a twentieth of a second's worth, at least 1
	events      *limiter
	walks       *limiter
}

// limiter is one view of a budget: a Limiter for invoicing.WithLimiter.
// It takes tokens from the bucket a chunk at a time and hands them out
// one a request: at a budget of 20 a second or less, one statement a
// request; above, fewer. Tokens taken are spent or lost, never given
// back, so the replicas together never exceed the budget.
type limiter struct {
	b       *budget
	reserve float64
	mu      sync.Mutex
	held    int // tokens taken and not yet handed out
}

func newBudget(t *tenant, rate float64) *budget {
	if rate <= 0 {
		rate = DefaultBudget
	}
	b := &budget{t: t, rate: rate, burst: max(rate, 1)}
	b.reserve = max(1, b.burst/5)
	b.chunk = max(1, math.Floor(rate/20))
	b.events = &limiter{b: b}
	b.walks = &limiter{b: b, reserve: b.reserve}
	return b
}

// errPaused is the error of a call of a paused business: Wait refuses it
// before anything is sent.
type errPaused struct {
	until  time.Time
	reason string
}

func (e *errPaused) Error() string {
	return fmt.Sprintf("pgmirror: the business is paused until %s: %s", e.until.UTC().Format(time.RFC3339), e.reason)
}

// budgetError is a database failure while taking a token: the database's,
// not the service's (see dependencyOf).
type budgetError struct{ error }

func (e budgetError) Unwrap() error { return e.error }

// takeSQL takes up to $5 tokens of business $1 (rate $2 per second, burst
// $3), those above the reserve $4 after refilling, and returns the tokens
// there were before, how many it took, how long the business stays paused
// (0 when not), and why it was paused ("" once it answered again). A paused
// business's bucket is left alone.
const takeSQL = `WITH now AS (SELECT clock_timestamp() AS now),
cur AS (
	SELECT b.business, least($3::float8, b.tokens + $2::float8 * extract(epoch FROM now.now - b.at)) AS avail,
	       b.paused_until > now.now AS paused, b.paused_until, b.pause_reason, now.now
	FROM mirror_budgets AS b, now WHERE b.business = $1 FOR UPDATE OF b),
n AS (
	SELECT CASE WHEN coalesce(cur.paused, false) THEN 0 ELSE greatest(0, least($5::float8, floor(cur.avail - $4::float8))) END AS n
	FROM cur),
took AS (
	UPDATE mirror_budgets AS b
	SET tokens = cur.avail - n.n, at = cur.now
	FROM cur, n WHERE b.business = cur.business AND NOT coalesce(cur.paused, false))
SELECT avail, n.n::int, CASE WHEN paused THEN extract(epoch FROM paused_until - now) ELSE 0 END::float8, coalesce(pause_reason, '')
FROM cur, n`

// Wait waits until the business may send a request, taking a token; it
// returns an *errPaused at once while the business is paused, ctx's error
// if ctx ends first, and a budgetError when the database fails.
func (l *limiter) Wait(ctx context.Context) error {
	b := l.b
	for {
		l.mu.Lock()
		if l.held > 0 {
			l.held--
			l.mu.Unlock()
			return nil
		}
		l.mu.Unlock()
		if err := b.create(ctx); err != nil {
			return err
		}
		var avail, paused float64
		var took int
		var reason string
		err := b.t.pool.QueryRow(ctx, takeSQL, b.t.name, b.rate, b.burst, l.reserve, b.chunk).Scan(&avail, &took, &paused, &reason)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return budgetError{fmt.Errorf("pgmirror: taking a request token: %w", err)}
		case paused > 0:
			b.failing.Store(true)
			return &errPaused{until: time.Now().Add(time.Duration(paused * float64(time.Second))), reason: reason}
		}
		b.failing.Store(reason != "")
		if took > 0 {
			l.mu.Lock()
			l.held += took - 1
			l.mu.Unlock()
			return nil
		}
		wait := time.Duration((1 + l.reserve - avail) / b.rate * float64(time.Second))
		if !sleep(ctx, max(wait, time.Millisecond)) {
			return ctx.Err()
		}
	}
}

// create makes the business's bucket, full, unless it exists.
func (b *budget) create(ctx context.Context) error {
	if b.created.Load() {
		return nil
	}
	if _, err := b.t.pool.Exec(ctx, `INSERT INTO mirror_budgets (business, tokens) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		b.t.name, b.burst); err != nil {
		return budgetError{fmt.Errorf("pgmirror: creating the request budget: %w", err)}
	}
	b.created.Store(true)
	return nil
}

// pause stops every replica's calls for the business until the time d from
// now, with reason (one line, no secret), unless it is paused longer
// already.
func (b *budget) pause(ctx context.Context, d time.Duration, reason string) error {
	if err := b.create(ctx); err != nil {
		return err
	}
	_, err := b.t.pool.Exec(ctx, `UPDATE mirror_budgets
		SET paused_until = greatest(paused_until, clock_timestamp() + $2::interval), pause_reason = $3
		WHERE business = $1`, b.t.name, d, clip(reason))
	b.failing.Store(err == nil)
	return err
}

// resume ends the business's pause, and clears its reason: it answered
// again.
func (b *budget) resume(ctx context.Context) error {
	b.failing.Store(false)
	_, err := b.t.pool.Exec(ctx, `UPDATE mirror_budgets SET paused_until = NULL, pause_reason = NULL
		WHERE business = $1 AND pause_reason IS NOT NULL`, b.t.name)
	return err
}

// paused reports whether err is a paused business's refusal.
func paused(err error) bool {
	var p *errPaused
	return errors.As(err, &p)
}
