package redisdedup_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// The Handler's answers with a Redis Deduper shared by two replicas: 409
// while the other replica processes, 200 without processing once done, and
// a retry processed after a failure or a panic.
func TestHandlerAcrossReplicas(t *testing.T) {
	d := webhooktest.Deliveries(1)[0]

	entered, proceed := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	var mode atomic.Value // "block", "fail", "panic" or "ok"
	mode.Store("block")
	fn := func(context.Context, *webhooks.Delivery) error {
		calls.Add(1)
		switch mode.Load() {
		case "block":
			close(entered)
			<-proceed
			return errors.New("the first attempt fails")
		case "panic":
			panic("the callback panics")
		}
		return nil
	}
	c := newCluster(t, server.Addr, nil, 2, fn)
	replicaA, replicaB := c.replicas[0], c.replicas[1]

	first := make(chan int)
	go func() { first <- d.Send(replicaA) }()
	<-entered
	assert.Equal(t, http.StatusConflict, d.Send(replicaB), "in flight on the other replica")
	close(proceed)
	assert.Equal(t, http.StatusInternalServerError, <-first)

	mode.Store("panic")
	assert.Equal(t, http.StatusInternalServerError, d.Send(replicaB), "the Handler recovers the panic")

	mode.Store("ok")
	assert.Equal(t, http.StatusOK, d.Send(replicaA), "processed after a failure and a panic")
	assert.Equal(t, http.StatusOK, d.Send(replicaB), "a duplicate is acknowledged")
	assert.Equal(t, http.StatusOK, d.Send(replicaA))
	require.Equal(t, int32(3), calls.Load(), "failure, panic, success; the duplicates are not processed")
}

// Three replicas receive the same 200 deliveries five times each, 32 at a
// time, in random order: each delivery is processed exactly once.
func TestThreeReplicasProcessEachDeliveryExactlyOnce(t *testing.T) {
	c := newCluster(t, server.Addr, nil, 3, nil)
	deliveries := webhooktest.Deliveries(200)
	attempts := webhooktest.Attempts(deliveries, 5)

	statuses, conflicts := webhooktest.Storm{Handlers: c.replicas, Concurrency: 32, RetryConflicts: true}.Run(attempts)
	t.Logf("%d attempts, %d answered 409 (in flight elsewhere) and sent again", len(attempts), conflicts)

	for i, s := range statuses {
		require.Equal(t, http.StatusOK, s, "attempt %d of %s", i, attempts[i].ID)
	}
	require.Equal(t, len(deliveries), c.processed.Len(), "deliveries processed")
	for _, d := range deliveries {
		assert.Equal(t, 1, c.processed.Count(d.ID), "delivery %s", d.ID)
	}
}

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
	c = newCluster(t, server.Addr, v, 3, func(context.Context, *webhooks.Delivery) error {
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

// One endpoint for many businesses, on two replicas sharing Redis: a
// delivery id is processed once per business, whichever replica receives
// it, and two businesses' deliveries with the same id are two deliveries.
func TestBusinessHandlerDeduplicatesEachBusinessApart(t *testing.T) {
	secrets := map[string]string{
		"acme":   "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
		"globex": "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1",
	}
	lookup := func(_ context.Context, business string) (*webhooks.Verifier, error) {
		s, ok := secrets[business]
		if !ok {
			return nil, fmt.Errorf("%w: %s", webhooks.ErrUnknownBusiness, business)
		}
		return webhooks.NewVerifier(s)
	}
	var mu sync.Mutex
	processed := map[string]int{} // business/delivery id -> calls
	fn := func(_ context.Context, d *webhooks.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		processed[d.Business+"/"+d.ID]++
		return nil
	}
	p := prefix(t)
	replicas := make([]http.Handler, 2)
	for i := range replicas {
		mux := http.NewServeMux()
		mux.Handle("POST /webhooks/{business}", webhooks.BusinessHandler(lookup, fn,
			webhooks.WithDeduper(redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p)))))
		replicas[i] = mux
	}
	body, err := webhooks.SampleBody(webhooks.EventInvoicePaid, time.Now())
	require.NoError(t, err)
	send := func(replica int, business, id, secret string) int {
		t.Helper()
		r, err := webhooks.TestDelivery{Secret: secret, Type: webhooks.EventInvoicePaid, DeliveryID: id, Body: body}.Request("/webhooks/" + business)
		require.NoError(t, err)
		w := httptest.NewRecorder()
		replicas[replica].ServeHTTP(w, r)
		return w.Code
	}

	for replica := range 2 { // each delivery twice, once on each replica
		assert.Equal(t, http.StatusOK, send(replica, "acme", "dlv-1", secrets["acme"]))
		assert.Equal(t, http.StatusOK, send(replica, "globex", "dlv-1", secrets["globex"]))
		assert.Equal(t, http.StatusOK, send(replica, "acme", "dlv-2", secrets["acme"]))
	}
	assert.Equal(t, http.StatusUnauthorized, send(0, "globex", "dlv-3", secrets["acme"]), "acme's signature on globex's URL")
	assert.Equal(t, map[string]int{"acme/dlv-1": 1, "globex/dlv-1": 1, "acme/dlv-2": 1}, processed)
}
