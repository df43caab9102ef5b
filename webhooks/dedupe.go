package webhooks

import (
	"context"
	"sync"
	"time"
)

// ClaimStatus is the answer of Deduper.Claim. The Handler treats any value but
// the three constants as an error (500).
type ClaimStatus int

const (
	// ClaimNew means the id was not seen: the caller now holds it, processes
	// the delivery and must call Release.
	ClaimNew ClaimStatus = iota + 1
	// ClaimDuplicate means a delivery with this id was already processed
	// successfully; the Handler acknowledges it without processing.
	ClaimDuplicate
	// ClaimInFlight means another caller holds the id and is processing it;
	// the Handler answers 409 Conflict so that the service retries later.
	ClaimInFlight
)

// A Deduper remembers which deliveries were processed, so that a delivery the
// service sends again (a retry after a timeout, or a manual retry) is not
// processed twice. Implementations must be safe for concurrent use; a shared
// store (such as a database) lets several receiver instances share the
// record, in which case claims should expire after a few minutes in case a
// holder dies.
//
// An id is remembered only once its processing succeeded: a delivery whose
// processing failed stays retriable.
type Deduper interface {
	// Claim atomically looks id up and, when it is new, marks it as in
	// flight for the caller.
	Claim(ctx context.Context, id string) (ClaimStatus, error)
	// Release ends the caller's claim on id. When processed is true, id is
	// remembered as done and later claims get ClaimDuplicate; when false it
	// is forgotten, so a retry of the delivery gets ClaimNew.
	Release(ctx context.Context, id string, processed bool) error
}

// MemoryDeduper is a Deduper that keeps ids in memory, for a single receiver
// process: ids are lost on restart and not shared between processes. Create
// it with NewMemoryDeduper; it is safe for concurrent use. Its memory grows
// with the number of deliveries processed within the TTL.
type MemoryDeduper struct {
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	inFlight map[string]struct{}
	done     map[string]time.Time // id -> when it is forgotten
	expiries []expiry             // done ids in the order they are forgotten
}

type expiry struct {
	id string
	at time.Time
}

// NewMemoryDeduper returns a MemoryDeduper that remembers a processed id for
// ttl. The service retries a failed delivery over about 27 hours (1 min,
// 5 min, 30 min, 2 h, 24 h), so a ttl of at least that covers automatic
// retries; manual retries can come later. It panics if ttl is not positive.
func NewMemoryDeduper(ttl time.Duration) *MemoryDeduper {
	if ttl <= 0 {
		panic("webhooks: NewMemoryDeduper with non-positive ttl")
	}
	return &MemoryDeduper{
		ttl:      ttl,
		now:      time.Now,
		inFlight: make(map[string]struct{}),
		done:     make(map[string]time.Time),
	}
}

// Claim implements Deduper. It never returns an error.
func (m *MemoryDeduper) Claim(_ context.Context, id string) (ClaimStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetExpired()
	if _, ok := m.done[id]; ok {
		return ClaimDuplicate, nil
	}
	if _, ok := m.inFlight[id]; ok {
		return ClaimInFlight, nil
	}
	m.inFlight[id] = struct{}{}
	return ClaimNew, nil
}

// Release implements Deduper. It never returns an error.
func (m *MemoryDeduper) Release(_ context.Context, id string, processed bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.inFlight, id)
	if processed {
		at := m.now().Add(m.ttl)
		m.done[id] = at
		m.expiries = append(m.expiries, expiry{id: id, at: at})
	}
	return nil
}

// forgetExpired drops the done ids whose TTL has passed. Expiries are
// appended in time order, so only the front of the queue needs looking at.
func (m *MemoryDeduper) forgetExpired() {
	now := m.now()
	n := 0
	for _, e := range m.expiries {
		if e.at.After(now) {
			break
		}
		if at, ok := m.done[e.id]; ok && at.Equal(e.at) {
			delete(m.done, e.id)
		}
		n++
	}
	clear(m.expiries[:n]) // let the ids be collected
	m.expiries = m.expiries[n:]
}
