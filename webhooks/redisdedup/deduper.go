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
	// DefaultReleaseRetry is how long Release goes on trying while Redis
	// does not answer: long enough for a restart or a failover, short
	// enough that the answer still reaches the service within the 30
	// seconds it waits, after a callback that took up to 20.
	DefaultReleaseRetry = 10 * time.Second
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
)

// Deduper is a webhooks.Deduper kept in Redis and shared by every replica
// that uses the same Redis and key prefix. Create it with New; it is safe for
// concurrent use. Use one Deduper per process (or per Handler): the claims
// it holds are known only to it.
type Deduper struct {
	client redis.UniversalClient
	prefix string
	ttl    time.Duration
	lease  time.Duration
	retry  time.Duration // how long Release goes on trying
	pipe   *pipeline

	leaseMS, ttlMS any // the lease and the TTL in milliseconds, as PX arguments

	mu     sync.Mutex
	claims map[string]claim // delivery id -> the claim held here
}

// claim is a claim a Deduper holds: its delivery's key and its token.
type claim struct {
	key, token string
}

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

// WithReleaseRetry sets how long Release goes on trying while Redis does
// not answer (DefaultReleaseRetry when not given; 0 tries once). Release
// waits 50ms after its first try, then twice as long after each, up to a
// second, and makes no try that would start after retry has passed since
// its first; each try is bounded by the client's own timeouts and retries
// (see redis.Options). The Handler answers the service only once Release
// has returned.
func WithReleaseRetry(retry time.Duration) Option {
	return func(d *Deduper) { d.retry = retry }
}

// New returns a Deduper that keeps its claims in Redis through client (a
// *redis.Client, *redis.ClusterClient or other UniversalClient). It panics
// if client is nil, if the TTL or the lease is under a millisecond, or if
// the release retry is negative, which are mistakes in the program.
func New(client redis.UniversalClient, opts ...Option) *Deduper {
	d := &Deduper{
		client: client,
		prefix: DefaultKeyPrefix,
		ttl:    DefaultTTL,
		lease:  DefaultLease,
		retry:  DefaultReleaseRetry,
		claims: make(map[string]claim),
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
	case d.retry < 0:
		panic(fmt.Sprintf("redisdedup: release retry %v is negative", d.retry))
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
// an error when Redis cannot be reached, which makes the Handler answer 500
// so that the service retries.
func (d *Deduper) Claim(ctx context.Context, id string) (webhooks.ClaimStatus, error) {
	d.mu.Lock()
	_, held := d.claims[id]
	d.mu.Unlock()
	if held {
		return webhooks.ClaimInFlight, nil
	}
	token := rand.Text()
	key := d.prefix + id
	cmd := redis.NewStringCmd(ctx, "set", key, token, "px", d.leaseMS, "nx", "get")
	_ = d.pipe.do(ctx, cmd)
	previous, err := cmd.Result()
	switch {
	// The key was absent: the claim is ours. Or it holds our token: the
	// reply to our command was lost and go-redis sent it again, so the
	// claim Redis made the first time is ours.
	case errors.Is(err, redis.Nil), err == nil && previous == token:
		d.mu.Lock()
		d.claims[id] = claim{key: key, token: token}
		d.mu.Unlock()
		return webhooks.ClaimNew, nil
	case err != nil:
		return 0, fmt.Errorf("redisdedup: claiming delivery %s: %w", id, err)
	case strings.HasPrefix(previous, done):
		return webhooks.ClaimDuplicate, nil
	default:
		return webhooks.ClaimInFlight, nil
	}
}

var _ webhooks.Deduper = (*Deduper)(nil)
