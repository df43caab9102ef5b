package invoicingtest

import (
	"context"
	"math/rand/v2"
	"time"
)

// latency is the delay the server adds to every API request: base plus a
// uniformly random extra in [0, jitter].
type latency struct {
	base, jitter time.Duration
}

// WithLatency makes the server wait base plus a random extra in [0, jitter]
// (uniform) before it answers each API request, as a network round trip
// would, so that examples, tests and benchmarks show the effect of
// concurrent requests without a real network. Requests wait in parallel: 8
// concurrent requests with 20 ms of latency take about 20 ms in all. The
// wait is wall-clock time whatever the server's Clock, and ends early when
// the client goes away (see SetLatency). Webhook deliveries are not delayed.
// It panics on a negative duration. The default is no latency.
func WithLatency(base, jitter time.Duration) Option {
	checkLatency(base, jitter)
	return func(cfg *config) { cfg.latency = latency{base, jitter} }
}

// SetLatency changes the latency of later requests, as WithLatency sets it
// (SetLatency(0, 0) removes it); requests already waiting keep their delay.
// A request whose client goes away (its context is cancelled) during the
// wait is dropped: it is not handled, not logged by Requests and uses up no
// injected fault. It panics on a negative duration.
func (s *Server) SetLatency(base, jitter time.Duration) {
	checkLatency(base, jitter)
	s.latency.Store(&latency{base, jitter})
}

func checkLatency(base, jitter time.Duration) {
	if base < 0 || jitter < 0 {
		panic("invoicingtest: latency and jitter must not be negative")
	}
}

// delay draws one request's delay.
func (l *latency) delay() time.Duration {
	if l.jitter == 0 {
		return l.base
	}
	return l.base + rand.N(l.jitter+1)
}

// wait sleeps for one request's delay, without holding s.mu. It reports
// false when ctx ended first.
func (s *Server) wait(ctx context.Context) bool {
	d := s.latency.Load().delay()
	if d == 0 {
		return true
	}
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
