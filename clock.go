package invoicing

import (
	"context"
	"time"
)

// clock is where the pipeline reads the time and does its waiting (the
// backoff between tries, a pause after a 429, the rate limiter), so that
// tests can run those paths instantly and deterministically.
type clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx ends, whichever comes first, and
	// returns ctx's error in the second case.
	Sleep(ctx context.Context, d time.Duration) error
}

// systemClock is the real clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
