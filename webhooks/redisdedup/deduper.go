package redisdedup

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// Defaults of the Deduper's options.
const (
	// DefaultKeyPrefix starts every key the Deduper writes.
	DefaultKeyPrefix = "invoicing:webhooks:delivery:"
	// DefaultTTL is how long a processed delivery id is remembered: the
	// service's automatic retries span about 27 hours, and three days also
	// cover a manual retry made soon after.
	DefaultTTL = 72 * time.Hour
	// DefaultLease is how long a claim lives when its holder never releases
	// it: longer than the 30 seconds the service waits for an answer,
	// shorter than the 5 minutes before its second retry.
	DefaultLease = 2 * time.Minute
	// DefaultTimeout is how long Claim, and then Release, wait for Redis:
	// with it the Handler answers within 4 seconds plus the time of its
	// callback however Redis fails, well within the 30 seconds the service
	// waits, and a Redis that is merely slow has 2 seconds to answer.
	DefaultTimeout = 2 * time.Second
)

// done starts the value of a processed delivery's key: "done:" and the
// token of the claim that processed it, so that a release sent again after
// its reply was lost knows its own success. Claim tokens come from
// crypto/rand.Text (upper-case base32), so no token starts with it. Keys
// written before the token was recorded hold "done" alone.
const done = "done"

var (
	// ErrLeaseExpired is returned by Release when the claim's lease ran out
	// and another claim, or another claim's success, took its place before
	// the release: the delivery may have been processed twice. A success is
	// recorded all the same. Make the lease longer than processing.
	ErrLeaseExpired = errors.New("redisdedup: claim lease expired before release")
	// ErrNotClaimed is returned by Release for an id this Deduper holds no
	// claim on.
	ErrNotClaimed = errors.New("redisdedup: release of a delivery id that is not claimed")
	// ErrTimeout is wrapped by the error of a Claim that Redis did not
	// answer within the timeout (WithTimeout), and by ErrReleasePending
	// errors for the same reason.
	ErrTimeout = errors.New("redisdedup: Redis did not answer in time")
	// ErrReleasePending is wrapped by the error of a Release that Redis did
	// not answer within the timeout, or could not be reached for: the
	// Deduper goes on trying in the background (see Release), so the
	// release is late, not lost.
	ErrReleasePending = errors.New("redisdedup: release pending, retried in the background")
)

// errAbandoned is the error of a command its caller stopped waiting for
// before it was sent.
var errAbandoned = errors.New("redisdedup: command abandoned before it was sent")

// Deduper is a webhooks.Deduper kept in Redis and shared by every replica
// that uses the same Redis and key prefix. Create it with New; it is safe for
// concurrent use. Use one Deduper per process (or per Handler): the claims
// it holds are known only to it.
type Deduper struct {
	client  redis.UniversalClient
	prefix  string
	ttl     time.Duration
	lease   time.Duration
	timeout time.Duration // how long Claim and Release wait for Redis
	pipe    *pipeline
	stats   stats

	leaseMS, ttlMS any // the lease and the TTL in milliseconds, as PX arguments

	mu       sync.Mutex
	ids      map[string]*entry // the delivery ids this Deduper deals with
	retrying bool              // the background retries run (retryReleases)
	wake     chan struct{}     // wakes the background retries: Redis answers again
}

// An entry is what a Deduper knows of one delivery id, from its Claim
// until Redis has recorded the claim's end, or until it is known that no
// claim was made. A Deduper has at most one entry per id: while it has
// one, its Claims of that id are answered without asking Redis.
type entry struct {
	claim
	state     entryState
	processed bool      // releasing: the delivery was processed
	abandoned bool      // releasing: the end of a claim Claim stopped waiting for
	deferred  bool      // releasing: Redis did not answer in time, retried in the background
	until     time.Time // releasing: the background retries stop then
	try       *call     // releasing: the command in flight, nil between tries
}

// claim is a claim's delivery key and its token.
type claim struct {
	key, token string
}

// entryState is where an entry is in the life of its claim.
type entryState int

const (
	claiming  entryState = iota // the claim is on its way to Redis
	held                        // the claim is ours: the delivery is being processed
	releasing                   // the claim's end is on its way to Redis
)

// An Option configures a Deduper built by New.
type Option func(*Deduper)

// WithKeyPrefix sets the prefix of the Deduper's keys (DefaultKeyPrefix when
// not given), so that several receivers can share one Redis. Replicas of one
// receiver must use the same prefix.
func WithKeyPrefix(prefix string) Option {
	return func(d *Deduper) { d.prefix = prefix }
}

// WithTTL sets how long a processed delivery id is remembered (DefaultTTL
// when not given). A copy of the delivery that arrives later is processed
// again.
func WithTTL(ttl time.Duration) Option {
	return func(d *Deduper) { d.ttl = ttl }
}

// WithLease sets how long a claim lives when it is not released
// (DefaultLease when not given): the time after which the delivery of a
// replica that died while processing it can be processed elsewhere.
// Processing must finish well within it (see ErrLeaseExpired).
func WithLease(lease time.Duration) Option {
	return func(d *Deduper) { d.lease = lease }
}

// WithTimeout sets how long Claim, and Release, wait for Redis
// (DefaultTimeout when not given), whatever the client's own timeouts: a
// Claim Redis has not answered by then fails with ErrTimeout, and a Release
// goes on in the background (ErrReleasePending). The Handler therefore
// answers within twice the timeout plus the time of its callback, whether
// Redis hangs, is down or loses replies. Make it shorter than the client's
// ReadTimeout only if a 500 answer (the service retries) is better than
// waiting for a slow Redis.
func WithTimeout(timeout time.Duration) Option {
	return func(d *Deduper) { d.timeout = timeout }
}

