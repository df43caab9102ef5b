package redisdedup

import (
	"errors"
	"sync/atomic"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// stats are the figures a Deduper keeps for its Collector: counters bumped
// as it works, and gauges read when the Collector is scraped.
type stats struct {
	deliveries  [numOutcomes]atomic.Int64
	releases    [numResults]atomic.Int64
	redisErrors [numOps][numKinds]atomic.Int64
	held        atomic.Int64 // claims held now: Claim answered ClaimNew, Release not called yet
	deferred    atomic.Int64 // releases left to the background retries, in all
	pending     atomic.Int64 // releases left to the background retries, now
	retries     atomic.Int64 // tries of the background retries
	backoff     atomic.Int64 // their wait between tries now, in nanoseconds; 0 when none run
}

// outcome is what became of a delivery the Deduper dealt with.
type outcome int

const (
	outcomeProcessed   outcome = iota // released after the callback succeeded
	outcomeFailed                     // released after the callback failed
	outcomeDuplicate                  // already processed: acknowledged without processing
	outcomeInFlight                   // claimed elsewhere: answered 409
	outcomeUnavailable                // the claim failed or timed out: answered 500
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"processed", "failed", "duplicate", "in_flight", "unavailable"}

// releaseResult is how a claim's end went.
type releaseResult int

const (
	resultOK           releaseResult = iota // recorded
	resultLeaseExpired                      // another claim had taken the delivery
	resultGaveUp                            // Redis did not answer before the retries' time was over
	resultError                             // Redis refused the command
	numResults
)

var resultNames = [numResults]string{"ok", "lease_expired", "gave_up", "error"}

// op is a kind of command a Deduper sends.
type op int

const (
	opClaim op = iota
	opRelease
	numOps
)

var opNames = [numOps]string{"claim", "release"}

// kind tells a command Redis did not answer in time from one that failed.
type kind int

const (
	kindTimeout kind = iota
	kindError
	numKinds
)

var kindNames = [numKinds]string{"timeout", "error"}

// claimed counts a Claim answered ClaimDuplicate or ClaimInFlight.
func (s *stats) claimed(status webhooks.ClaimStatus) {
	if status == webhooks.ClaimDuplicate {
		s.deliveries[outcomeDuplicate].Add(1)
	} else {
		s.deliveries[outcomeInFlight].Add(1)
	}
}

// claimFailed counts a Claim that failed with err.
func (s *stats) claimFailed(err error) {
	s.deliveries[outcomeUnavailable].Add(1)
	s.redisError(opClaim, err)
}

// released counts a Release.
func (s *stats) released(processed bool) {
	if processed {
		s.deliveries[outcomeProcessed].Add(1)
	} else {
		s.deliveries[outcomeFailed].Add(1)
	}
}

// redisError counts a command of op that failed with err.
func (s *stats) redisError(o op, err error) {
	k := kindError
	if errors.Is(err, ErrTimeout) {
		k = kindTimeout
	}
	s.redisErrors[o][k].Add(1)
}
