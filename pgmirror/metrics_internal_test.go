package pgmirror

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
)

// Pauses that overlap count once: the counter is the time paused.
func TestPausesCountTheTimePaused(t *testing.T) {
	t.Parallel()
	x := NewMetrics()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	x.pause("10", now)                                                                // 0-10 s
	x.pause("5", now.Add(2*time.Second))                                              // inside: nothing more
	x.pause("10", now.Add(5*time.Second))                                             // to 15 s: 5 more
	x.pause(now.Add(40*time.Second).Format(http.TimeFormat), now.Add(30*time.Second)) // an HTTP date: 10 more
	x.pause("soon", now.Add(60*time.Second))                                          // unreadable: nothing
	x.pause("0", now.Add(70*time.Second))                                             // no pause
	assert.InDelta(t, 25, testutil.ToFloat64(x.paused), 1e-9)
}

// Without a Config.Metrics, the mirror's observations are no-ops.
func TestNilMetricsObserveNothing(t *testing.T) {
	t.Parallel()
	var x *Metrics
	x.observeLag(Invoices, 1)
	x.detach(nil)
}
