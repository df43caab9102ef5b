package redisdedup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// forgetScript ends the claim of a delivery that was not processed: it
// deletes the key only when it holds the claimant's token. KEYS[1] is the
// delivery's key, ARGV[1] the token. It returns 1 when the claim is ended
// (deleted now, or the key was already gone: the lease ran out, or an
// earlier run whose reply was lost deleted it), 0 when another claim took
// its place. It is sent with EVAL, in the pipeline like every command;
// Redis keeps the compiled script in its cache.
const forgetScript = `
local current = redis.call('GET', KEYS[1])
if current == false then
  return 1
end
if current ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
`

// Release implements webhooks.Deduper. For a processed delivery it sets the
// key to "done:" and the claim's token for the TTL, whatever the key held:
// the success is remembered even when the claim's lease ran out and another
// claim took its place (Release then returns ErrLeaseExpired). For a
// delivery not processed it deletes the key when it still holds the claim's
// token. A release that finds its own work done (go-redis ran it again
// after its reply was lost) succeeds.
//
// Release waits for Redis for up to the timeout (WithTimeout), and while
// ctx lasts. When Redis does not answer by then, or cannot be reached (a
// network error, a server that is loading its data, read-only or failing
// over), Release returns an error wrapping ErrReleasePending and the
// Deduper goes on trying in the background, waiting 50ms after the first
// try, then twice as long after each, up to a second, until Redis answers:
// for up to the TTL after Release for a processed delivery, so that an
// outage of any length is not followed by a second processing, and for up
// to the lease for one not processed, whose claim Redis then drops by
// itself. Meanwhile this Deduper answers Claims of the id without Redis
// (see Claim); Flush waits for these releases. A process that dies with
// releases pending leaves their claims to their lease.
//
// It returns ErrNotClaimed for an id this Deduper does not hold, and
// ErrLeaseExpired when the claim expired and was replaced; those, and the
// errors Redis answers with, are not retried.
func (d *Deduper) Release(ctx context.Context, id string, processed bool) error {
	d.mu.Lock()
	e, ok := d.ids[id]
	if !ok || e.state != held {
		d.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNotClaimed, id)
	}
	e.state, e.processed = releasing, processed
	d.stats.held.Add(-1)
	e.until = time.Now().Add(d.lease)
	if processed {
		e.until = time.Now().Add(d.ttl)
	}
	e.try = d.pipe.start(uncancelled(ctx), d.endCommand(e))
	c := e.try
	d.mu.Unlock()
	d.stats.released(processed)

	if err := d.wait(ctx, c); err != nil {
		d.stats.redisError(opRelease, err)
		d.postpone(id, e)
		return fmt.Errorf("redisdedup: releasing delivery %s: %w: %w", id, ErrReleasePending, err)
	}
	err, later := d.settle(id, e)
	switch {
	case later:
		return fmt.Errorf("redisdedup: releasing delivery %s: %w: %w", id, ErrReleasePending, err)
	case errors.Is(err, ErrLeaseExpired):
		return fmt.Errorf("%w: delivery %s", err, id)
	case err != nil:
		return fmt.Errorf("redisdedup: releasing delivery %s: %w", id, err)
	}
	return nil
}

// endCommand returns the command that ends e's claim.
//
// A success is recorded by one command, SET key done:<token> PX <ttl> GET,
// whatever the key holds, and the previous value tells how it went (see
// ended). A claim of a delivery not processed is ended by forgetScript.
func (d *Deduper) endCommand(e *entry) redis.Cmder {
	if e.processed {
		return redis.NewStringCmd(context.Background(), "set", e.key, done+":"+e.token, "px", d.ttlMS, "get")
	}
	return redis.NewCmd(context.Background(), "eval", forgetScript, 1, e.key, e.token)
}

