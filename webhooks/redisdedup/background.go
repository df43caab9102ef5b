package redisdedup

import (
	"context"
	"fmt"
	"time"
)

// The waits between two background tries of the releases Redis did not
// answer in time: the first, and the longest.
const (
	releaseFirstWait = 50 * time.Millisecond
	releaseMaxWait   = time.Second
)

// retryLater starts the background retries unless they run. d.mu is held.
func (d *Deduper) retryLater() {
	if !d.retrying {
		d.retrying = true
		go d.retryReleases()
	}
}

// redisAnswered wakes the background retries, if any wait, because Redis
// has just answered: their releases may go through now.
func (d *Deduper) redisAnswered() {
	if d.stats.pending.Load() > 0 {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// retryReleases tries the releases left to it again, all at once, until
// none is left: after a wait that starts at releaseFirstWait and doubles
// while Redis does not answer, up to releaseMaxWait, and that Redis
// answering a Claim cuts short.
func (d *Deduper) retryReleases() {
	for wait := releaseFirstWait; ; {
		d.stats.backoff.Store(int64(wait))
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-d.wake:
			timer.Stop()
		}

		ids, tries := d.startRetries()
		answered := false
		for i, e := range tries {
			<-e.try.done
			d.stats.retries.Add(1)
			if _, later := d.settle(ids[i], e); !later {
				answered = true
			}
		}
		if answered {
			wait = releaseFirstWait
		} else {
			wait = min(2*wait, releaseMaxWait)
		}
		if !d.retriesLeft() {
			return
		}
	}
}

// startRetries sends a try of each release left to the background retries
// that has none in flight, and returns their ids and entries.
func (d *Deduper) startRetries() (ids []string, tries []*entry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, e := range d.ids {
		if e.state == releasing && e.deferred && e.try == nil {
			e.try = d.pipe.start(context.Background(), d.endCommand(e))
			ids, tries = append(ids, id), append(tries, e)
		}
	}
	return ids, tries
}

// retriesLeft reports whether releases wait for a background try; when
// none does, it marks the retries stopped (retryLater starts them again).
func (d *Deduper) retriesLeft() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.ids {
		if e.state == releasing && e.deferred && e.try == nil {
			return true
		}
	}
	d.retrying = false
	d.stats.backoff.Store(0)
	return false
}

// Flush waits until Redis has recorded the releases it did not answer in
// time (see ErrReleasePending) and the ends of the claims Claim stopped
// waiting for, or until the background retries gave them up, and returns
// nil; or until ctx ends, and returns an error wrapping ctx's that says how
// many are still pending. Call it when the replica shuts down, once its
// HTTP server has stopped (http.Server.Shutdown): releases lost with the
// process leave their claims to their lease, after which a copy of the
// delivery is processed again.
func (d *Deduper) Flush(ctx context.Context) error {
	d.redisAnswered() // try now
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		n := d.stats.pending.Load()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisdedup: %d releases still pending: %w", n, ctx.Err())
		case <-tick.C:
		}
	}
}
