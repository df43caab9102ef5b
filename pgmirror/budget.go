package pgmirror

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// DefaultBudget is a business's request budget when none is given: 0, no
// number to guess: the rate adapts (see Config.Budget).
const DefaultBudget = 0.0

// The adaptive rate of a business's requests (see Config.Budget), in
// requests per second.
const (
	// MaxAdaptive is the rate a business without an explicit budget starts
	// at and creeps back up to at most.
	MaxAdaptive = store.MaxAdaptive
	// MinAdaptive is the rate a business's rate drops to at the lowest.
	MinAdaptive = store.MinAdaptive
	// AdaptiveBackoff is what a 429 drops the rate to, as a fraction of the
	// rate the business was sending at (over about the last second).
	AdaptiveBackoff = store.AdaptiveBackoff
	// AdaptiveCreep is how much the rate rises each second without a 429,
	// as a fraction of what it was dropped to (a tenth: back to above the
	// refused rate in about four seconds).
	AdaptiveCreep = store.AdaptiveCreep
)

// A budget is a business's requests per second to the service, shared by
// every replica through a token bucket in PostgreSQL (mirror_budgets): each
// request takes a token (a statement takes a twentieth of a second's worth
// at a time), the bucket refilling at the business's rate up to one
// second's worth (at least one token). Over any window of W seconds a
// business sends at most rate×W + burst requests, whatever the number of
// replicas.
//
// The rate adapts, for every replica at once (it is in the row): it starts
// high (the business's explicit budget, a ceiling, or MaxAdaptive); a 429
// or a Retry-After drops it to AdaptiveBackoff of the rate the business
// was sending at (at most once a second) and empties the bucket (the
// service's is empty: a second's worth sent at once would be refused
// too), and it creeps back up while the service answers (by AdaptiveCreep
// of it each second, up to the ceiling or MaxAdaptive): additive increase,
// multiplicative decrease, so that a business runs just under what the
// service allows with no number to guess. With a total (Config.BudgetTotal), every request takes a token of
// the mirror's bucket too.
//
// Event fetches take any token (events); walks (backfills and
// reconciliations) leave a reserve, a fifth of the bucket (walks), so that
// a business's events are fetched at once even while its backfill uses all
// of its budget.
//
// The bucket's row also holds the business's pause: while the service
// refuses its key (401) or keeps answering 429 or failing, no replica calls
// the service for it until paused_until (Wait returns an errPaused); then
// one call tries again. pause_reason stays until a call succeeds: the
// business is reported paused (status, metrics) meanwhile.
type budget struct {
	store    *store.Store
	business string
	ceiling  float64 // the business's explicit budget; 0 for none
	total    float64 // the mirror's total budget; 0 for none
	created  atomic.Bool
	failing  atomic.Bool  // the business is paused (a reason is recorded), as this replica last read it
	heard    atomic.Int64 // when a 429 was heard (Unix nanoseconds), 0 for none: the next statement drops the rate
	events   *limiter
	walks    *limiter
}

// limiter is one view of a budget: an invoicing.AdaptiveLimiter. It takes
// tokens from the bucket a chunk at a time and hands them out one a
// request. Tokens taken are spent or lost, never given back, so the
// replicas together never exceed the budget.
type limiter struct {
	b    *budget
	walk bool // leaves the events' reserve
	mu   sync.Mutex
	held int // tokens taken and not yet handed out
}

func newBudget(s *store.Store, business string, ceiling, total float64) *budget {
	b := &budget{store: s, business: business, ceiling: ceiling, total: total}
	b.events = &limiter{b: b}
	b.walks = &limiter{b: b, walk: true}
	return b
}

// start is the rate the business starts at.
func (b *budget) start() float64 {
	if b.ceiling > 0 {
		return b.ceiling
	}
	return MaxAdaptive
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
		var heard time.Time
		if at := b.heard.Swap(0); at != 0 {
			heard = time.Unix(0, at)
		}
		took, err := b.store.TakeTokens(ctx, b.business, b.ceiling, l.walk, heard, b.total)
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
		// Until the bucket holds a token above the reserve, and the total's
		// one.
		reserve := 0.0
		if l.walk {
			reserve = max(1, max(took.Rate, 1)/5)
		}
		wait := time.Duration((1 + reserve - took.Available) / took.Rate * float64(time.Second))
		if b.total > 0 {
			wait = max(wait, time.Duration((1-took.Total)/b.total*float64(time.Second)))
		}
		if !sleep(ctx, max(wait, time.Millisecond)) {
			return ctx.Err()
		}
	}
}

// ready waits, as Wait does, until the business may send a request, and
// keeps the token for the next Wait (the call's own): a caller whose call
// has a deadline waits for the budget before it starts.
func (l *limiter) ready(ctx context.Context) error {
	if err := l.Wait(ctx); err != nil {
		return err
	}
	l.mu.Lock()
	l.held++
	l.mu.Unlock()
	return nil
}

// Answered hears an attempt's outcome (invoicing.AdaptiveLimiter): a 429,
// or any answer asking to wait (Retry-After), drops the business's rate
// with the next statement (to AdaptiveBackoff of the rate it was sending
// at when the answer came), and the tokens held are let go, so that the
// lower rate holds at once.
func (l *limiter) Answered(status int, header http.Header) {
	if status != http.StatusTooManyRequests && header.Get("Retry-After") == "" {
		return
	}
	b := l.b
	b.heard.CompareAndSwap(0, time.Now().UnixNano())
	for _, v := range []*limiter{b.events, b.walks} {
		v.mu.Lock()
		v.held = 0
		v.mu.Unlock()
	}
}

// create makes the business's bucket, full at its starting rate, and the
// total's, unless they exist.
func (b *budget) create(ctx context.Context) error {
	if b.created.Load() {
		return nil
	}
	if err := b.store.CreateBudget(ctx, b.business, b.start()); err != nil {
		return err
	}
	if b.total > 0 {
		if err := b.store.CreateTotalBudget(ctx, max(b.total, 1)); err != nil {
			return err
		}
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
