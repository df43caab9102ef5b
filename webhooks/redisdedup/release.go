package redisdedup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The waits between two tries of a release: the first, and the longest.
const (
	releaseFirstWait = 50 * time.Millisecond
	releaseMaxWait   = time.Second
)

// releaseScript ends a claim only when the key still holds the claimant's
// token. KEYS[1] is the delivery's key; ARGV[1] the token; ARGV[2] "1" to
// remember the id as done for ARGV[3] milliseconds, "0" to forget it. A
// key that is gone (the lease ran out and nobody claimed since) is treated
// as the claim: a processed delivery is still remembered. It returns 1 when
// it ended the claim or finds it already ended by this token (the script
// ran before and its reply was lost), and 0 when another claim took its
// place.
var releaseScript = redis.NewScript(`
local current = redis.call('GET', KEYS[1])
if current == 'done:' .. ARGV[1] then
  return 1
end
if current ~= ARGV[1] and current ~= false then
  return 0
end
if ARGV[2] == '1' then
  redis.call('SET', KEYS[1], 'done:' .. ARGV[1], 'PX', ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
return 1
`)

// Release implements webhooks.Deduper: when the key still holds this
// Deduper's claim, or nothing (the lease ran out and nobody claimed since),
// it sets it to "done:" and the claim's token for the TTL (processed) or
// deletes it (not processed). A release that finds its own "done" (go-redis
// ran it again after its reply was lost) succeeds.
//
// While Redis does not answer (a network error, a timeout, a server that is
// loading its data or failing over), Release tries again for up to the
// release retry (WithReleaseRetry, DefaultReleaseRetry unless set), or
// until ctx ends; then it returns the last error, and the claim expires
// with its lease: a copy of the delivery that arrives after that is
// processed again. It returns ErrNotClaimed for an id this Deduper does not
// hold and ErrLeaseExpired when the claim expired and was replaced; those,
// and the errors Redis answers with, are not retried.
func (d *Deduper) Release(ctx context.Context, id string, processed bool) error {
	d.mu.Lock()
	token, held := d.tokens[id]
	delete(d.tokens, id)
	d.mu.Unlock()
	if !held {
		return fmt.Errorf("%w: %s", ErrNotClaimed, id)
	}
	giveUp := time.Now().Add(d.retry)
	for wait := releaseFirstWait; ; wait = min(2*wait, releaseMaxWait) {
		err := d.release(ctx, id, token, processed)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrLeaseExpired):
			return fmt.Errorf("%w: delivery %s", err, id)
		case !unanswered(err) || ctx.Err() != nil || time.Now().Add(wait).After(giveUp):
			return fmt.Errorf("redisdedup: releasing delivery %s: %w", id, err)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("redisdedup: releasing delivery %s: %w (then %w)", id, err, ctx.Err())
		case <-timer.C:
		}
	}
}

// release tries once to end the claim with token on id.
func (d *Deduper) release(ctx context.Context, id, token string, processed bool) error {
	flag := "0"
	if processed {
		flag = "1"
	}
	released, err := releaseScript.Run(ctx, d.client, []string{d.key(id)}, token, flag, d.ttl.Milliseconds()).Int()
	switch {
	case err != nil:
		return err
	case released == 0:
		return ErrLeaseExpired
	}
	return nil
}

// unanswered reports whether err means that Redis gave no answer, or
// answered that it cannot serve the command yet, so that trying again later
// may succeed: any error but a Redis error reply or a closed client (such
// as a network error or a timeout), and the replies of a server that is
// loading its data, is a read-only replica, or waits for a failover. The
// caller's context is checked apart: a dial or read timeout may also match
// context.DeadlineExceeded.
func unanswered(err error) bool {
	var reply redis.Error
	switch {
	case errors.Is(err, redis.ErrClosed):
		return false
	case errors.As(err, &reply):
		return redis.IsLoadingError(err) || redis.IsReadOnlyError(err) || redis.IsMasterDownError(err) ||
			redis.IsTryAgainError(err) || redis.IsClusterDownError(err)
	}
	return true
}
