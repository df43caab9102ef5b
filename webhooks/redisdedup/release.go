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

// forgetScript ends the claim of a delivery that was not processed: it
// deletes the key only when it holds the claimant's token. KEYS[1] is the
// delivery's key, ARGV[1] the token. It returns 1 when the claim is ended
// (deleted now, or the key was already gone: the lease ran out, or an
// earlier run whose reply was lost deleted it), 0 when another claim took
// its place.
var forgetScript = redis.NewScript(`
local current = redis.call('GET', KEYS[1])
if current == false then
  return 1
end
if current ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
`)

// Release implements webhooks.Deduper. For a processed delivery it sets the
// key to "done:" and the claim's token for the TTL, whatever the key held:
// the success is remembered even when the claim's lease ran out and another
// claim took its place (Release then returns ErrLeaseExpired). For a
// delivery not processed it deletes the key when it still holds the claim's
// token. A release that finds its own work done (go-redis ran it again
// after its reply was lost) succeeds.
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
	c, held := d.claims[id]
	delete(d.claims, id)
	d.mu.Unlock()
	if !held {
		return fmt.Errorf("%w: %s", ErrNotClaimed, id)
	}
	giveUp := time.Now().Add(d.retry)
	for wait := releaseFirstWait; ; wait = min(2*wait, releaseMaxWait) {
		err := d.release(ctx, c, processed)
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

// release tries once to end claim c.
//
// A success is recorded by one command, SET key done:<token> PX <ttl> GET,
// whatever the key holds, and the previous value tells how it went: the
// claim's token, or nothing (the lease ran out and nobody claimed since),
// is a plain release; done:<token> means this same command ran before and
// its reply was lost; another claim's token or success means the lease
// ran out and the delivery may have been processed twice (ErrLeaseExpired).
// Either way the delivery was processed, and is remembered as done.
func (d *Deduper) release(ctx context.Context, c claim, processed bool) error {
	if !processed {
		ended, err := forgetScript.Run(ctx, d.client, []string{c.key}, c.token).Int()
		if err == nil && ended == 0 {
			return ErrLeaseExpired
		}
		return err
	}
	doneToken := done + ":" + c.token
	cmd := redis.NewStringCmd(ctx, "set", c.key, doneToken, "px", d.ttlMS, "get")
	_ = d.pipe.do(ctx, cmd)
	previous, err := cmd.Result()
	switch {
	case errors.Is(err, redis.Nil), err == nil && (previous == c.token || previous == doneToken):
		return nil
	case err != nil:
		return err
	}
	return ErrLeaseExpired
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
