package pgmirror

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
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
	store       *store.Store
	business    string
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

func newBudget(s *store.Store, business string, rate float64) *budget {
	if rate <= 0 {
		rate = DefaultBudget
	}
	b := &budget{store: s, business: business, rate: rate, burst: max(rate, 1)}
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

// Wait waits until the business may send a request, taking a token; it
// returns an *errPaused at once while the business is paused, ctx's error
// if ctx ends first, and the database's *store.Error when it fails.
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
		took, err := b.store.TakeTokens(ctx, b.business, b.rate, b.burst, l.reserve, b.chunk)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return err
		case took.Paused > 0:
			b.failing.Store(true)
			return &errPaused{until: time.Now().Add(took.Paused), reason: took.Reason}
		}
		b.failing.Store(took.Reason != "")
		if took.Took > 0 {
			l.mu.Lock()
			l.held += took.Took - 1
			l.mu.Unlock()
			return nil
		}
		wait := time.Duration((1 + l.reserve - took.Available) / b.rate * float64(time.Second))
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
	if err := b.store.CreateBudget(ctx, b.business, b.burst); err != nil {
		return err
	}
	b.created.Store(true)
	return nil
}

// pause stops every replica's calls for the business until the time d from
// now, with reason, unless it is paused longer already.
func (b *budget) pause(ctx context.Context, d time.Duration, reason string) error {
	if err := b.create(ctx); err != nil {
		return err
	}
	err := b.store.Pause(ctx, b.business, d, reason)
	b.failing.Store(err == nil)
	return err
}

// resume ends the business's pause, and clears its reason: it answered
// again.
func (b *budget) resume(ctx context.Context) error {
	b.failing.Store(false)
	return b.store.Resume(ctx, b.business)
}