// New returns a Deduper that keeps its claims in Redis through client (a
// *redis.Client, *redis.ClusterClient or other UniversalClient). It panics
// if client is nil, or if the TTL, the lease or the timeout is under a
// millisecond, which are mistakes in the program.
func New(client redis.UniversalClient, opts ...Option) *Deduper {
	d := &Deduper{
		client:  client,
		prefix:  DefaultKeyPrefix,
		ttl:     DefaultTTL,
		lease:   DefaultLease,
		timeout: DefaultTimeout,
		ids:     make(map[string]*entry),
		wake:    make(chan struct{}, 1),
	}
	for _, opt := range opts {
		opt(d)
	}
	switch {
	case client == nil:
		panic("redisdedup: New with a nil client")
	case d.ttl < time.Millisecond:
		panic(fmt.Sprintf("redisdedup: TTL %v is under a millisecond", d.ttl))
	case d.lease < time.Millisecond:
		panic(fmt.Sprintf("redisdedup: lease %v is under a millisecond", d.lease))
	case d.timeout < time.Millisecond:
		panic(fmt.Sprintf("redisdedup: timeout %v is under a millisecond", d.timeout))
	}
	d.pipe = &pipeline{client: client}
	d.leaseMS, d.ttlMS = d.lease.Milliseconds(), d.ttl.Milliseconds()
	return d
}

// Claim implements webhooks.Deduper with one SET NX PX GET: the id is
// claimed for the lease when its key is absent (or holds this claim's own
// token, when go-redis sent the command again after losing its reply). It
// returns ClaimDuplicate when the id was processed within the TTL,
// ClaimInFlight when a claim on it is held (by this Deduper or another), and
// an error when Redis cannot be reached or does not answer within the
// timeout (ErrTimeout), or when ctx ends first; the Handler then answers
// 500 and the service retries.
//
// While this Deduper is claiming id, holds a claim on it or is still ending
// one (a Release, or a claim Claim stopped waiting for, that Redis has not
// answered yet), it answers without asking Redis: ClaimDuplicate when the
// delivery was processed, otherwise ClaimInFlight. A claim Redis made after
// Claim stopped waiting for it is ended in the background once Redis
// answers again, as the release of a delivery not processed.
func (d *Deduper) Claim(ctx context.Context, id string) (webhooks.ClaimStatus, error) {
	e := &entry{claim: claim{key: d.prefix + id, token: rand.Text()}}
	if s, known := d.add(id, e); known {
		d.stats.claimed(s)
		return s, nil
	}
	cmd := redis.NewStringCmd(ctx, "set", e.key, e.token, "px", d.leaseMS, "nx", "get")
	c := d.pipe.start(ctx, cmd)
	if err := d.wait(ctx, c); err != nil {
		d.abandon(id, e, c)
		d.stats.claimFailed(err)
		return 0, fmt.Errorf("redisdedup: claiming delivery %s: %w", id, err)
	}
	previous, err := cmd.Result()
	var s webhooks.ClaimStatus
	switch {
	// The key was absent: the claim is ours. Or it holds our token: the
	// reply to our command was lost and go-redis sent it again, so the
	// claim Redis made the first time is ours.
	case errors.Is(err, redis.Nil), err == nil && previous == e.token:
		d.mu.Lock()
		e.state = held
		d.mu.Unlock()
		d.stats.held.Add(1)
		d.redisAnswered()
		return webhooks.ClaimNew, nil
	case err != nil:
		d.remove(id, e)
		d.stats.claimFailed(err)
		return 0, fmt.Errorf("redisdedup: claiming delivery %s: %w", id, err)
	case strings.HasPrefix(previous, done):
		s = webhooks.ClaimDuplicate
	default:
		s = webhooks.ClaimInFlight
	}
	d.remove(id, e)
	d.stats.claimed(s)
	d.redisAnswered()
	return s, nil
}

// add makes e the entry of id and returns false, or, when this Deduper
// already has an entry for id, returns what a Claim of id answers, and
// true.
func (d *Deduper) add(id string, e *entry) (s webhooks.ClaimStatus, known bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if other, ok := d.ids[id]; ok {
		if other.state == releasing && other.processed {
			return webhooks.ClaimDuplicate, true
		}
		return webhooks.ClaimInFlight, true
	}
	d.ids[id] = e
	return 0, false
}

// remove forgets e, the entry of id.
func (d *Deduper) remove(id string, e *entry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids[id] == e {
		delete(d.ids, id)
	}
}

// wait waits until c has its reply, for up to the timeout and while ctx
// lasts, and returns ErrTimeout or ctx's error when it stops waiting first.
func (d *Deduper) wait(ctx context.Context, c *call) error {
	timer, _ := timers.Get().(*time.Timer)
	if timer == nil {
		timer = time.NewTimer(d.timeout)
	} else {
		timer.Reset(d.timeout)
	}
	defer func() {
		timer.Stop() // since Go 1.23, no value is received from a stopped timer
		timers.Put(timer)
	}()
	select {
	case <-c.done:
		return nil
	case <-timer.C:
		return ErrTimeout
	case <-ctx.Done():
		return ctx.Err()
	}
}

// timers are the timers of wait, reused: two fewer allocations a command.
var timers sync.Pool

var _ webhooks.Deduper = (*Deduper)(nil)
