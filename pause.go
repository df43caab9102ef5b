package invoicing

import (
	"container/heap"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"
)

// pauseKey identifies an API key by its SHA-256, so that the Client keeps
// no tenant's key beyond its call; the zero key is the Client's own.
type pauseKey [sha256.Size]byte

// pauses holds, by API key, the pause after a 429: until when the calls made
// with that key wait before sending (see WithAPIKey for why per key). An
// entry ends with its pause: every look at the map first drops the pauses
// that have ended (ends orders them by their end), so a Client serving many
// businesses holds only the pauses in progress.
type pauses struct {
	mu   sync.Mutex
	m    map[pauseKey]pause
	ends pauseEnds
}

type pause struct {
	until time.Time
	cause *Error // the 429 that started it
}

// left returns what is left at now of key's pause, and its cause.
func (p *pauses) left(key pauseKey, now time.Time) (time.Duration, *Error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expire(now)
	e, ok := p.m[key]
	if !ok {
		return 0, nil
	}
	return e.until.Sub(now), e.cause
}

// set pauses key until until, unless it already waits longer (a pause that
// has ended by now is not kept).
func (p *pauses) set(key pauseKey, now, until time.Time, cause *Error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expire(now)
	if e, ok := p.m[key]; (ok && !e.until.Before(until)) || !until.After(now) {
		return
	}
	if p.m == nil {
		p.m = map[pauseKey]pause{}
	}
	p.m[key] = pause{until: until, cause: cause}
	heap.Push(&p.ends, pauseEnd{until: until, key: key})
}

// expire drops the pauses that have ended at now, and lets go of the
// memory of a burst of them once none is left. p.mu is held.
func (p *pauses) expire(now time.Time) {
	for len(p.ends) > 0 && !now.Before(p.ends[0].until) {
		end := heap.Pop(&p.ends).(pauseEnd)
		if e, ok := p.m[end.key]; ok && !now.Before(e.until) { // not extended since
			delete(p.m, end.key)
		}
	}
	if len(p.m) == 0 && p.m != nil {
		p.m, p.ends = nil, nil
	}
}

// pauseEnd is when the pause of key ends (or ended, when it was extended
// since: a later pauseEnd of the key is in the heap too).
type pauseEnd struct {
	until time.Time
	key   pauseKey
}

// pauseEnds is a min-heap of pause ends (container/heap).
type pauseEnds []pauseEnd

func (h pauseEnds) Len() int { return len(h) }

func (h pauseEnds) Less(i, j int) bool { return h[i].until.Before(h[j].until) }

func (h pauseEnds) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *pauseEnds) Push(x any) { *h = append(*h, x.(pauseEnd)) }

func (h *pauseEnds) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// pausedError is the gate's refusal to wait out a pause after a 429 that
// ends after the call's deadline: the call gets the 429's error at once
// instead of waiting until its deadline for nothing.
type pausedError struct {
	left  time.Duration
	cause *Error
}

func (e *pausedError) Error() string {
	return fmt.Sprintf("paused for %v after a 429, past the call's deadline", e.left)
}
