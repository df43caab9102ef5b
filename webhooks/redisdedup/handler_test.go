package redisdedup_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// The Handler's answers with a Redis Deduper shared by two replicas: 409
// while the other replica processes, 200 without processing once done, and
// a retry processed after a failure or a panic.
func TestHandlerAcrossReplicas(t *testing.T) {
	p := prefix(t)
	v := webhooktest.NewVerifier(t)
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
	replicaA := webhooks.Handler(v, fn, webhooks.WithDeduper(redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p))))
	replicaB := webhooks.Handler(v, fn, webhooks.WithDeduper(redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p))))

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
