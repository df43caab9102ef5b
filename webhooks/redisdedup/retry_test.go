package redisdedup_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// A callback that fails twice then succeeds, behind three replicas fed by
// the fake service: the service retries on its schedule (1 min, then 5 min),
// each attempt reaching another replica; the delivery is processed once and
// the service's log keeps the two failed attempts.
func TestFailingTwiceThenSucceedingThroughServiceRetries(t *testing.T) {
	clock := invoicingtest.NewFakeClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	srv := invoicingtest.NewTestServer(t, invoicingtest.WithClock(clock))

	var c *cluster
	var turn atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.replicas[int(turn.Add(1))%len(c.replicas)].ServeHTTP(w, r) // round robin
	}))
	t.Cleanup(front.Close)
	ep := srv.AddWebhookEndpoint(front.URL)
	v, err := webhooks.NewVerifier(ep.Secret(), webhooks.WithClock(clock.Now))
	require.NoError(t, err)

	var runs, failures atomic.Int32
	c = newCluster(t, v, 3, func(context.Context, *webhooks.Delivery) error {
		if runs.Add(1) <= 2 {
			failures.Add(1)
			return errors.New("downstream system unavailable")
		}
		return nil
	})

	srv.AddClient(invoicingtest.Contact{Name: "Retry Pty Ltd"}) // fires contact.created
	clock.Advance(time.Minute)
	clock.Advance(5 * time.Minute)
	clock.Advance(48 * time.Hour) // nothing more is sent

	deliveries := ep.Deliveries()
	require.Len(t, deliveries, 1)
	d := deliveries[0]
	assert.Equal(t, invoicingtest.DeliverySucceeded, d.Status)
	var statuses []int
	for _, a := range d.Attempts {
		statuses = append(statuses, a.StatusCode)
	}
	assert.Equal(t, []int{500, 500, 200}, statuses)
	assert.Equal(t, int32(2), failures.Load(), "the failure count")
	assert.Equal(t, 1, c.processed.Count(d.ID), "processed once")

	// A copy of the delivery (a manual resend) to any replica is
	// acknowledged without running the callback again.
	req, err := webhooks.TestDelivery{Secret: ep.Secret(), Type: webhooks.EventContactCreated, DeliveryID: d.ID,
		Timestamp: clock.Now(), Body: d.Body}.Request("/webhooks")
	require.NoError(t, err)
	w := httptest.NewRecorder()
	c.replicas[0].ServeHTTP(w, req)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, int32(3), runs.Load())
}