// ended returns how the try of e that has just had its reply went: nil when
// the claim is ended, ErrLeaseExpired when another claim had taken its
// place, or the command's error.
//
// For a success, the previous value of the key is the claim's token, or
// nothing (the lease ran out and nobody claimed since): a plain release;
// done:<token> means this same command ran before and its reply was lost;
// another claim's token or success means the lease ran out and the delivery
// may have been processed twice. Either way the delivery was processed, and
// is remembered as done. For a claim that Claim stopped waiting for, another
// claim in its place only means that it was never made.
func (e *entry) ended() error {
	if !e.processed {
		ended, err := e.try.cmd.(*redis.Cmd).Int()
		if err == nil && ended == 0 && !e.abandoned {
			return ErrLeaseExpired
		}
		return err
	}
	previous, err := e.try.cmd.(*redis.StringCmd).Result()
	switch {
	case errors.Is(err, redis.Nil), err == nil && (previous == e.token || previous == done+":"+e.token):
		return nil
	case err != nil:
		return err
	}
	return ErrLeaseExpired
}

// settle deals with the reply of the try of e, the entry of id, once it has
// come: it forgets e when the claim is ended, when Redis answered in a way
// that trying again will not change, or when the retries' time is over;
// otherwise it leaves e to the background retries and returns later true.
// err is how the try went (see ended).
func (d *Deduper) settle(id string, e *entry) (err error, later bool) {
	err = e.ended()
	var result releaseResult
	switch {
	case err == nil:
		result = resultOK
	case errors.Is(err, ErrLeaseExpired):
		result = resultLeaseExpired
	case !unanswered(err):
		result = resultError
		d.stats.redisError(opRelease, err)
	case time.Now().After(e.until):
		result = resultGaveUp
		d.stats.redisError(opRelease, err)
	default: // to be tried again
		d.stats.redisError(opRelease, err)
		d.mu.Lock()
		d.deferLocked(e)
		e.try = nil
		d.retryLater()
		d.mu.Unlock()
		return err, true
	}
	d.mu.Lock()
	e.try = nil
	if d.ids[id] == e {
		delete(d.ids, id)
	}
	if e.deferred {
		d.stats.pending.Add(-1)
	}
	d.mu.Unlock()
	d.stats.releases[result].Add(1)
	return err, false
}

// postpone leaves e, the entry of id, whose Release stopped waiting, to
// the background: its try is settled once it has its reply.
func (d *Deduper) postpone(id string, e *entry) {
	d.mu.Lock()
	d.deferLocked(e)
	c := e.try
	d.mu.Unlock()
	go func() {
		<-c.done
		_, _ = d.settle(id, e)
	}()
}

// deferLocked counts e among the releases Redis did not answer in time,
// unless it is already. d.mu is held.
func (d *Deduper) deferLocked(e *entry) {
	if !e.deferred {
		e.deferred = true
		d.stats.pending.Add(1)
		d.stats.deferred.Add(1)
	}
}

// abandon deals with e, the entry of id, whose claim c Claim stopped
// waiting for. Until c has its reply the claim may still be made, so e
// stays, answering Claims of id locally; then, if Redis made the claim or
// may have, the claim is ended in the background as the release of a
// delivery not processed, bounded by the lease.
func (d *Deduper) abandon(id string, e *entry, c *call) {
	c.abandoned.Store(true) // not sent, unless it is on its way already
	d.mu.Lock()
	e.state, e.processed, e.abandoned = releasing, false, true
	e.until = time.Now().Add(d.lease)
	e.try = c // its reply tells whether there is a claim to end
	d.deferLocked(e)
	d.mu.Unlock()
	go func() {
		<-c.done
		previous, err := c.cmd.(*redis.StringCmd).Result()
		answered := err == nil && previous != e.token || err != nil && !errors.Is(err, redis.Nil) && !unanswered(err)
		if !c.sent || answered { // no claim was made
			d.mu.Lock()
			if d.ids[id] == e {
				delete(d.ids, id)
			}
			d.stats.pending.Add(-1)
			d.mu.Unlock()
			d.stats.releases[resultOK].Add(1)
			return
		}
		d.mu.Lock()
		e.try = nil
		d.retryLater()
		d.mu.Unlock()
		if err == nil || errors.Is(err, redis.Nil) {
			d.redisAnswered() // it answers again: try now
		}
	}()
}

// unanswered reports whether err means that Redis gave no answer, or
// answered that it cannot serve the command yet, so that trying again later
// may succeed: any error but a Redis error reply or a closed client (such
// as a network error or a timeout), and the replies of a server that is
// loading its data, is a read-only replica, or waits for a failover.
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
